"""Every user mistake prints one line naming the fix and exits 2, never a traceback."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from noema_graph.cli.errors import check_database, exit_code, resume_hint
from noema_graph.cli.model import choice_line, endpoint_problem
from tests.cli.conftest import one_error_line


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _foreign(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, jpeg BLOB)")
    conn.close()
    return path


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", "wizard", "do magic"], "'wizard' is not an agent"),
        (["run", "calibration", ""], "the request is empty"),
        (["run", "calibration", "   "], "the request is empty"),
        (["run", ""], "the request is empty"),
        (["ask", ""], "the request is empty"),
        (["run", "calibration"], "'calibration' is an agent but no request follows"),
        (["run", "a", "b", "c"], "expected [AGENT] REQUEST, got 3 arguments"),
        (["run", "x", "--max-iterations", "abc"], "Invalid value for '--max-iterations'"),
        (["run", "x", "--max-iterations", "0"], "greater than or equal to 1"),
        (["run", "x", "--protocol", "smoke"], "--protocol 'smoke' is not a protocol"),
        (["run", "x", "--no-such-flag"], "No such option: --no-such-flag"),
        (["run", "x", "--quiet", "--json"], "--quiet and --json exclude each other"),
        (["mcp", "serve", "--transport", "tcp"], "--transport 'tcp' is not a transport"),
        (["mcp", "serve", "--port", "0"], "Invalid value for '--port'"),
    ],
)
def test_a_mistake_is_one_line_with_its_fix(args: list[str], says: str, cli: Any) -> None:
    invoke, models = cli  # no model is queued: asking for one would fail the test
    line = one_error_line(invoke(*args))
    assert says in line
    assert models == []


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("gpt-5", "bad model spec 'gpt-5': unknown provider"),
        ("openai:", "the model name is missing"),
        ("openai:gpt-4o", "OPENAI_API_KEY: is not set"),
        ("openai-compatible:llama", "no server URL"),
    ],
)
def test_a_bad_model_spec_is_one_line(
    spec: str, says: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from noema_graph.cli.app import app

    monkeypatch.chdir(tmp_path)  # the real model factory: it refuses before any connection
    line = one_error_line(CliRunner().invoke(app, ["run", "x", "--model", spec]))
    assert says in line


@pytest.mark.parametrize("command", ["events", "inspect", "history", "resume"])
def test_unknown_thread_exits_2(command: str, cli: Any, tmp_path: Path) -> None:
    invoke, models = cli
    from tests.scripted import ScriptedChatModel, plan_reply, text

    models.append(ScriptedChatModel(script=[plan_reply("Answer"), text("hi")]))
    assert invoke("run", "hello", "--thread", "known").exit_code == 0
    line = one_error_line(invoke(command, "nope"))
    assert "no thread 'nope'" in line and "noema-graph threads" in line


@pytest.mark.parametrize(
    "args",
    [
        ["run", "hi", "--db", "{file}"],
        ["ask", "hi", "--db", "{file}"],
        ["threads", "--db", "{file}"],
        ["history", "t", "--db", "{file}"],
        ["inspect", "t", "--db", "{file}"],
        ["events", "t", "--db", "{file}"],
        ["stats", "--db", "{file}"],
        ["resume", "t", "--db", "{file}"],
        ["prune", "--db", "{file}"],
        ["run", "calibration", "hi", "--data", "{file}"],
    ],
)
@pytest.mark.parametrize("kind", ["text", "foreign"])
def test_text_or_foreign_database_is_refused_untouched(
    args: list[str], kind: str, cli: Any, tmp_path: Path
) -> None:
    invoke, _ = cli
    file = tmp_path / "other.db"
    if kind == "text":
        file.write_text("name,score\nada,3\n")
    else:
        _foreign(file)
    before = file.read_bytes()
    line = one_error_line(invoke(*(a.format(file=file) for a in args)))
    expected = (
        "is not a SQLite database" if kind == "text" else "another application (tables: photos)"
    )
    assert expected in line and "pass --" in line
    assert file.read_bytes() == before  # no table was created in someone else's file


def test_missing_database_for_reading_commands(cli: Any) -> None:
    invoke, _ = cli
    for args in (["threads"], ["events", "t"], ["stats"], ["resume", "t"], ["prune"]):
        line = one_error_line(invoke(*args, "--db", "missing.sqlite"))
        assert "missing.sqlite does not exist" in line, args


def test_unreachable_endpoint_says_so_and_suggests_local(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from noema_graph.cli.app import app

    monkeypatch.chdir(tmp_path)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    spec = f"openai-compatible:llama@{url}"
    line = one_error_line(CliRunner().invoke(app, ["run", "hi", "--model", spec]))
    assert f"at {url} is unreachable: connection refused" in line and "--model local" in line

    monkeypatch.setenv("NOEMA_BASE_URL", url)  # the environment picks it: said first
    done = CliRunner().invoke(app, ["run", "hi"], env={"COLUMNS": "300"})
    chosen, error = done.output.splitlines()
    assert chosen == (
        "model openai-compatible:default (chosen by NOEMA_BASE_URL; "
        "--model local runs the embedded offline model)"
    )
    assert done.exit_code == 2 and error.startswith("error: ") and "connection refused" in error


def test_choice_line_names_the_variable_that_chose() -> None:
    assert choice_line(None, {}) is None
    assert choice_line("local", {"OPENAI_API_KEY": "sk-x"}) is None
    line = choice_line(None, {"OPENAI_API_KEY": "sk-x"})
    assert line is not None and line.startswith(
        "model openai:gpt-4o-mini (chosen by OPENAI_API_KEY"
    )
    both = {"OPENAI_API_KEY": "sk-x", "NOEMA_MODEL": "openai:gpt-4.1"}
    assert "openai:gpt-4.1 (chosen by NOEMA_MODEL" in str(choice_line(None, both))


def test_endpoint_problem_on_an_open_and_a_closed_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert endpoint_problem(f"http://127.0.0.1:{server.getsockname()[1]}/v1") is None
    port = _closed_port()
    assert (
        endpoint_problem(f"http://127.0.0.1:{port}/v1") == f"connection refused at 127.0.0.1:{port}"
    )


def test_check_database_accepts_new_empty_and_noema_files(tmp_path: Path) -> None:
    check_database(tmp_path / "new.sqlite")
    (tmp_path / "empty.sqlite").touch()
    check_database(tmp_path / "empty.sqlite")
    with sqlite3.connect(tmp_path / "runs.sqlite") as conn:
        conn.execute("CREATE TABLE checkpoints (x)")
    conn.close()
    check_database(tmp_path / "runs.sqlite", must_exist=True)


def test_exit_code_and_resume_hint() -> None:
    assert exit_code({"success": True}) == 0
    assert exit_code({"success": False, "error": {"code": "max_iterations"}}) == 1
    assert exit_code({"success": False, "error": {"code": "ungrounded"}}) == 1
    assert exit_code({"success": False, "error": {"code": "cancelled"}}) == 130
    assert exit_code({}) == 1
    assert resume_hint("t1", Path("noema.sqlite")) == "noema-graph resume t1"
    assert resume_hint("t1", Path("runs.db")) == "noema-graph resume t1 --db runs.db"
