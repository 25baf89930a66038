"""Set resource limits, join a pids cgroup, then exec the command (``python -I -S _launch.py``).

Usage: ``_launch.py SPEC COMMAND...`` where SPEC is JSON: ``{"rlimits": {"RLIMIT_AS": n, ...},
"cgroup_procs": path or null}``. It runs in the child process between ``fork`` and the sandbox,
so the limits bind ``bwrap`` and everything it starts, without a ``preexec_fn`` in the agent's
(threaded) process. Standard library only: it is run as a script, not imported.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys


def main(argv: list[str]) -> None:
    """Apply the spec in ``argv[1]`` to this process, then replace it with ``argv[2:]``."""
    spec = json.loads(argv[1])
    for name, value in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    procs = spec.get("cgroup_procs")
    if procs:
        with open(procs, "w", encoding="ascii") as handle:
            handle.write(str(os.getpid()))
    # Python ignores SIGPIPE and SIGXFSZ; an ignored signal stays ignored across exec.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    command = argv[2:]
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
