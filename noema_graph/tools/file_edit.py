"""The ``file_edit`` toolkit: read, write, list and search files inside the working directory.

Every file is opened beneath a descriptor of the working directory (:func:`open_inside`,
``openat2`` with ``RESOLVE_BENEATH``), so a symlink swapped in mid-call cannot lead outside.
Writes also refuse a final symlink (``O_NOFOLLOW``), special files and files hard-linked from
elsewhere; reads stop at the requested size before reading more.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from noema_graph.config import Permission
from noema_graph.tools.file_search import search_files
from noema_graph.tools.results import ToolFailure
from noema_graph.tools.sandbox import make_dirs_inside, open_inside, path_error, relative_path
from noema_graph.tools.spec import Idempotency, ToolContext, ToolSpec

MAX_READ_CHARS = 200_000
MAX_LIST_ENTRIES = 500
_MAX_UTF8_BYTES = 4


class ReadFileArgs(BaseModel):
    """Arguments of ``read_file``."""

    path: str = Field(description="File path relative to the working directory.")
    max_chars: int = Field(default=MAX_READ_CHARS, ge=1, le=MAX_READ_CHARS)


class WriteFileArgs(BaseModel):
    """Arguments of ``write_file``."""

    path: str = Field(description="File path relative to the working directory.")
    content: str = Field(description="Full new content of the file (UTF-8).")
    append: bool = Field(default=False, description="Append instead of overwriting.")


class ListDirArgs(BaseModel):
    """Arguments of ``list_dir``."""

    path: str = Field(default=".", description="Directory relative to the working directory.")


class SearchFilesArgs(BaseModel):
    """Arguments of ``search_files``."""

    pattern: str = Field(description="Regular expression (RE2 syntax) searched line by line.")
    path: str = Field(default=".", description="Directory to search, relative.")
    glob: str = Field(default="*", description="Only files whose name matches, e.g. '*.py'.")


def read_file(path: str, max_chars: int, context: ToolContext) -> dict[str, object]:
    """Return the text of a file inside the working directory (at most ``max_chars`` of it)."""
    fd = open_inside(context.working_directory, path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolFailure(f"no file at {path!r}", type_="not_found", details={"path": path})
        data = handle.read(max_chars * _MAX_UTF8_BYTES + _MAX_UTF8_BYTES)
    text = data.decode("utf-8", errors="replace")
    return {
        "path": relative_path(path),
        "content": text[:max_chars],
        "truncated": len(text) > max_chars or info.st_size > len(data),
        "chars": len(text),
        "bytes": info.st_size,
    }


def write_file(path: str, content: str, append: bool, context: ToolContext) -> dict[str, object]:
    """Write (or append to) a file inside the working directory, creating parent folders."""
    relative = relative_path(path)
    folder, name = posixpath.split(relative)
    if name in {"", ".", ".."}:
        raise ToolFailure(f"{path!r} is a directory", type_="invalid_input")
    data = content.encode("utf-8")
    folder_fd = make_dirs_inside(context.working_directory, folder or ".")
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags | (os.O_APPEND if append else 0), 0o644, dir_fd=folder_fd)
    except OSError as exc:
        raise path_error(path, exc) from None
    finally:
        os.close(folder_fd)
    with os.fdopen(fd, "wb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolFailure(f"{path!r} is not a regular file", type_="invalid_input")
        if info.st_nlink > 1:
            raise ToolFailure(
                f"refusing to write {path!r}: it is hard-linked from elsewhere",
                type_="path_outside_workdir",
            )
        if not append:
            handle.truncate(0)
        handle.write(data)
    return {"path": relative, "bytes_written": len(data)}


def list_dir(path: str, context: ToolContext) -> dict[str, object]:
    """List a directory inside the working directory (symlinks are shown, not followed)."""
    fd = open_inside(context.working_directory, path, os.O_RDONLY | os.O_DIRECTORY)
    entries: list[dict[str, object]] = []
    try:  # DirEntry.stat() and is_dir() use the descriptor: keep it open until done
        with os.scandir(fd) as listing:
            found = sorted(listing, key=lambda e: e.name)
        for entry in found[:MAX_LIST_ENTRIES]:
            kind = "symlink" if entry.is_symlink() else "dir" if entry.is_dir() else "file"
            size = entry.stat(follow_symlinks=False).st_size if kind == "file" else None
            entries.append({"name": entry.name, "type": kind, "size": size})
    finally:
        os.close(fd)
    return {
        "path": relative_path(path),
        "entries": entries,
        "truncated": len(found) > MAX_LIST_ENTRIES,
    }


def file_edit_tools() -> list[ToolSpec]:
    """Return the ``file_edit`` toolkit's specs."""
    table: list[tuple[str, str, type[BaseModel], Callable[..., Any], Permission, Idempotency]] = [
        ("read_file", "Read a UTF-8 text file inside the working directory.",
         ReadFileArgs, read_file, "fs:read", "safe"),
        ("write_file", "Create or overwrite (or append to) a text file in the working directory.",
         WriteFileArgs, write_file, "fs:write", "non_idempotent"),
        ("list_dir", "List the entries of a directory inside the working directory.",
         ListDirArgs, list_dir, "fs:read", "safe"),
        ("search_files", "Search text files under a directory for a regular expression.",
         SearchFilesArgs, search_files, "fs:read", "safe"),
    ]  # fmt: skip
    return [
        ToolSpec(name=n, description=d, input_schema=s, handler=h, permission=p, idempotency=i)
        for n, d, s, h, p, i in table
    ]
