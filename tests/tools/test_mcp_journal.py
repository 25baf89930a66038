"""``noema-graph mcp serve --data``: the operator's writes are journaled, one thread a session.

Real MCP client sessions (the SDK's ``ClientSession`` over stdio and streamable HTTP)
against the CLI's server; then ``changes`` and ``undo`` (CLI and Python API) review and
revert what a session wrote.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from noema_graph.noema.demo import write_demo_data
from noema_graph.noema.history import changes, undo

pytestmark = pytest.mark.mcp
REPO = Path(__file__).resolve().parents[2]
THREAD = re.compile(r"journaled as thread (mcp-[0-9a-f]{12})")


async def _session(db: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Run ``calls`` in one MCP client session of ``noema-graph mcp serve --data db``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "noema_graph.cli", "mcp", "serve", "--data", str(db)],
        cwd=str(REPO),
    )
    bodies: list[dict[str, Any]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            assert not result.isError, result.content
            (content,) = result.content
            bodies.append(json.loads(getattr(content, "text")))  # noqa: B009  # TextContent
    return bodies


def _thread(body: dict[str, Any]) -> str:
    found = THREAD.search(body.get("message") or "")
    assert found is not None, body
    return found.group(1)


def _dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("cards", "card_flags", "concept_links", "concepts")
        }


def _category(db: Path, card: int) -> int:
    with sqlite3.connect(db) as conn:
        return int(
            conn.execute("SELECT category_id FROM cards WHERE id = ?", (card,)).fetchone()[0]
        )


async def test_each_session_is_a_journal_thread_that_changes_and_undo_accept(
    tmp_path: Path,
) -> None:
    db = tmp_path / "learn.db"
    write_demo_data(db)
    original = _dump(db)
    was = _category(db, 5)
    with sqlite3.connect(db) as conn:
        target = int(
            conn.execute("SELECT id FROM categories WHERE id != ? ORDER BY id", (was,)).fetchone()[
                0
            ]
        )
    first = await _session(
        db,
        [
            ("flag_card", {"card_id": 3, "reason": "unclear", "severity": "low"}),
            ("list_categories", {}),
            ("move_card", {"card_id": 5, "category_id": target}),
        ],
    )
    second = await _session(
        db, [("flag_card", {"card_id": 4, "reason": "typo", "severity": "low"})]
    )
    thread = _thread(first[0])
    assert _thread(first[2]) == thread  # one thread for the session's writes
    assert "message" not in first[1]  # a read is not journaled
    other = _thread(second[0])
    assert other != thread  # another session, another thread

    found = changes(thread, db=db)
    assert [(c.tool, c.step, c.table) for c in found] == [
        ("flag_card", 1, "card_flags"),
        ("move_card", 2, "cards"),
    ]
    assert all(c.call_id.startswith("mcp-") for c in found)
    assert [c.tool for c in changes(other, db=db)] == ["flag_card"]

    from noema_graph.cli import app as cli_module

    shown = CliRunner().invoke(cli_module.app, ["changes", thread, "--data", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "card 5: category" in shown.output
    step = CliRunner().invoke(cli_module.app, ["undo", thread, "--step", "2", "--data", str(db)])
    assert step.exit_code == 0, step.output
    assert _category(db, 5) == was  # the move is reverted, the flag is still there
    assert _dump(db)["card_flags"] != original["card_flags"]
    undo(thread, db=db)
    undo(other, db=db)
    assert _dump(db) == original


async def test_calls_outside_a_session_share_the_servers_own_thread(tmp_path: Path) -> None:
    from noema_graph.agents.mcp_server import build_server
    from noema_graph.config import AgentConfig

    db = tmp_path / "learn.db"
    write_demo_data(db)
    server = build_server(AgentConfig(working_directory=tmp_path), learning_db=db)
    threads = []
    for card in (3, 4):
        (content,) = await server.call_tool(
            "flag_card", {"card_id": card, "reason": "unclear", "severity": "low"}
        )
        threads.append(_thread(json.loads(getattr(content, "text"))))  # noqa: B009
    assert threads[0] == threads[1]
    assert [c.step for c in changes(threads[0], db=db)] == [1, 2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _http_session(url: str, card: int) -> list[str]:
    """Flag ``card`` twice in one streamable-HTTP session; return the threads named."""
    threads: list[str] = []
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as s:
        await s.initialize()
        for reason in ("unclear", "typo"):
            result = await s.call_tool(
                "flag_card", {"card_id": card, "reason": reason, "severity": "low"}
            )
            (content,) = result.content
            threads.append(_thread(json.loads(getattr(content, "text"))))  # noqa: B009
    return threads


def test_each_http_session_is_a_thread_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "learn.db"
    write_demo_data(db)
    port = _free_port()
    args = ["mcp", "serve", "--transport", "http", "--port", str(port), "--data", str(db)]
    server = subprocess.Popen([sys.executable, "-m", "noema_graph.cli", *args], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while True:  # wait for the port (the server imports its toolkits first)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/mcp"
        first, second = asyncio.run(_http_session(url, 3)), asyncio.run(_http_session(url, 4))
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert first[0] == first[1] and second[0] == second[1] and first[0] != second[0]
    assert [c.step for c in changes(first[0], db=db)] == [1, 2]
