"""``langgraph dev`` serves an agent whose learning store is PostgreSQL (``NOEMA_DATABASE_URL``).

The same server set-up as :mod:`tests.integration.test_langgraph_server` (real subprocess, the
project's ``langgraph.json``, no ``--allow-blocking``, a scripted model over HTTP), with no
``NOEMA_LEARNING_DB``: the graph factories must find the learning store through the database
URL alone, as under a PostgreSQL server (Aegra).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from noema_graph.noema import LearningStore, write_demo_data
from tests.integration.test_langgraph_server import langgraph_dev
from tests.scripted import call, plan_reply, structured, text, tools_reply
from tests.scripted_openai import ScriptedOpenAIServer


@pytest.fixture
def pg_model(pg_url: str) -> Iterator[ScriptedOpenAIServer]:
    """The governance agent's replies: flag every issue found, then report."""
    write_demo_data(pg_url)
    with LearningStore.open(pg_url) as store:
        report = store.call("find_quality_issues")
    kinds = {i.card_id: i for i in report.issues}
    script = [
        plan_reply("Find and flag"),
        tools_reply(call("flag_quality_issues", {})),
        text(f"flagged {len(kinds)} cards"),
        structured(
            "GovernanceReport",
            flagged=[
                {"card_id": c, "issue": i.kind, "severity": i.severity} for c, i in kinds.items()
            ],
            cards_scanned=report.cards_scanned,
            summary="Seeded problems flagged.",
        ),
    ]
    with ScriptedOpenAIServer(script).running() as served:
        yield served


def test_langgraph_dev_runs_an_agent_on_the_postgres_learning_store(
    tmp_path: Path, pg_url: str, pg_model: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOEMA_LEARNING_DB", raising=False)
    env = {"NOEMA_MODEL": pg_model.spec, "NOEMA_DATABASE_URL": pg_url}
    with langgraph_dev(tmp_path, env) as url, httpx.Client(base_url=url, timeout=60.0) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        response = client.post(
            f"/threads/{thread}/runs/wait",
            json={
                "assistant_id": "governance",
                "input": {"messages": [{"role": "user", "content": "Check the cards."}]},
                "context": {"user_id": "ben"},
            },
        )
        assert response.status_code == 200, response.text[:2000]
        final = response.json()
        assert "__error__" not in final, final["__error__"]
        assert final["output"]["success"] is True, final["output"]
    with LearningStore.open(pg_url) as store:  # the tool wrote into PostgreSQL
        issues = store.call("find_quality_issues").issues
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT count(DISTINCT card_id) FROM card_flags").fetchone()
    assert row is not None and row[0] == len({i.card_id for i in issues}) > 0
    assert "[learner:" not in pg_model.prompts()[0]  # the learner is in the run's context
    pg_model.assert_complete()
