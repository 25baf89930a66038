"""``search_files``: a regular expression over the text files under a directory.

Patterns run on RE2 (``google-re2``), whose matching time is linear in the input, so a
catastrophic pattern such as ``(a+)+$`` costs what a plain one costs. RE2 refuses what it
cannot match in linear time (backreferences, lookaround); the error says so. The walk uses
directory descriptors (``os.fwalk``) and opens files with ``O_NOFOLLOW``, reads at most
:data:`MAX_SEARCH_FILE_BYTES` of a file, and stops at the call's deadline with the matches
found so far.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
import time
from typing import Any

import re2

from noema_graph.tools.results import ToolFailure
from noema_graph.tools.sandbox import open_inside, relative_path
from noema_graph.tools.spec import ToolContext

MAX_SEARCH_MATCHES = 200
MAX_SEARCH_FILE_BYTES = 2_000_000
DEADLINE_SHARE = 0.9
"""Share of the call's timeout the walk may use before it returns what it found."""

RE2_SYNTAX = "https://github.com/google/re2/wiki/Syntax"


def compile_pattern(pattern: str) -> Any:
    """Compile ``pattern`` with RE2.

    Raises:
        ToolFailure: ``invalid_input`` naming the pattern, RE2's reason and the fix.
    """
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ToolFailure(
            f"invalid pattern {pattern!r}: {reason} (patterns use RE2 syntax, matched in "
            f"linear time: no backreferences or lookaround; see {RE2_SYNTAX})",
            type_="invalid_input",
        ) from None


def search_files(pattern: str, path: str, glob: str, context: ToolContext) -> dict[str, object]:
    """Search file contents under a directory for a regular expression."""
    regex = compile_pattern(pattern)
    base = relative_path(path)
    deadline = time.monotonic() + context.timeout_s * DEADLINE_SHARE
    matches: list[dict[str, object]] = []
    base_fd = open_inside(context.working_directory, path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        walk = os.fwalk(".", dir_fd=base_fd, follow_symlinks=False)
        for folder, dirs, files, folder_fd in walk:
            dirs.sort()
            for name in sorted(files):
                if time.monotonic() > deadline:
                    return {"matches": matches, "truncated": True, "timed_out": True}
                if not fnmatch.fnmatch(name, glob):
                    continue
                shown = posixpath.normpath(posixpath.join(base, folder, name))
                for number, line in enumerate(_text_lines(folder_fd, name), start=1):
                    if regex.search(line):
                        matches.append({"path": shown, "line": number, "text": line[:300]})
                        if len(matches) >= MAX_SEARCH_MATCHES:
                            return {"matches": matches, "truncated": True}
    finally:
        os.close(base_fd)
    return {"matches": matches, "truncated": False}


def _text_lines(folder_fd: int, name: str) -> list[str]:
    """Return the lines of a small regular text file; [] for symlinks, binaries, big files."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    except OSError:  # a symlink (ELOOP), or gone since the listing
        return []
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SEARCH_FILE_BYTES:
            return []
        data = handle.read(MAX_SEARCH_FILE_BYTES + 1)
    if len(data) > MAX_SEARCH_FILE_BYTES or b"\x00" in data[:8192]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()
