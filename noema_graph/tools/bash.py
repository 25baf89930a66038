"""The ``bash`` toolkit: one shell command per call, confined to the working directory.

Needs ``shell:execute``. The command runs in its own session with ``cwd`` and ``HOME`` set to
the working directory and a minimal environment (no API keys leak); on timeout the whole
process group is killed. This confines the *start*, not the reach: a granted shell can still
touch anything the user can. See SECURITY.md.
"""

from __future__ import annotations

import os
import shutil

from pydantic import BaseModel, Field

from noema_graph.tools._process import outcome_data, run_confined
from noema_graph.tools.results import ToolFailure
from noema_graph.tools.spec import ToolContext, ToolSpec

DEFAULT_MAX_OUTPUT_BYTES = 64_000


class BashArgs(BaseModel):
    """Arguments of ``bash``."""

    command: str = Field(description="Shell command line, run with bash -c.")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds before the command is killed (capped)."
    )


def minimal_env(home: str) -> dict[str, str]:
    """Return the environment children get: PATH, a UTF-8 locale and ``HOME``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": home,
    }


def bash_tools(*, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> list[ToolSpec]:
    """Return the ``bash`` toolkit's spec, keeping at most ``max_output_bytes`` of output."""
    shell = shutil.which("bash") or "/bin/sh"

    def bash(command: str, timeout_s: float | None, context: ToolContext) -> dict[str, object]:
        """Run ``command`` in the working directory."""
        if not command.strip():
            raise ToolFailure("field 'command' is empty", type_="invalid_input")
        limit = min(timeout_s or context.timeout_s, context.timeout_s)
        root = context.working_directory.resolve()
        outcome = run_confined(
            [shell, "-c", command],
            cwd=root,
            timeout_s=limit,
            max_output_bytes=max_output_bytes,
            env=minimal_env(str(root)),
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
