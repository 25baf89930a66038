"""``noema-graph db upgrade``: every table of a deployment, once, on PostgreSQL and SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from noema_graph.cli import app as cli

DEPLOYMENT_TABLES = {"checkpoints", "checkpoint_writes", "store", "noema_events", "cards", "users"}


def _upgrade(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli.app, ["db", "upgrade", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pg_tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {str(row[0]) for row in rows}


def test_upgrade_creates_every_table_once_on_postgres(pg_url: str) -> None:
    first = _upgrade("--database-url", pg_url)
    assert _pg_tables(pg_url) >= DEPLOYMENT_TABLES
    assert first["learning_migrations_applied"]  # the learning schema went in, here
    assert first["database"] == pg_url  # the server's URL has no password to hide
    again = _upgrade("--database-url", pg_url)
    assert again["learning_migrations_applied"] == []  # idempotent
    assert again["learning_schema"] == first["learning_schema"]


def test_upgrade_on_sqlite_keeps_the_learning_store_in_its_own_file(tmp_path: Path) -> None:
    db, data = tmp_path / "runs.sqlite", tmp_path / "learning.sqlite"
    done = _upgrade("--db", str(db), "--data", str(data))
    assert done["learning_store"] == str(data)
    with sqlite3.connect(db) as conn:
        runs = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    with sqlite3.connect(data) as conn:
        learning = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"checkpoints", "writes", "store", "noema_events"} <= runs
    assert {"cards", "users"} <= learning and "cards" not in runs


def test_an_unreachable_server_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(
        cli.app, ["db", "upgrade", "--database-url", "postgresql://u:secret@127.0.0.1:1/x"]
    )
    assert result.exit_code == 2
    assert "cannot connect" in result.output and "secret" not in result.output
