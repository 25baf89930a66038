"""The Noema learning store on a real PostgreSQL: demo-data, agent runs, langgraph.json, writers.

``demo-data --database-url`` writes the sample into PostgreSQL; ``run AGENT --database-url``
keeps its checkpoints and its learning store there (nothing goes to a SQLite file); the
``langgraph.json`` factories find the store through ``NOEMA_DATABASE_URL``; and concurrent
writers on several connections lose no update (the writers' advisory lock).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from noema_graph.noema import LearningStore, write_demo_data
from noema_graph.noema.location import learning_location
from noema_graph.noema.schema import MIGRATIONS
from noema_graph.storage.sql.driver import Op, fetch_one
from tests.scripted import call, plan_reply, structured, text, tools_reply


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()
        assert row is not None
        return int(row[0])


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    from noema_graph.cli import app as cli_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)
    monkeypatch.delenv("NOEMA_LEARNING_DB", raising=False)
    models: list[Any] = []
    options = cli_module.CliOptions(model_factory=lambda spec: models.pop(0))

    def invoke(args: list[str], **kwargs: Any) -> Any:
        return CliRunner().invoke(cli_module.app, args, obj=options, **kwargs)

    return invoke, models


def _governance_script(bad: list[int], scanned: int, kinds: dict[int, Any]) -> list[Any]:
    return [
        plan_reply("Find and flag"),
        tools_reply(call("flag_quality_issues", {})),
        text(f"flagged {len(bad)} cards"),
        structured(
            "GovernanceReport",
            flagged=[
                {"card_id": c, "issue": kinds[c].kind, "severity": kinds[c].severity} for c in bad
            ],
            cards_scanned=scanned,
            summary="Seeded problems flagged.",
        ),
    ]


def test_demo_data_and_an_agent_run_on_postgres(
    cli: Any, scripted: Any, pg_url: str, tmp_path: Path
) -> None:
    invoke, models = cli
    result = invoke(["demo-data", "--database-url", pg_url])
    assert result.exit_code == 0, result.output
    assert "208 cards" in result.output and pg_url.split("@")[-1] in result.output
    again = invoke(["demo-data", "--database-url", pg_url])
    assert again.exit_code == 2 and "already holds learning data" in again.output
    assert _count(pg_url, "SELECT count(*) FROM users") == 3

    with LearningStore.open(pg_url) as store:
        report = store.call("find_quality_issues")
    kinds = {i.card_id: i for i in report.issues}
    bad = sorted(kinds)
    models.append(scripted(*_governance_script(bad, report.cards_scanned, kinds)))
    args = ["run", "governance", "Check the cards.", "--database-url", pg_url]
    result = invoke([*args, "--thread", "g1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["metadata"]["agent_name"] == "governance"
    # the tool wrote into PostgreSQL, next to the run's checkpoints; no SQLite file appeared
    assert _count(pg_url, "SELECT count(DISTINCT card_id) FROM card_flags") == len(bad)
    assert _count(pg_url, "SELECT count(*) FROM checkpoints WHERE thread_id = 'g1'") > 0
    assert list(tmp_path.glob("*.sqlite")) == []
    with psycopg.connect(pg_url) as conn:  # the recipe names the run's database, no password
        sql = "SELECT metadata->>'noema_cli_recipe' FROM checkpoints WHERE thread_id = 'g1'"
        recipes = {json.loads(row[0])["data"] for row in conn.execute(sql) if row[0]}
    assert recipes == {"@database"}


def test_run_writes_the_sample_into_an_empty_postgres(cli: Any, scripted: Any, pg_url: str) -> None:
    invoke, models = cli
    models.append(
        scripted(
            plan_reply("Measure"),
            tools_reply(call("compute_calibration", {"user_id": 3})),
            text("measured"),
            structured("CalibrationAdvice", brier=0.2, ece=0.1, bias=-0.2, advice="Trust more."),
        )
    )
    args = ["run", "calibration", "Calibrated?", "--user", "cleo", "--json"]
    result = invoke(args, env={"NOEMA_DATABASE_URL": pg_url})
    assert result.exit_code == 0, result.output
    assert "had no learning data: wrote the sample" in result.output
    assert _count(pg_url, "SELECT count(*) FROM cards") == 208


def test_the_learning_store_location_follows_the_environment(pg_url: str) -> None:
    assert learning_location(None, env={"NOEMA_DATABASE_URL": pg_url}) == pg_url
    assert learning_location(None, env={"NOEMA_LEARNING_DB": pg_url}) == pg_url
    own = {"NOEMA_DATABASE_URL": "sqlite:///runs.sqlite"}  # a SQLite URL keeps its own file
    assert learning_location(None, env=own) == Path("noema-learning.sqlite")
    assert learning_location("x.db", env={"NOEMA_DATABASE_URL": pg_url}) == Path("x.db")
    assert learning_location(None, env={}, database=pg_url) == pg_url


def test_langgraph_factory_reads_the_store_from_the_database_url(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    from noema_graph.agents import get_graph, graphs
    from noema_graph.agents.learners import read_learners

    monkeypatch.delenv("NOEMA_LEARNING_DB", raising=False)
    monkeypatch.setenv("NOEMA_DATABASE_URL", pg_url)
    location = graphs._db()  # pyright: ignore[reportPrivateUsage]
    assert location == pg_url
    assert read_learners(location) == []  # no table yet, and none is created
    write_demo_data(pg_url)
    assert [x.name for x in read_learners(location)] == ["ada", "ben", "cleo"]
    graph = get_graph("calibration", model=scripted(), db=location)
    assert "tool_node" in graph.get_graph().nodes


def test_concurrent_reviews_of_one_card_lose_no_update(pg_url: str) -> None:
    summary = write_demo_data(pg_url)
    user, card, per_thread, threads = summary.users["ada"], 1, 8, 4
    with LearningStore.open(pg_url) as store:
        before = store.run(_reps(user, card), write=False)
    errors: list[BaseException] = []

    def review() -> None:
        try:
            with LearningStore.open(pg_url) as store:
                for _ in range(per_thread):
                    store.call(
                        "record_review", user_id=user, card_id=card, rating=3, response_time_ms=1
                    )
        except BaseException as exc:  # reported by the assert below
            errors.append(exc)

    workers = [threading.Thread(target=review) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    with LearningStore.open(pg_url) as store:
        after = store.run(_reps(user, card), write=False)
    # every review's read-modify-write of the card's FSRS state saw the one before it
    assert after == before + per_thread * threads


def _reps(user: int, card: int) -> Op[int]:
    row = yield from fetch_one(
        "SELECT COALESCE(MAX(reps), 0) AS reps FROM card_states WHERE user_id = ? AND card_id = ?",
        (user, card),
    )
    assert row is not None
    return int(row["reps"])


def test_pooled_stores_reuse_connections_and_replace_dead_ones(pg_url: str) -> None:
    from noema_graph.storage.sql.connections import POOL_SIZE, close_pools

    def backend_pids(times: int) -> set[int]:
        pids: set[int] = set()
        for _ in range(times):
            with LearningStore.open(pg_url, pooled=True) as store:
                pids.add(store.connection.info.backend_pid)
                assert store.call("list_categories").categories == []
        return pids

    try:
        used = backend_pids(12)
        assert len(used) <= POOL_SIZE  # given back and lent again, not one per open
        with psycopg.connect(pg_url, autocommit=True) as admin:  # the server drops them all
            for pid in used:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert not backend_pids(3) & used  # dead ones were replaced, no call failed
    finally:
        close_pools()


def test_processes_opening_a_new_database_at_once_migrate_it_once(pg_url: str) -> None:
    reports: list[tuple[int, ...]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def open_store() -> None:
        try:
            barrier.wait()
            with LearningStore.open(pg_url) as store:
                reports.append(store.migration.applied)
        except BaseException as exc:  # reported by the assert below
            errors.append(exc)

    workers = [threading.Thread(target=open_store) for _ in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    every = tuple(m.version for m in MIGRATIONS)
    assert sorted(reports) == [(), (), (), (), (), every]  # the lock let one migrate
    assert _count(pg_url, "SELECT count(*) FROM schema_version") == len(MIGRATIONS)
