"""A pids cgroup per sandboxed call: the process cap that also binds root.

``RLIMIT_NPROC`` is not enforced for uid 0 (the kernel exempts the root user), so when the
agent runs as root the cap on processes comes from a child of the agent's own pids cgroup
(cgroup v1 ``pids`` hierarchy, or cgroup v2 with ``pids`` delegated to its cgroup).
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import time
import uuid
from pathlib import Path

logger = logging.getLogger(__name__)

_REMOVE_TRIES = 100
_REMOVE_PAUSE_S = 0.02


@functools.cache
def pids_cgroup_parent() -> Path | None:
    """Return the writable pids cgroup this process belongs to, or None when there is none."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
        memberships = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for mount_root, mount_point, fstype, options in _cgroup_mounts(mounts):
        own = _own_path(memberships, v2=fstype == "cgroup2")
        if own is None or (fstype == "cgroup" and "pids" not in options):
            continue
        relative = os.path.relpath(own, mount_root) if own.startswith(mount_root) else None
        if relative is None or relative.startswith(".."):
            continue
        parent = Path(mount_point, relative).resolve()
        if fstype == "cgroup2" and not _delegates_pids(parent):
            continue
        if (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK):
            return parent
    return None


def create_pids_cgroup(parent: Path, max_pids: int) -> Path:
    """Create a fresh child of ``parent`` holding at most ``max_pids`` tasks; return it.

    Raises:
        OSError: the cgroup could not be created or limited.
    """
    group = parent / f"noema-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(max_pids), encoding="ascii")
    except OSError:
        group.rmdir()
        raise
    return group


def remove_cgroup(group: Path) -> None:
    """Kill what is left in ``group`` and remove it; log when it stays busy.

    In the sandbox the PID namespace has already died with its first process; this also
    ends the descendants of a command run with ``allow_unsandboxed=True``.
    """
    for _ in range(_REMOVE_TRIES):
        _kill_tasks(group)
        try:
            group.rmdir()
        except FileNotFoundError:
            return
        except OSError:  # EBUSY: tasks still exiting
            time.sleep(_REMOVE_PAUSE_S)
        else:
            return
    logger.warning("could not remove cgroup %s: tasks still present", group)


def _kill_tasks(group: Path) -> None:
    try:
        pids = (group / "cgroup.procs").read_text(encoding="ascii").split()
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            continue


def _cgroup_mounts(lines: list[str]) -> list[tuple[str, str, str, set[str]]]:
    """Return (root, mount point, fstype, super options) of each cgroup mount in mountinfo."""
    found: list[tuple[str, str, str, set[str]]] = []
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in {"cgroup", "cgroup2"}:
            found.append((fields[3], fields[4], rest[0], set(rest[2].split(","))))
    return found


def _own_path(memberships: list[str], *, v2: bool) -> str | None:
    """Return this process's path in the pids hierarchy (v1) or the unified one (v2)."""
    for line in memberships:
        _id, controllers, path = line.split(":", 2)
        if (v2 and controllers == "") or (not v2 and "pids" in controllers.split(",")):
            return path
    return None


def _delegates_pids(group: Path) -> bool:
    try:
        return "pids" in (group / "cgroup.subtree_control").read_text(encoding="ascii").split()
    except OSError:
        return False
