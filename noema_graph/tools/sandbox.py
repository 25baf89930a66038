"""Confine paths given by the model to the working directory, without check-then-open races.

Files are opened relative to a descriptor of the working directory with ``openat2(2)`` and
``RESOLVE_BENEATH``: the kernel resolves the path and refuses any step (``..``, an absolute or
escaping symlink, a ``/proc`` magic link) that leaves the directory, in the same system call
that opens the file. Swapping a symlink between a check and the open is therefore harmless:
there is no separate check. On kernels without ``openat2`` (before 5.6, or where seccomp hides
it) each component is opened with ``O_NOFOLLOW`` relative to its parent's descriptor, which
refuses every symlink.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import posixpath
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from noema_graph.errors import OpenRefused
from noema_graph.tools.results import ToolFailure

_SYS_OPENAT2 = 437  # the same number on every Linux architecture
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_EAGAIN_TRIES = 16


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def relative_path(user_path: str) -> str:
    """Return ``user_path`` normalised, refusing absolute paths and ``..`` that leave the root.

    Raises:
        ToolFailure: ``invalid_input`` or ``path_outside_workdir``, naming the path and the fix.
    """
    if not user_path or "\x00" in user_path:
        raise ToolFailure(f"invalid path {user_path!r}", type_="invalid_input")
    if Path(user_path).is_absolute() or PurePosixPath(user_path).is_absolute():
        raise _outside(user_path, "is absolute; use a path relative to the working directory")
    normal = posixpath.normpath(user_path)
    if normal == ".." or normal.startswith("../"):
        raise _outside(user_path, "leaves the working directory")
    return normal


def open_inside(root: Path, user_path: str, flags: int, mode: int = 0o644) -> int:
    """Open ``user_path`` beneath ``root`` and return the descriptor (the caller closes it).

    ``flags`` are ``os.open`` flags; add ``os.O_NOFOLLOW`` to refuse a final symlink.

    Raises:
        ToolFailure: ``path_outside_workdir`` when resolution leaves ``root`` (or meets a
            refused symlink), ``not_found`` when a component is missing.
    """
    relative = relative_path(user_path)
    with _directory(root) as root_fd:
        try:
            return _open_beneath(root_fd, relative, flags, mode)
        except OSError as exc:
            raise path_error(user_path, exc) from None


def make_dirs_inside(root: Path, user_path: str) -> int:
    """Create the directory ``user_path`` beneath ``root`` (and its parents); return its fd.

    Each level is created relative to the descriptor of the level above, so no component
    can be swapped for a symlink that leads outside.
    """
    relative = relative_path(user_path)
    if relative == ".":
        return open_inside(root, ".", os.O_RDONLY | os.O_DIRECTORY)
    parts = relative.split("/")
    fd = open_inside(root, ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for index, name in enumerate(parts):
            prefix = "/".join(parts[: index + 1])
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise path_error(user_path, exc) from None
            following = open_inside(root, prefix, os.O_RDONLY | os.O_DIRECTORY)
            os.close(fd)
            fd = following
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def _directory(root: Path) -> Generator[int]:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def _open_beneath(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    if _openat2_works():
        return _openat2(dir_fd, relative, flags, mode)
    return _open_walking(dir_fd, relative, flags, mode)


def _openat2(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    how = _OpenHow(
        flags | os.O_CLOEXEC,
        mode if flags & os.O_CREAT else 0,
        _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS,
    )
    path = os.fsencode(relative)
    for _ in range(_EAGAIN_TRIES):  # EAGAIN: a concurrent rename; the kernel asks to retry
        fd = _libc().syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(path),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return int(fd)
        code = ctypes.get_errno()
        if code != errno.EAGAIN:
            raise OpenRefused(code, os.strerror(code), relative)
    raise OpenRefused(errno.EAGAIN, os.strerror(errno.EAGAIN), relative)


def _open_walking(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    """Open ``relative`` one component at a time, never following a symlink."""
    parts = [p for p in relative.split("/") if p not in {"", "."}]
    if not parts:
        return os.open(".", flags | os.O_CLOEXEC, dir_fd=dir_fd)
    stack = [os.dup(dir_fd)]
    try:
        for name in parts[:-1]:
            if name == "..":
                if len(stack) == 1:
                    raise OpenRefused(errno.EXDEV, os.strerror(errno.EXDEV), relative)
                os.close(stack.pop())
                continue
            dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            stack.append(os.open(name, dir_flags, dir_fd=stack[-1]))
        last = parts[-1]
        if last == "..":
            raise OpenRefused(errno.EXDEV, os.strerror(errno.EXDEV), relative)
        final = flags | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(last, final, mode, dir_fd=stack[-1])
    finally:
        for fd in stack:
            os.close(fd)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def _openat2_works() -> bool:
    """Return whether this kernel (and seccomp policy) offers ``openat2``."""
    with _directory(Path("/")) as fd:
        try:
            os.close(_openat2(fd, ".", os.O_RDONLY | os.O_DIRECTORY, 0))
        except OSError as exc:
            if exc.errno in {errno.ENOSYS, errno.EPERM, errno.EINVAL}:
                return False
            raise
    return True


def path_error(user_path: str, exc: OSError) -> ToolFailure:
    """Return the observation for an ``OSError`` met while opening ``user_path``."""
    if exc.errno in {errno.EXDEV, errno.ELOOP}:
        return _outside(user_path, "leaves the working directory (or is a refused symlink)")
    if exc.errno in {errno.ENOENT, errno.ENOTDIR}:
        return ToolFailure(
            f"no such path {user_path!r}", type_="not_found", details={"path": user_path}
        )
    if exc.errno == errno.EISDIR:
        return ToolFailure(f"{user_path!r} is a directory", type_="invalid_input")
    return ToolFailure(f"cannot open {user_path!r}: {exc.strerror}", type_="os_error")


def _outside(user_path: str, why: str) -> ToolFailure:
    return ToolFailure(
        f"path {user_path!r} {why}",
        type_="path_outside_workdir",
        details={"path": user_path},
        recoverable=True,
    )
