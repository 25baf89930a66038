"""Which process wrote a checkpoint, and whether it is still alive.

The SQLite savers write :func:`writer` (pid, host name, process start time) into each
checkpoint's run summary. :func:`ended` then tells a run whose process died mid-run
(SIGKILL, a crash, a power cut: nothing could mark the thread) from a live one: on the same
host, the pid no longer exists or now belongs to a process started at another time. On
another host nothing can be known, so the run counts as alive.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from functools import cache
from pathlib import Path


def _stat(pid: int) -> tuple[str, int] | None:
    """Return process ``pid``'s state letter and start time (clock ticks since boot).

    Read from ``/proc/<pid>/stat`` (Linux); None on systems without it or for a pid that
    does not exist.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after it
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])  # fields 3 and 22 of the file


def start_time(pid: int) -> int | None:
    """Return when process ``pid`` started (clock ticks since boot), or None where unknown."""
    found = _stat(pid)
    return None if found is None else found[1]


@cache
def writer() -> dict[str, object]:
    """Return this process's identity: ``pid``, ``host`` and ``start`` (see :func:`start_time`)."""
    pid = os.getpid()
    return {"pid": pid, "host": socket.gethostname(), "start": start_time(pid)}


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def ended(info: Mapping[str, object] | None) -> bool:
    """Return True when the process ``info`` describes has certainly ended.

    False when it is alive, runs on another host, or ``info`` says too little.
    """
    if not info or info.get("host") != socket.gethostname():
        return False
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return info.get("start") != writer()["start"]
    if not _exists(pid):
        return True
    found = _stat(pid)
    if found is None:
        return False  # no /proc: the pid exists, nothing more is known
    state, started = found
    return state == "Z" or info.get("start") not in (None, started)  # a zombie, or pid reused
