"""The ``bash`` toolkit: one shell command per call, in a sandbox rooted at the working directory.

Needs ``shell:execute``. The command runs under bubblewrap (see :mod:`noema_graph.tools.jail`):
only the working directory is writable, ``/proc`` shows the sandbox's own processes, the
network is off unless the toolkit allows it *and* the run grants ``net:outbound``, the
environment is an allow-list (no API keys), and memory, CPU time, processes, file size and
output are capped. Every process the command started is killed when the call ends.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, Field

from noema_graph.tools._process import outcome_data
from noema_graph.tools.jail import SandboxPolicy, run_sandboxed, sandbox_available
from noema_graph.tools.results import ToolFailure
from noema_graph.tools.spec import ToolContext, ToolSpec

DEFAULT_MAX_OUTPUT_BYTES = 64_000


class BashArgs(BaseModel):
    """Arguments of ``bash``."""

    command: str = Field(description="Shell command line, run with bash -c.")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds before the command is killed (capped)."
    )


def bash_tools(
    *,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    policy: SandboxPolicy | None = None,
    allow_network: bool = False,
    allow_unsandboxed: bool = False,
    read_paths: Sequence[str] = (),
) -> list[ToolSpec]:
    """Return the ``bash`` toolkit's spec.

    Args:
        max_output_bytes: Output kept; the rest is read and dropped.
        policy: Sandbox limits (default: :class:`SandboxPolicy`'s).
        allow_network: Give the sandbox the host's network; the run must also grant
            ``net:outbound``.
        allow_unsandboxed: Run commands without the sandbox (resource limits only) where
            bubblewrap cannot start; otherwise such calls answer ``sandbox_unavailable``.
        read_paths: More files or folders the commands may read (read-only), added to the
            policy's. By default a command sees only the working directory, the system
            directories and the Python environment.

    Raises:
        ConfigurationError: a ``read_paths`` entry does not exist (naming it).
    """
    shell = shutil.which("bash") or "/bin/sh"
    base = policy or SandboxPolicy()
    limits = replace(base, read_paths=(*base.read_paths, *read_paths))

    def bash(command: str, timeout_s: float | None, context: ToolContext) -> dict[str, object]:
        """Run ``command`` in the working directory."""
        if not command.strip():
            raise ToolFailure("field 'command' is empty", type_="invalid_input")
        limit = min(timeout_s or context.timeout_s, context.timeout_s)
        outcome = run_sandboxed(
            [shell, "-c", command],
            root=context.working_directory.resolve(),
            timeout_s=limit,
            max_output_bytes=max_output_bytes,
            policy=limits,
            network=allow_network and "net:outbound" in context.permissions,
            sandboxed=not allow_unsandboxed or sandbox_available(),
        )
        return outcome_data(outcome, what="command", limit=limit)

    return [
        ToolSpec(
            name="bash",
            description=(
                "Run a bash command in the working directory and return its exit code and "
                "combined stdout/stderr."
            ),
            input_schema=BashArgs,
            handler=bash,
            permission="shell:execute",
            idempotency="non_idempotent",
        )
    ]
