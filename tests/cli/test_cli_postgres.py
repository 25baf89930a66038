"""``noema-graph run/resume --database-url`` (and NOEMA_DATABASE_URL) on a real PostgreSQL.

The runs go through the real entry point in a subprocess (:mod:`tests.cli.launch`, scripted
model); the flag errors are checked in process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from typer.testing import CliRunner

from noema_graph.cli import app as cli

ROOT = Path(__file__).resolve().parents[2]


def _cli(script: str, *args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "tests.cli.launch", script, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300", **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _checkpoints(url: str, thread: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,))
        return int(row.fetchone()[0])  # type: ignore[index]


def test_run_with_database_url_checkpoints_in_postgres(pg_url: str, tmp_path: Path) -> None:
    done = _cli("hello", "run", "--database-url", pg_url, "--thread", "t1", "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello there"
    assert _checkpoints(pg_url, "t1") > 0
    assert not (tmp_path / "noema.sqlite").exists()  # nothing went to the default file


def test_the_environment_variable_selects_postgres(pg_url: str, tmp_path: Path) -> None:
    env = {"NOEMA_DATABASE_URL": pg_url}
    done = _cli("hello", "run", "--thread", "t2", "hi", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert _checkpoints(pg_url, "t2") > 0 and not (tmp_path / "noema.sqlite").exists()
    # an explicit --db wins over the environment
    done = _cli("hello", "run", "--db", "own.sqlite", "--thread", "t3", "hi", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "own.sqlite").exists() and _checkpoints(pg_url, "t3") == 0


def test_a_paused_run_resumes_with_database_url(pg_url: str, tmp_path: Path) -> None:
    where = ["--database-url", pg_url]
    paused = _cli("slow", "run", *where, "--confirm", "slow", "--thread", "p1", "go", cwd=tmp_path)
    assert paused.returncode == 3, paused.stderr  # stdin closed: the approval waits
    assert f"noema-graph resume p1 --database-url {pg_url}" in paused.stderr
    done = _cli("after-slow", "resume", "p1", *where, "--yes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the answer is 42"
    again = _cli("none", "resume", "p1", *where, cwd=tmp_path)
    assert again.returncode == 0 and "already finished successfully" in again.stderr


def _one_error_line(*args: str, code: int = 2) -> str:
    result = CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "300"})
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == code, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_database_flag_errors_are_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    both = _one_error_line("run", "--db", "a.sqlite", "--database-url", "sqlite:///b", "hi")
    assert "--db and --database-url exclude each other" in both and "(fix: " in both
    scheme = _one_error_line("run", "--database-url", "mysql://h/db", "hi")
    assert "unsupported scheme 'mysql'" in scheme and "postgresql://" in scheme
    secret = "postgresql://u:hunter2@127.0.0.1:1/db"
    down = _one_error_line("resume", "t1", "--database-url", secret)
    assert "cannot connect" in down and "hunter2" not in down and "u:***@" in down
    assert not list(tmp_path.iterdir())  # no file was created
