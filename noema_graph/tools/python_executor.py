"""The ``python_executor`` toolkit: run Python code in a fresh interpreter inside the sandbox.

The child is ``sys.executable -I`` (isolated: no user site, no PYTHON* variables) run under
bubblewrap like ``bash`` (see :mod:`noema_graph.tools.jail`): only the working directory is
writable, the network is off in the kernel (its own empty network namespace) unless the
toolkit allows it *and* the run grants ``net:outbound``, and memory, CPU time, processes, file
size and output are capped. A prelude also makes blocked sockets fail with a readable
message; that is a courtesy, not the guard.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, Field

from noema_graph.tools._process import outcome_data
from noema_graph.tools.jail import SandboxPolicy, run_sandboxed, sandbox_available
from noema_graph.tools.spec import ToolContext, ToolSpec

DEFAULT_MEMORY_LIMIT_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 64_000
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024

_PRELUDE = """
import sys
if not {net}:
    import socket
    def _blocked(*args, **kwargs):
        raise PermissionError("network access is disabled in python_executor")
    socket.socket.connect = _blocked
    socket.socket.connect_ex = _blocked
    socket.create_connection = _blocked
    socket.getaddrinfo = _blocked
    del socket, _blocked
_code = sys.stdin.read()
sys.stdin = open("/dev/null")
exec(compile(_code, "<python_executor>", "exec"), {{"__name__": "__main__"}})
"""


class PythonArgs(BaseModel):
    """Arguments of ``python_executor``."""

    code: str = Field(description="Python source to run; print() what you want to see.")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds before the run is killed (capped)."
    )


DESCRIPTION = (
    "Run Python 3 code in a fresh, resource-limited interpreter whose working "
    "directory is the sandbox; returns exit code and stdout/stderr."
)


def python_executor_tools(
    *,
    memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    allow_network: bool = False,
    policy: SandboxPolicy | None = None,
    allow_unsandboxed: bool = False,
    read_paths: Sequence[str] = (),
) -> list[ToolSpec]:
    """Return the ``python_executor`` toolkit's spec.

    Args:
        memory_limit_bytes: Address-space limit of each process.
        max_output_bytes: Output kept; the rest is read and dropped.
        max_file_bytes: Largest file the child may write.
        allow_network: Give the sandbox the network (the run must grant ``net:outbound``).
        policy: Other sandbox limits; its memory and file limits are replaced by the above.
        allow_unsandboxed: Without bubblewrap, run with limits only (not sandbox_unavailable).
        read_paths: More files or folders the code may read (read-only), added to the
            policy's.

    Raises:
        ConfigurationError: a ``read_paths`` entry does not exist (naming it).
    """
    base = policy or SandboxPolicy()
    limits = replace(
        base,
        memory_bytes=memory_limit_bytes,
        max_file_bytes=max_file_bytes,
        read_paths=(*base.read_paths, *read_paths),
    )

    def python_executor(
        code: str, timeout_s: float | None, context: ToolContext
    ) -> dict[str, object]:
        """Run ``code`` in a fresh interpreter and return its exit code and output."""
        limit = min(timeout_s or context.timeout_s, context.timeout_s)
        network = allow_network and "net:outbound" in context.permissions
        outcome = run_sandboxed(
            [sys.executable, "-I", "-c", _PRELUDE.format(net=network)],
            root=context.working_directory.resolve(),
            timeout_s=limit,
            max_output_bytes=max_output_bytes,
            policy=limits,
            network=network,
            stdin_data=code.encode("utf-8"),
            sandboxed=not allow_unsandboxed or sandbox_available(),
        )
        return outcome_data(outcome, what="python code", limit=limit)

    spec = ToolSpec(
        name="python_executor",
        description=DESCRIPTION,
        input_schema=PythonArgs,
        handler=python_executor,
        permission="shell:execute",
        idempotency="non_idempotent",
    )
    return [spec]
