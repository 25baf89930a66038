"""The attack table: every attack is a test, and every test checks the four promises.

:meth:`Arena.assert_contained` (conftest.py) asserts that nothing outside the working
directory changed (the sibling ``outside`` folder and marker paths in /tmp, /etc, /var/tmp,
/dev/shm and $HOME), that the arena's secret appears in no observation, that no process
carrying the attack's mark outlived the call, and that the TCP listener saw no connection.
docs/security.md and noema_graph/tools/SECURITY.md list these rows.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noema_graph.tools import bash, jail, sandbox
from noema_graph.tools._cgroup import pids_cgroup_parent
from noema_graph.tools.bash import bash_tools
from noema_graph.tools.file_edit import MAX_READ_CHARS, read_file, write_file
from noema_graph.tools.jail import SandboxPolicy
from noema_graph.tools.registry import ToolRegistry
from noema_graph.tools.results import ToolFailure
from noema_graph.tools.spec import ToolContext
from tests.reliability.conftest import SECRET_VAR, SURVIVOR_WAIT_S, Arena

REPO = Path(__file__).resolve().parents[2]
LOOP = "while :; do echo x >> alive.txt; sleep 0.05; done"
WAIT_ALIVE = "while [ ! -s alive.txt ]; do sleep 0.05; done; echo started"
SWAPS_MAX = 1_000_000
RACE_WRITES = 1_500
GIB = 1024**3

# --- secrets: the agent process holds the secret in its initial environment -------------

LEAKS = {
    "environment of bash": ("bash", {"command": "env"}),
    "/proc/$PPID/environ and /proc/1/environ": (
        "bash",
        {"command": "cat /proc/$PPID/environ /proc/1/environ | tr '\\0' ' '"},
    ),
    "every /proc/*/environ": ("bash", {"command": "cat /proc/[0-9]*/environ | tr '\\0' ' '"}),
    "python os.environ and parent environ": (
        "python_executor",
        {
            "code": "import os\nprint(dict(os.environ))\n"
            "print(open(f'/proc/{os.getppid()}/environ', 'rb').read())\n"
            "print(open('/proc/1/environ', 'rb').read())"
        },
    ),
    "agent visible in /proc": ("bash", {"command": "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"}),
}


@pytest.fixture(scope="module")
def leak_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run every leak attack in one agent process whose environment holds a secret."""
    workdir = tmp_path_factory.mktemp("leak")
    secret = "sk-leak-" + os.urandom(8).hex()
    calls = [list(call) for call in LEAKS.values()]
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.leak_agent", str(workdir), json.dumps(calls)],
        cwd=REPO,
        env={**os.environ, SECRET_VAR: secret, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "secret": secret,
        "pid": report["pid"],
        "results": dict(zip(LEAKS, report["results"], strict=True)),
    }


@pytest.mark.parametrize("name", list(LEAKS))
def test_secret_does_not_leak(leak_run: dict[str, Any], name: str) -> None:
    body = leak_run["results"][name]
    assert body["status"] == "success", body
    output = body["data"]["output"]
    assert leak_run["secret"] not in output
    assert "leak_agent" not in output  # the agent's own /proc entry is not visible
    assert f"/proc/{leak_run['pid']}/" not in output


# --- processes that try to outlive the call ---------------------------------------------

DAEMONS = {
    "setsid daemon": ("bash", {"command": f"setsid sh -c '{LOOP}' {{mark}} >/dev/null 2>&1 &"}),
    "double fork + nohup": (
        "bash",
        {"command": f"( (nohup sh -c '{LOOP}' {{mark}} >/dev/null 2>&1 &) & )"},
    ),
    "python double-fork daemon": (
        "python_executor",
        {
            "code": "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        os.execv('/bin/sh', ['sh', '-c', {LOOP!r}, '{{mark}}'])\n"
            "    os._exit(0)\n"
            "for _ in range(200):\n    if os.path.exists('alive.txt'): break\n"
            "    time.sleep(0.05)\nprint('started')"
        },
    ),
}


@pytest.mark.parametrize("name", list(DAEMONS))
def test_daemon_dies_with_the_call(arena: Arena, name: str) -> None:
    tool, args = DAEMONS[name]
    if tool == "bash":
        args = {"command": args["command"] + "\n" + WAIT_ALIVE}
    args = {key: str(value).replace("{mark}", arena.mark) for key, value in args.items()}
    status, body = arena.run(arena.tools()[tool], **args)
    assert status == "success", body
    assert "started" in body["data"]["output"]  # the daemon was running when the call ended
    arena.assert_contained()


def test_background_cpu_burner_is_killed_at_timeout(arena: Arena) -> None:
    command = f": {arena.mark}; (while :; do :; done) & sleep 30"
    status, body = arena.run(arena.tools()["bash"], command=command, timeout_s=1)
    assert (status, body["error"]["type"]) == ("error", "timeout")
    arena.assert_contained()


def test_fork_bomb_is_capped_and_killed(arena: Arena) -> None:
    tools = arena.tools(policy=SandboxPolicy(max_processes=32))
    command = f": {arena.mark}; b() {{ b | b & }}; b; sleep 30"
    status, body = arena.run(tools["bash"], command=command, timeout_s=3)
    assert status in {"success", "error"}, body
    arena.assert_contained()


def test_forks_stop_at_the_process_cap(arena: Arena) -> None:
    code = (
        "import os\nn = 0\ntry:\n    for _ in range(500):\n        if os.fork() == 0:\n"
        f"            os.execv('/bin/sh', ['sh', '-c', 'sleep 30; :', '{arena.mark}'])\n"
        "        n += 1\nexcept OSError as exc:\n    print('refused after', n)\n"
    )
    tools = arena.tools(policy=SandboxPolicy(max_processes=32))
    status, body = arena.run(tools["python_executor"], code=code)
    assert status == "success", body
    forked = int(body["data"]["output"].split("refused after")[1].split()[0])
    assert forked < 32
    arena.assert_contained()


# --- network ----------------------------------------------------------------------------

CONNECT = "s.settimeout(2)\ns.connect(('127.0.0.1', {port}))\nprint('connected')"
NETWORK = {
    "bash /dev/tcp": ("bash", {"command": "echo hi > /dev/tcp/127.0.0.1/{port} && echo connected"}),
    "python socket": (
        "python_executor",
        {"code": "import socket\ns = socket.socket()\n" + CONNECT},
    ),
    "python importlib.reload(socket)": (
        "python_executor",
        {
            "code": "import importlib, socket\nimportlib.reload(socket)\ns = socket.socket()\n"
            + CONNECT
        },
    ),
    "python _socket": (
        "python_executor",
        {"code": "import _socket\ns = _socket.socket()\n" + CONNECT},
    ),
    "python subprocess": (
        "python_executor",
        {
            "code": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
            + repr("import socket\ns = socket.socket()\n" + CONNECT)
            + "])"
        },
    ),
    "bash running python": (
        "bash",
        {
            "command": 'python3 -c "import socket; s = socket.socket(); '
            "s.settimeout(2); s.connect(('127.0.0.1', {port})); print('connected')\""
        },
    ),
}


@pytest.mark.parametrize("name", list(NETWORK))
def test_no_connection_leaves_the_sandbox(arena: Arena, name: str) -> None:
    tool, args = NETWORK[name]
    args = {k: v.replace("{port}", str(arena.listener.port)) for k, v in args.items()}
    status, body = arena.run(arena.tools()[tool], **args)
    assert status == "success", body
    assert "connected" not in body["data"]["output"]
    arena.assert_contained()


def test_listener_counts_a_permitted_connection(arena: Arena) -> None:
    """Control: with network allowed and granted, the same attack does connect."""
    tools = arena.tools(("fs:read", "shell:execute", "net:outbound"), allow_network=True)
    code = "import socket\ns = socket.socket()\n" + CONNECT.format(port=arena.listener.port)
    status, body = arena.run(tools["python_executor"], code=code)
    assert status == "success", body
    assert "connected" in body["data"]["output"]


@pytest.mark.parametrize("kind", ["path", "abstract"])
def test_unix_sockets_of_the_host_are_unreachable(arena: Arena, kind: str) -> None:
    address = (
        str(arena.workdir.parent / "outside" / "agent.sock")
        if kind == "path"
        else f"\0{arena.mark}"
    )
    server = socket.socket(socket.AF_UNIX)
    server.bind(address)
    server.listen(4)
    server.setblocking(False)
    arena.freeze()
    code = f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({address!r})\nprint('ok')"
    try:
        status, body = arena.run(arena.tools()["python_executor"], code=code)
        assert status == "success", body
        assert body["data"]["output"].strip() != "ok"
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    arena.assert_contained()


# --- writes outside the working directory -----------------------------------------------

WRITES = {
    "bash writes to /tmp, /etc, /var/tmp, /dev/shm, $HOME, ../outside": (
        "bash",
        "for d in /tmp /etc /var/tmp /dev/shm {home} ../outside; do echo x > $d/{mark}; done; "
        "echo pwned > ../outside/secret.txt",
    ),
    "python writes outside": (
        "python_executor",
        "for d in ['/tmp', '/etc', '/var/tmp', '/dev/shm', '{home}', '../outside']:\n"
        "    try:\n        open(d + '/{mark}', 'w').write('x')\n"
        "    except OSError as exc:\n        print(d, exc)\n",
    ),
    "remount the read-only binds": (
        "bash",
        "mount -o remount,bind,rw / ; mount -o remount,bind,rw /etc; touch /etc/{mark}",
    ),
    "nested user namespace": (
        "bash",
        "unshare -Urm sh -c 'mount -o remount,bind,rw /etc; touch /etc/{mark}'",
    ),
    "symlink out from the shell": (
        "bash",
        "ln -s ../outside o; echo pwned > o/secret.txt; ln -s /etc e; echo x > e/{mark}",
    ),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_writes_outside_fail(arena: Arena, name: str) -> None:
    tool, text = WRITES[name]
    text = text.replace("{mark}", arena.mark).replace("{home}", os.path.expanduser("~"))
    args = {"command": text} if tool == "bash" else {"code": text}
    status, body = arena.run(arena.tools()[tool], **args)
    assert status == "success", body
    arena.assert_contained()


# --- reads: the sandbox shows the workdir, the system dirs and Python, nothing else -------

READS = {
    "read ../ (the workdir's parent)": (
        "bash",
        {"command": "ls -A ..; cat ../outside/secret.txt ../.env 2>&1"},
    ),
    "read other homes": ("bash", {"command": "ls -A /home; cat /home/*/* /home/*/.* 2>&1"}),
    "read /root": ("bash", {"command": "ls -A /root; cat /root/.noema-attack-* 2>&1"}),
    "read /proc/1/environ": (
        "python_executor",
        {"code": "print(open('/proc/1/environ', 'rb').read())"},
    ),
    "read a project file outside the workdir": (
        "python_executor",
        {
            "code": "import os\nfor p in ('../.env', '../outside/secret.txt'):\n"
            "    try: print(open(p).read())\n    except OSError as e: print(e)"
        },
    ),
}


@pytest.fixture
def planted(arena: Arena) -> Iterator[list[Path]]:
    """The arena's secret in a project file beside the workdir, another home and /root."""
    home = Path("/home", arena.mark)
    places = [arena.workdir.parent / ".env", home / "secret", Path("/root", f".{arena.mark}")]
    home.mkdir(parents=True, exist_ok=True)
    for place in places:
        place.write_text(f"TOKEN={arena.secret}\ntop secret\n")
    arena.freeze()
    try:
        yield places
    finally:
        for place in places:
            place.unlink()
        home.rmdir()


@pytest.mark.parametrize("name", list(READS))
def test_reads_outside_the_workdir_see_nothing(
    arena: Arena, planted: list[Path], name: str
) -> None:
    tool, args = READS[name]
    status, body = arena.run(arena.tools()[tool], **args)
    assert status == "success", body
    output = body["data"]["output"]
    assert "top secret" not in output and arena.secret not in output  # 0 escapes
    arena.assert_contained()


def test_read_paths_open_more_read_only(arena: Arena) -> None:
    outside = arena.workdir.parent / "outside"
    registry = ToolRegistry(bash_tools(read_paths=[str(outside)]))
    (tool,) = registry.as_langchain_tools(
        permissions=("shell:execute",), working_directory=arena.workdir, timeout_s=10
    )
    status, body = arena.run(tool, command=f"cat {outside}/secret.txt; echo x > {outside}/w")
    assert status == "success", body
    assert "top secret" in body["data"]["output"] and "Read-only" in body["data"]["output"]
    arena.outputs.clear()  # this read was allowed on purpose
    arena.assert_contained()


def test_host_secrets_on_disk_are_hidden(arena: Arena) -> None:
    planted = Path(os.path.expanduser("~"), f".{arena.mark}-credentials")
    planted.write_text(arena.secret)
    try:
        command = f"cat {planted} /etc/shadow /etc/ssh/*key 2>&1; ls -A /run"
        status, body = arena.run(arena.tools()["bash"], command=command)
    finally:
        planted.unlink()
    assert status == "success", body
    assert "root:" not in body["data"]["output"]  # /etc/shadow reads as empty
    assert "PRIVATE KEY" not in body["data"]["output"]
    assert body["data"]["output"].count("No such file") >= 1  # the planted file is not there
    arena.assert_contained()


@pytest.mark.skipif(pids_cgroup_parent() is None, reason="needs a writable pids cgroup")
def test_unsandboxed_daemon_still_dies_with_its_cgroup(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash, "sandbox_available", lambda: False)  # as without bubblewrap
    registry = ToolRegistry(bash_tools(allow_unsandboxed=True))
    (tool,) = registry.as_langchain_tools(
        permissions=("shell:execute",), working_directory=arena.workdir, timeout_s=10
    )
    command = f"setsid sh -c '{LOOP}' {arena.mark} >/dev/null 2>&1 &\n{WAIT_ALIVE}"
    status, body = arena.run(tool, command=command)
    assert (status, body["data"]["output"]) == ("success", "started\n")
    deadline = time.monotonic() + SURVIVOR_WAIT_S
    while arena.survivors() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert arena.survivors() == []


# --- resources --------------------------------------------------------------------------

RESOURCES = {
    "memory bomb under bash": (
        "bash",
        "python3 -c 'bytearray(4 * 1024**3)'",
        "MemoryError",
    ),
    "fill /tmp": ("bash", "head -c 100000000 /dev/zero > /tmp/fill", "No space left"),
    "fill /dev/shm": (
        "python_executor",
        "open('/dev/shm/fill', 'wb').write(b'0' * 100_000_000)",
        "No space left",
    ),
    "huge file in the workdir (bash)": (
        "bash",
        "head -c 100000000 /dev/zero > big; ls -l big",
        "File size limit exceeded",
    ),
}


@pytest.mark.parametrize("name", list(RESOURCES))
def test_resource_attacks_hit_a_limit(arena: Arena, name: str) -> None:
    tool, text, expected = RESOURCES[name]
    policy = SandboxPolicy(tmp_bytes=8 * 1024**2, max_file_bytes=10 * 1024**2)
    args = {"command": text} if tool == "bash" else {"code": text}
    status, body = arena.run(arena.tools(policy=policy)[tool], **args)
    assert status == "success", body
    assert expected in body["data"]["output"] or body["data"]["exit_code"] != 0
    big = arena.workdir / "big"
    assert not big.exists() or big.stat().st_size <= 10 * 1024**2
    arena.assert_contained()


# --- file tools -------------------------------------------------------------------------


def _swap_forever(stop: threading.Event, swap: Any) -> None:
    for _ in range(SWAPS_MAX):
        if stop.is_set():
            return
        try:
            swap()
        except OSError:
            continue


@pytest.mark.parametrize("resolver", ["openat2", "walk"])
@pytest.mark.parametrize("swapped", ["file", "parent directory"])
def test_symlink_swap_race_never_writes_outside(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, resolver: str, swapped: str
) -> None:
    if resolver == "walk":
        monkeypatch.setattr(sandbox, "_openat2_works", lambda: False)
    outside = arena.workdir.parent / "outside"
    link = arena.workdir / ("victim.txt" if swapped == "file" else "sub")
    escape = outside / "secret.txt" if swapped == "file" else outside

    def swap() -> None:
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            shutil.rmtree(link)
        link.symlink_to(escape)
        link.unlink()
        if swapped == "file":
            link.write_text("inside")
        else:
            link.mkdir()

    stop = threading.Event()
    swapper = threading.Thread(target=_swap_forever, args=(stop, swap), daemon=True)
    swapper.start()
    context = ToolContext(working_directory=arena.workdir)
    path = "victim.txt" if swapped == "file" else "sub/victim.txt"
    written = 0
    try:
        for index in range(RACE_WRITES):
            try:
                write_file(path, f"{arena.mark} {index}", False, context)
                written += 1
            except (ToolFailure, OSError):
                continue
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert written > 0  # the race ran: some writes landed inside
    assert not any(arena.mark in p.read_text() for p in outside.iterdir() if p.is_file())
    arena.assert_contained()


def _peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/self/status")


def test_reading_a_3_gib_sparse_file_is_bounded(arena: Arena) -> None:
    with (arena.workdir / "sparse.bin").open("wb") as handle:
        handle.truncate(3 * GIB)
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS
    before = _peak_rss()
    data = read_file("sparse.bin", MAX_READ_CHARS, ToolContext(working_directory=arena.workdir))
    growth = _peak_rss() - before
    assert (data["truncated"], data["bytes"]) == (True, 3 * GIB)
    assert growth < 512 * 1024**2, f"read_file grew the agent by {growth / 1024**2:.0f} MB"
    status, body = arena.run(arena.tools()["search_files"], pattern="x")
    assert (status, body["data"]["matches"]) == ("success", [])
    arena.assert_contained()


def test_fifo_does_not_hang_file_tools(arena: Arena) -> None:
    os.mkfifo(arena.workdir / "pipe")
    tools = arena.tools()
    status, body = arena.run(tools["read_file"], path="pipe")
    assert (status, body["error"]["type"]) == ("error", "not_found")
    status, body = arena.run(tools["write_file"], path="pipe", content="x")
    assert status == "error", body
    status, body = arena.run(tools["search_files"], pattern="x")
    assert status == "success", body
    arena.assert_contained()


@pytest.mark.parametrize(
    "target", ["/proc/self/root/etc/passwd", "/proc/self/fd/0", "/etc/passwd", "../outside"]
)
def test_absolute_and_magic_symlinks_are_refused(arena: Arena, target: str) -> None:
    (arena.workdir / "link").symlink_to(target)
    context = ToolContext(working_directory=arena.workdir)
    with pytest.raises(ToolFailure) as refused:
        read_file("link" if target != "../outside" else "link/secret.txt", 100, context)
    assert refused.value.type == "path_outside_workdir"
    arena.assert_contained()


def test_catastrophic_regex_runs_in_linear_time(arena: Arena) -> None:
    (arena.workdir / "long.txt").write_text("a" * 1_000_000 + "!\n")
    tools = arena.tools(timeout_s=5)
    status, body = arena.run(tools["search_files"], pattern="(a+)+$")
    assert status == "success", body  # the runner answers "timeout" past 5 s
    assert body["data"] == {"matches": [], "truncated": False}
    arena.assert_contained()


def test_regex_outside_re2_is_refused_with_the_reason(arena: Arena) -> None:
    status, body = arena.run(arena.tools()["search_files"], pattern=r"(a)\1")
    assert (status, body["error"]["type"]) == ("error", "invalid_input")
    assert "RE2" in body["error"]["message"]
    arena.assert_contained()


# --- the sandbox itself -----------------------------------------------------------------


def test_missing_sandbox_refuses_unless_allowed(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jail, "find_bwrap", lambda: None)
    jail.sandbox_problem.cache_clear()
    try:
        for allow in (False, True):
            registry = ToolRegistry(bash_tools(allow_unsandboxed=allow))
            (tool,) = registry.as_langchain_tools(
                permissions=("shell:execute",), working_directory=arena.workdir, timeout_s=10
            )
            status, body = arena.run(tool, command="echo ran")
            if allow:
                assert (status, body["data"]["output"]) == ("success", "ran\n")
            else:
                assert (status, body["error"]["type"]) == ("error", "sandbox_unavailable")
                assert "bubblewrap" in body["error"]["message"]
                assert "allow_unsandboxed=True" in body["error"]["message"]
    finally:
        jail.sandbox_problem.cache_clear()
    arena.assert_contained()


def test_every_attack_has_a_row_in_security_md() -> None:
    text = (REPO / "noema_graph" / "tools" / "SECURITY.md").read_text()
    for name in [*LEAKS, *DAEMONS, *NETWORK, *WRITES, *RESOURCES, *READS]:
        assert f"| {name} |" in text, f"{name!r} missing from SECURITY.md"
    tests = [name for name in globals() if name.startswith("test_")]
    rows = text.split("## Attack table: sandbox")[1].count("\n| ") - 1  # less the header
    assert rows >= len(tests) - 1, "a test of this file has no row in SECURITY.md"


def test_workdir_inside_a_hidden_home_stays_writable(arena: Arena) -> None:
    home = Path(os.path.expanduser("~"))
    project = Path(tempfile.mkdtemp(prefix=f".{arena.mark}-", dir=home))
    try:
        registry = ToolRegistry(bash_tools())
        (tool,) = registry.as_langchain_tools(
            permissions=("shell:execute",), working_directory=project, timeout_s=10
        )
        status, body = arena.run(tool, command=f"echo ok > made.txt; ls -A {home} | wc -l")
        assert status == "success", body
        assert (project / "made.txt").read_text() == "ok\n"
        visible = int(body["data"]["output"].split()[-1])
        assert visible < len(list(home.iterdir()))  # the rest of the home stays hidden
    finally:
        shutil.rmtree(project)
    arena.assert_contained()
