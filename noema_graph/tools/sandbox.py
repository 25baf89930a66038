"""Confine paths given by the model to the working directory."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from noema_graph.tools.results import ToolFailure


def resolve_inside(root: Path, user_path: str) -> Path:
    """Return ``user_path`` resolved inside ``root``, or refuse it.

    Absolute paths are refused outright. Relative paths are resolved with symlinks
    followed, so ``..`` or a symlink that leaves ``root`` is refused as well; a ``..`` that
    stays inside is harmless and allowed.

    Raises:
        ToolFailure: ``path_outside_workdir`` naming the path and the fix.
    """
    root = root.resolve()
    if not user_path or "\x00" in user_path:
        raise ToolFailure(f"invalid path {user_path!r}", type_="invalid_input")
    if Path(user_path).is_absolute() or PurePosixPath(user_path).is_absolute():
        raise ToolFailure(
            f"path {user_path!r} is absolute; use a path relative to the working directory",
            type_="path_outside_workdir",
            details={"path": user_path},
            recoverable=True,
        )
    candidate = (root / user_path).resolve()
    if not candidate.is_relative_to(root):
        raise ToolFailure(
            f"path {user_path!r} leaves the working directory",
            type_="path_outside_workdir",
            details={"path": user_path},
            recoverable=True,
        )
    return candidate


def display_path(root: Path, path: Path) -> str:
    """Return ``path`` relative to ``root`` as the model should see it."""
    relative = path.relative_to(root.resolve())
    return relative.as_posix() or "."
