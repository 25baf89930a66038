"""The ``python_executor`` toolkit: run Python code in a separate, limited interpreter.

The child is ``sys.executable -I`` (isolated: no user site, no PYTHON* variables) in its own
session, with ``cwd`` set to the working directory, a wall-clock timeout (whole group killed),
``RLIMIT_AS`` (memory), ``RLIMIT_CPU`` and ``RLIMIT_FSIZE`` set by a prelude before the code
runs, and sockets disabled unless network is allowed. These are resource limits, not a
security sandbox; see SECURITY.md.
"""

from __future__ import annotations

import sys

from pydantic import BaseModel, Field

from noema_graph.tools._process import outcome_data, run_confined
from noema_graph.tools.bash import minimal_env
from noema_graph.tools.spec import ToolContext, ToolSpec

DEFAULT_MEMORY_LIMIT_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 64_000
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024

_PRELUDE = """
import resource, sys
_mem, _cpu, _fsize, _net = {mem}, {cpu}, {fsize}, {net}
resource.setrlimit(resource.RLIMIT_AS, (_mem, _mem))
resource.setrlimit(resource.RLIMIT_CPU, (_cpu, _cpu))
resource.setrlimit(resource.RLIMIT_FSIZE, (_fsize, _fsize))
if not _net:
    import socket
    def _blocked(*args, **kwargs):
        raise PermissionError("network access is disabled in python_executor")
    socket.socket.connect = _blocked
    socket.socket.connect_ex = _blocked
    socket.socket.sendto = _blocked
    socket.create_connection = _blocked
    socket.getaddrinfo = _blocked
_code = sys.stdin.read()
sys.stdin = open("/dev/null")
del resource, _mem, _cpu, _fsize, _net
exec(compile(_code, "<python_executor>", "exec"), {{"__name__": "__main__"}})
"""


class PythonArgs(BaseModel):
    """Arguments of ``python_executor``."""

    code: str = Field(description="Python source to run; print() what you want to see.")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds before the run is killed (capped)."
    )


def python_executor_tools(
    *,
    memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    allow_network: bool = False,
) -> list[ToolSpec]:
    """Return the ``python_executor`` toolkit's spec.

    Args:
        memory_limit_bytes: Address-space limit of the child.
        max_output_bytes: Output kept; the rest is read and dropped.
        max_file_bytes: Largest file the child may write.
        allow_network: Leave sockets working; the run must also grant ``net:outbound``.
    """

    def python_executor(
        code: str, timeout_s: float | None, context: ToolContext
    ) -> dict[str, object]:
        """Run ``code`` in a fresh interpreter and return its exit code and output."""
        limit = min(timeout_s or context.timeout_s, context.timeout_s)
        network = allow_network and "net:outbound" in context.permissions
        prelude = _PRELUDE.format(
            mem=memory_limit_bytes,
            cpu=int(limit) + 1,
            fsize=max_file_bytes,
            net=network,
        )
        root = context.working_directory.resolve()
        outcome = run_confined(
            [sys.executable, "-I", "-c", prelude],
            cwd=root,
            timeout_s=limit,
            max_output_bytes=max_output_bytes,
            env=minimal_env(str(root)),
            stdin_data=code.encode("utf-8"),
        )
        return outcome_data(outcome, what="python code", limit=limit)

    return [
        ToolSpec(
            name="python_executor",
            description=(
                "Run Python 3 code in a fresh, resource-limited interpreter whose working "
                "directory is the sandbox; returns exit code and stdout/stderr."
            ),
            input_schema=PythonArgs,
            handler=python_executor,
            permission="shell:execute",
            idempotency="non_idempotent",
        )
    ]
