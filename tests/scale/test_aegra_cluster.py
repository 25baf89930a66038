"""Two Aegra servers on one PostgreSQL serve Noema agents: a run moves between them.

Real processes throughout: PostgreSQL from the wheel (:mod:`tests.pg`, as an unprivileged uid
under root), two Aegra servers started by ``deploy/migrate.sh`` and ``deploy/serve.sh`` on free
ports of 127.0.0.1, and a deterministic model over HTTP (:mod:`tests.directed_openai`) that
answers each request by what it asks, so concurrent runs need no shared script.

Sixteen runs are created round-robin through both servers' HTTP API, all at once: fourteen
``content_generation`` runs that each create one card, one ``governance`` run whose
``flag_card`` call waits for approval (``NOEMA_CONFIRM_TOOLS``), and one ``content_generation``
run whose model holds its answer after the tool ran. Server A is then killed with SIGKILL in
the middle of that run; both the paused run and the killed one are resumed through server B
and complete. The killed run's own row does not stay ``running``: server B's heartbeat
(``deploy/aegra_app.py``, :mod:`noema_graph.server_runs`) marks it ``error`` within 30 s of
the kill, with a message that says how to resume. Then the rows are counted: every thread's
checkpoints form one unbroken chain (no step lost, none written twice), each non-idempotent
call has exactly one tool-ledger entry (flag_card is idempotent: it has none), and the
learning store holds exactly one card per create_cards call and one flag. Every checkpoint
and write the servers stored decodes with noema's allow-list and holds only allow-listed
classes, and LangGraph's own serializer (pickle off, noema's allow-list) reads every one of
them to the same value: the stock format holds on PostgreSQL too.
``noema_graph.inspect.threads(url)`` lists the
sixteen threads Aegra wrote, all ``done``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import psycopg
import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from noema_graph.inspect import threads as list_threads
from noema_graph.noema import LearningStore, write_demo_data
from noema_graph.persistence import allowed_types, serializer
from noema_graph.storage.sql.driver import fetch_one
from tests.aegra import AegraServer, aegra_cluster
from tests.directed_openai import DirectedOpenAIServer
from tests.pg import PostgresServer

RUNS = 16
CONFIRM, HELD = 0, 2  # run numbers; even numbers go to server A
WAIT_S = 120.0
ENDED_WITHIN_S = 30.0
"""How soon after the SIGKILL the killed server's run must have left ``running``."""
FLAG_REASON = "scale test: ambiguous front"


@pytest.fixture
def learning_db(pg_server: PostgresServer) -> str:
    """The database both servers share, with the demo learners: one URL for everything."""
    database = pg_server.create_database(f"aegra_scale_{uuid4().hex[:8]}")
    return str(write_demo_data(database).path)


def _count(sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = yield from fetch_one(sql, params)
    assert row is not None
    return int(row["n"])


def learning_counts(url: str) -> tuple[int, int, int]:
    """Return (scale cards, distinct scale card fronts, scale flags) in the learning store."""
    cards = "FROM cards WHERE front LIKE 'scale run %'"
    with LearningStore.open(url) as store:
        total = store.run(_count(f"SELECT count(*) AS n {cards}"), write=False)
        distinct = store.run(_count(f"SELECT count(DISTINCT front) AS n {cards}"), write=False)
        flags = store.run(
            _count("SELECT count(*) AS n FROM card_flags WHERE reason = ?", (FLAG_REASON,)),
            write=False,
        )
    return total, distinct, flags


def _request(number: int) -> tuple[str, str]:
    """Return the agent and the message of run ``number`` (a directive for the model)."""
    if number == CONFIRM:
        flag = {"card_id": 1, "reason": FLAG_REASON, "severity": "high"}
        return "governance", f"Flag card 1. @tool flag_card {json.dumps(flag)}"
    card = {"front": f"scale run {number}", "back": f"answer {number}"}
    hold = " @hold" if number == HELD else ""
    directive = json.dumps({"deck_id": 1, "cards": [card]})
    return "content_generation", f"Add a card to deck 1.{hold} @tool create_cards {directive}"


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.url}: {response.text[:2000]}"
    return response.json()


def _start(server: AegraServer, number: int) -> str:
    """Create run ``number``'s thread on ``server``; return its id."""
    return _ok(httpx.post(f"{server.url}/threads", json={}, timeout=WAIT_S))["thread_id"]


def _wait(server: AegraServer, thread: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create a run on ``thread`` through ``server`` and return its final values."""
    body = {"assistant_id": body.pop("agent"), "context": {"user_id": "ada"}, **body}
    url = f"{server.url}/threads/{thread}/runs/wait"
    return _ok(httpx.post(url, json=body, timeout=WAIT_S))


def _run(server: AegraServer, thread: str, number: int) -> dict[str, Any]:
    agent, message = _request(number)
    body = {"agent": agent, "input": {"messages": [{"role": "user", "content": message}]}}
    return _wait(server, thread, body)


@contextmanager
def _pool(model: DirectedOpenAIServer) -> Iterator[ThreadPoolExecutor]:
    """Run the clients in threads; a held model answer is let go before they are joined."""
    pool = ThreadPoolExecutor(RUNS)
    try:
        yield pool
    finally:
        model.release()
        pool.shutdown()


@pytest.fixture
def model() -> Iterator[DirectedOpenAIServer]:
    with DirectedOpenAIServer().running() as served:
        yield served
    served.assert_clean()


def test_two_aegra_servers_share_runs_and_survive_a_kill(
    aegra: Path,
    pg_server: PostgresServer,
    tmp_path: Path,
    learning_db: str,
    model: DirectedOpenAIServer,
) -> None:
    database = learning_db  # checkpoints, Store, Aegra's tables and the learning store
    env = {
        "NOEMA_MODEL": model.spec,
        "NOEMA_LEARNING_DB": learning_db,
        "NOEMA_CONFIRM_TOOLS": "flag_card",
    }
    with aegra_cluster(database, 2, env, tmp_path) as servers, _pool(model) as pool:
        a, b = servers
        threads = [_start(servers[n % 2], n) for n in range(RUNS)]
        futures: list[Future[dict[str, Any]]] = [
            pool.submit(_run, servers[n % 2], threads[n], n) for n in range(RUNS)
        ]
        others = [f for n, f in enumerate(futures) if n != HELD]
        wait(others, timeout=WAIT_S)
        outputs = {n: f.result(timeout=0) for n, f in enumerate(futures) if n != HELD}
        for number, values in outputs.items():
            if number != CONFIRM:
                assert values["output"]["success"] is True, (number, values.get("output"))

        # the governance run waits for approval of its flag_card call
        assert not outputs[CONFIRM].get("output"), outputs[CONFIRM]["output"]
        paused = _ok(httpx.get(f"{b.url}/threads/{threads[CONFIRM]}/state"))
        assert paused["next"] == ["review_tools"], paused["next"]
        (confirm,) = paused["tasks"][0]["interrupts"]
        assert confirm["value"]["calls"][0]["name"] == "flag_card"

        # the held run is in the middle: its card is written, its model answer is pending
        assert model.held.wait(WAIT_S), "the held run never reached its model call"
        assert not futures[HELD].done()
        a.kill()
        killed_at = time.monotonic()
        model.release()
        with pytest.raises(httpx.TransportError):
            futures[HELD].result(timeout=WAIT_S)
        assert not a.alive()

        # both runs go on through server B
        approved = _wait(
            b, threads[CONFIRM], {"agent": "governance", "command": {"resume": "approve"}}
        )
        assert approved["output"]["success"] is True, approved["output"]
        assert approved["output"]["result"]["flagged"][0]["card_id"] == 1
        # the killed run resumes from its last checkpoint: its card was written before the kill
        crashed = _ok(httpx.get(f"{b.url}/threads/{threads[HELD]}/state"))
        assert crashed["next"], "the killed run had no step left"
        assert learning_counts(learning_db)[0] == RUNS - 1
        resume = {"agent": "content_generation", "input": None, "checkpoint": crashed["checkpoint"]}
        resumed = _wait(b, threads[HELD], resume)
        assert resumed["output"]["success"] is True, resumed["output"]
        for thread in threads:
            assert _ok(httpx.get(f"{b.url}/threads/{thread}/state"))["next"] == []
        killed_run = _wait_until_ended(database, threads[HELD], killed_at + ENDED_WITHIN_S)
        assert killed_run[0] == "error", killed_run
        assert "resume it on any server" in str(killed_run[1]), killed_run

    _assert_runs(database, threads)
    _assert_checkpoint_chains(database, threads)
    _assert_one_ledger_entry_per_call(database, threads)
    _assert_allow_listed_checkpoints(database, threads)
    assert learning_counts(learning_db) == (RUNS - 1, RUNS - 1, 1)
    # noema's inspection reads the threads Aegra wrote (no run summaries there: decoded)
    listed = {row.thread_id: row.status for row in list_threads(database)}
    assert listed == dict.fromkeys(threads, "done")


def _wait_until_ended(database: str, thread: str, deadline: float) -> tuple[str, str | None]:
    """Return (status, error) of ``thread``'s first run once it is not ``running``.

    Polls the runs table until ``deadline`` (a ``time.monotonic()`` value); the killed
    server's run must end by then.
    """
    sql = "SELECT status, error_message FROM runs WHERE thread_id = %s ORDER BY created_at"
    while True:
        with psycopg.connect(database) as conn:
            status, error = conn.execute(sql, (thread,)).fetchall()[0]
        if status != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status != "running", f"the killed server's run is still running {ENDED_WITHIN_S}s on"
    return status, error


def _assert_allow_listed_checkpoints(database: str, threads: list[str]) -> None:
    """Every blob the servers stored decodes with noema's allow-list, nothing blocked.

    Each value's classes are on the allow-list (or builtins), and LangGraph's own
    serializer, given that allow-list, decodes each value to the same value.
    """
    serde = serializer()
    stock = JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=allowed_types())
    with psycopg.connect(database) as conn:
        blobs = conn.execute(
            "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = ANY(%s)"
            " UNION ALL SELECT type, blob FROM checkpoint_writes WHERE thread_id = ANY(%s)",
            (threads, threads),
        ).fetchall()
    blocked = _Blocked()
    logging.getLogger("langgraph").addHandler(blocked)
    try:
        values = [
            (serde.loads_typed((kind, bytes(blob))), stock.loads_typed((kind, bytes(blob))))
            for kind, blob in blobs
            if kind not in ("empty", None)
        ]
    finally:
        logging.getLogger("langgraph").removeHandler(blocked)
    assert values and not blocked.messages, blocked.messages
    foreign = {
        n for ours, _ in values for n in _classes(ours) if not n.startswith(ALLOWED_PREFIXES)
    }
    assert not foreign, foreign
    assert all(ours == theirs for ours, theirs in values)


ALLOWED_PREFIXES = (
    "builtins.",
    "datetime.",
    "uuid.",
    "noema_graph.",
    "langchain_core.messages.",
    "langgraph.types.",  # Interrupt, Send, Overwrite: LangGraph's own, always revived
    "langgraph.checkpoint.serde.types.",  # _DeltaSnapshot (on noema's allow-list)
)
"""Modules whose classes the decoded checkpoints may hold (what the allow-list revives)."""


class _Blocked(logging.Handler):
    """Collects LangGraph's warnings about types its decoder refused or could not revive."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _classes(value: Any) -> Iterator[str]:
    """Yield ``module.Class`` of ``value`` and of everything inside it."""
    kind = type(value)
    yield f"{kind.__module__}.{kind.__qualname__}"
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _classes(key)
            yield from _classes(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _classes(item)
    elif hasattr(value, "model_dump"):  # a pydantic model: its fields
        for name in type(value).model_fields:
            yield from _classes(getattr(value, name))


def _assert_runs(database: str, threads: list[str]) -> None:
    """Aegra's runs: one per thread, plus the resume of the paused and of the killed run.

    The killed run's row is ``error``: server B marked it once server A's heartbeat stopped
    (deploy/README.md); its thread went on in the resume run.
    """
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT thread_id, array_agg(status ORDER BY created_at) FROM runs GROUP BY 1"
        ).fetchall()
    statuses = dict(rows)
    assert sorted(statuses) == sorted(threads)
    assert statuses.pop(threads[CONFIRM]) == ["interrupted", "success"]
    assert statuses.pop(threads[HELD]) == ["error", "success"]
    assert set(map(tuple, statuses.values())) == {("success",)}


def _assert_checkpoint_chains(database: str, threads: list[str]) -> None:
    """Each thread's checkpoints: one per step, no gap, each parent present."""
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT thread_id, count(*), count(DISTINCT metadata->>'step'),"
            " max((metadata->>'step')::int) - min((metadata->>'step')::int) + 1"
            " FROM checkpoints WHERE checkpoint_ns = '' AND thread_id = ANY(%s)"
            " GROUP BY thread_id",
            (threads,),
        ).fetchall()
        orphans = conn.execute(
            "SELECT count(*) FROM checkpoints c WHERE c.parent_checkpoint_id IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id"
            " AND p.checkpoint_ns = c.checkpoint_ns"
            " AND p.checkpoint_id = c.parent_checkpoint_id)"
        ).fetchone()
    assert len(rows) == len(threads)
    for thread, count, steps, span in rows:
        assert count == steps == span, f"thread {thread}: {count} checkpoints, {steps} steps"
        assert count >= 4, f"thread {thread}: only {count} checkpoints"
    assert orphans == (0,)


def _assert_one_ledger_entry_per_call(database: str, threads: list[str]) -> None:
    """One ledger entry per create_cards call (non-idempotent), settled as done.

    flag_card is idempotent (an upsert), so the governance run has no ledger entry.
    """
    with psycopg.connect(database) as conn:
        rows = conn.execute("SELECT thread_id, tool, status FROM noema_tool_ledger").fetchall()
    ledgered = [t for n, t in enumerate(threads) if n != CONFIRM]
    assert sorted(thread for thread, _, _ in rows) == sorted(ledgered)
    assert [(tool, status) for _, tool, status in rows] == [("create_cards", "done")] * len(
        ledgered
    )
