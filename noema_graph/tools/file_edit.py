"""The ``file_edit`` toolkit: read, write, list and search files inside the working directory.

Every path goes through :func:`resolve_inside`; writes also refuse to follow a final
symlink (``O_NOFOLLOW``) and to modify a file hard-linked from elsewhere.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from noema_graph.tools.results import ToolFailure
from noema_graph.tools.sandbox import display_path, resolve_inside
from noema_graph.tools.spec import ToolContext, ToolSpec

MAX_READ_CHARS = 200_000
MAX_LIST_ENTRIES = 500
MAX_SEARCH_MATCHES = 200
MAX_SEARCH_FILE_BYTES = 2_000_000


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

    pattern: str = Field(description="Regular expression searched line by line.")
    path: str = Field(default=".", description="Directory to search, relative.")
    glob: str = Field(default="*", description="Only files whose name matches, e.g. '*.py'.")


def read_file(path: str, max_chars: int, context: ToolContext) -> dict[str, object]:
    """Return the text of a file inside the working directory."""
    target = resolve_inside(context.working_directory, path)
    if not target.is_file():
        raise ToolFailure(f"no file at {path!r}", type_="not_found", details={"path": path})
    text = target.read_text(encoding="utf-8", errors="replace")
    return {
        "path": display_path(context.working_directory, target),
        "content": text[:max_chars],
        "truncated": len(text) > max_chars,
        "chars": len(text),
    }


def write_file(path: str, content: str, append: bool, context: ToolContext) -> dict[str, object]:
    """Write (or append to) a file inside the working directory, creating parent folders."""
    target = resolve_inside(context.working_directory, path)
    if target.is_dir():
        raise ToolFailure(f"{path!r} is a directory", type_="invalid_input")
    if target.exists() and target.stat().st_nlink > 1:
        raise ToolFailure(
            f"refusing to write {path!r}: it is hard-linked from elsewhere",
            type_="path_outside_workdir",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    data = content.encode("utf-8")
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return {"path": display_path(context.working_directory, target), "bytes_written": len(data)}


def list_dir(path: str, context: ToolContext) -> dict[str, object]:
    """List a directory inside the working directory (symlinks are shown, not followed)."""
    target = resolve_inside(context.working_directory, path)
    if not target.is_dir():
        raise ToolFailure(f"no directory at {path!r}", type_="not_found", details={"path": path})
    entries: list[dict[str, object]] = []
    for entry in sorted(os.scandir(target), key=lambda e: e.name):
        kind = "symlink" if entry.is_symlink() else "dir" if entry.is_dir() else "file"
        size = entry.stat(follow_symlinks=False).st_size if kind == "file" else None
        entries.append({"name": entry.name, "type": kind, "size": size})
        if len(entries) >= MAX_LIST_ENTRIES:
            break
    return {
        "path": display_path(context.working_directory, target),
        "entries": entries,
        "truncated": len(entries) >= MAX_LIST_ENTRIES,
    }


def search_files(pattern: str, path: str, glob: str, context: ToolContext) -> dict[str, object]:
    """Search file contents under a directory for a regular expression."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolFailure(f"invalid pattern {pattern!r}: {exc}", type_="invalid_input") from None
    root = context.working_directory.resolve()
    base = resolve_inside(root, path)
    matches: list[dict[str, object]] = []
    for file in _walk_files(base, glob):
        for number, line in enumerate(_text_lines(file), start=1):
            if regex.search(line):
                matches.append(
                    {"path": display_path(root, file), "line": number, "text": line[:300]}
                )
                if len(matches) >= MAX_SEARCH_MATCHES:
                    return {"matches": matches, "truncated": True}
    return {"matches": matches, "truncated": False}


def _walk_files(base: Path, glob: str) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(base, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            file = Path(folder, name)
            if fnmatch.fnmatch(name, glob) and not file.is_symlink():
                found.append(file)
    return found


def _text_lines(file: Path) -> list[str]:
    if file.stat().st_size > MAX_SEARCH_FILE_BYTES:
        return []
    data = file.read_bytes()
    if b"\x00" in data[:8192]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def file_edit_tools() -> list[ToolSpec]:
    """Return the ``file_edit`` toolkit's specs."""
    return [
        ToolSpec(
            name="read_file",
            description="Read a UTF-8 text file inside the working directory.",
            input_schema=ReadFileArgs,
            handler=read_file,
            permission="fs:read",
            idempotency="safe",
        ),
        ToolSpec(
            name="write_file",
            description="Create or overwrite (or append to) a text file in the working directory.",
            input_schema=WriteFileArgs,
            handler=write_file,
            permission="fs:write",
            idempotency="non_idempotent",
        ),
        ToolSpec(
            name="list_dir",
            description="List the entries of a directory inside the working directory.",
            input_schema=ListDirArgs,
            handler=list_dir,
            permission="fs:read",
            idempotency="safe",
        ),
        ToolSpec(
            name="search_files",
            description="Search text files under a directory for a regular expression.",
            input_schema=SearchFilesArgs,
            handler=search_files,
            permission="fs:read",
            idempotency="safe",
        ),
    ]
