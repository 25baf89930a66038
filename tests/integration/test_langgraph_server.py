"""``langgraph dev`` serves the agents: schemas, a run with the learner in the context, state.

Starts the real LangGraph development server (``langgraph-cli[inmem]``, a dev dependency) on a
free port of 127.0.0.1 as a subprocess, without ``--allow-blocking``, with the project's own
``langgraph.json`` (its paths made absolute, so the server's ``.langgraph_api/`` lands in a
temporary directory) and a scripted model selected by ``NOEMA_MODEL``
(:mod:`tests.scripted_openai`). It stops the server at the end and checks that no process of
it is left and that its port is closed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from noema_graph.noema import LearningStore, write_demo_data
from tests.scripted import call, plan_reply, structured, text, tools_reply
from tests.scripted_openai import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _config(tmp_path: Path) -> Path:
    """Write the project's langgraph.json with absolute paths into ``tmp_path``."""
    config = json.loads((ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {
        name: str(ROOT / spec.removeprefix("./")) for name, spec in config["graphs"].items()
    }
    path = tmp_path / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Interrupt the server's process group (as Ctrl-C would); kill what outlives the timeout."""
    os.killpg(server.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while _group_alive(server.pid) and time.monotonic() < deadline:
        server.poll()
        time.sleep(0.1)
    if _group_alive(server.pid):
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        pytest.fail(f"langgraph dev was still running {STOP_TIMEOUT_S:.0f} s after SIGINT")
    server.wait()


def _wait_ready(server: subprocess.Popen[bytes], log: Path) -> int:
    """Return the port the server listens on once ``/ok`` answers.

    Read from its banner: ``langgraph dev`` moves to another port when the one asked for is
    taken (another process may have bound it since :func:`_free_port` saw it free).
    """
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(
                f"langgraph dev exited with {server.returncode}:\n{log.read_text()[-4000:]}"
            )
        banner = re.search(r"API: \S*http://127\.0\.0\.1:(\d+)", log.read_text())
        try:
            if banner and httpx.get(f"http://127.0.0.1:{banner[1]}/ok").status_code == 200:
                return int(banner[1])
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    pytest.fail(
        f"langgraph dev did not answer in {START_TIMEOUT_S:.0f} s:\n{log.read_text()[-4000:]}"
    )


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    return Path(write_demo_data(tmp_path / "learning.sqlite").path)


@pytest.fixture
def model(demo_db: Path) -> Iterator[ScriptedOpenAIServer]:
    """The learning agent's replies for ada (user_id 1): plan, list_due_cards, the answer."""
    with LearningStore.open(demo_db) as store:
        due = store.call("list_due_cards", user_id=1, limit=10)
    pick = min((c for c in due.cards if c.due is not None), key=lambda c: c.retrievability)
    script = [
        plan_reply("Pick the next card"),
        tools_reply(call("list_due_cards", {"user_id": 1, "limit": 10})),
        text(f"card {pick.card.id} has the lowest recall"),
        structured(
            "NextCard",
            card_id=pick.card.id,
            reason="lowest retrievability",
            expected_recall=pick.retrievability,
        ),
    ]
    with ScriptedOpenAIServer(script).running() as served:
        yield served


@contextmanager
def langgraph_dev(tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """Run ``langgraph dev`` (no ``--allow-blocking``) with ``env`` added; yield its URL.

    On exit the server is stopped and the test fails if a process of it is left, its port is
    still open, or it logged a blocking call in its event loop.
    """
    assert LANGGRAPH.exists(), f"{LANGGRAPH} is missing: install the dev extra (scripts/setup.sh)"
    port = _free_port()
    server_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        **env,
    }
    server_env.pop("OPENAI_API_KEY", None)
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--config", str(_config(tmp_path))]
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=server_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as a whole
        )
    try:
        port = _wait_ready(server, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(server)
    assert not _group_alive(server.pid), "a process of langgraph dev outlived it"
    assert not _port_open(port), f"port {port} still open after langgraph dev stopped"
    assert "BlockingError" not in log.read_text(), log.read_text()[-4000:]


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.url}: {response.text[:2000]}"
    return response.json()


def test_langgraph_dev_runs_an_agent_for_the_learner_in_the_context(
    tmp_path: Path, demo_db: Path, model: ScriptedOpenAIServer
) -> None:
    env = {"NOEMA_MODEL": model.spec, "NOEMA_LEARNING_DB": str(demo_db)}
    with langgraph_dev(tmp_path, env) as url, httpx.Client(base_url=url, timeout=60.0) as client:
        graphs = {a["graph_id"] for a in _ok(client.post("/assistants/search", json={"limit": 50}))}
        assert {"learning", "governance", "ask"} <= graphs

        (assistant,) = _ok(client.post("/assistants/search", json={"graph_id": "learning"}))
        schemas = _ok(client.get(f"/assistants/{assistant['assistant_id']}/schemas"))
        assert "user_id" in schemas["context_schema"]["properties"]
        assert "messages" in schemas["input_schema"]["properties"]

        thread = _ok(client.post("/threads", json={}))["thread_id"]
        final = _ok(
            client.post(
                f"/threads/{thread}/runs/wait",
                json={
                    "assistant_id": "learning",
                    "input": {"messages": [{"role": "user", "content": "What next?"}]},
                    "context": {"user_id": "ada"},
                },
            )
        )
        assert "__error__" not in final, final["__error__"]
        output = final["output"]
        assert output["success"] is True and output["validated"] is True, output
        assert output["metadata"]["tools_used"] == ["list_due_cards"]

        state = _ok(client.get(f"/threads/{thread}/state"))
        assert state["values"]["output"]["result"] == output["result"]
        request = state["values"]["messages"][0]
        assert request["type"] == "human"
        assert request["content"] == "What next?"  # the request is never rewritten
        (tool,) = [s for s in state["values"]["trace"] if s["kind"] == "tool"]
        assert tool["action"]["input"]["user_id"] == 1  # injected from the run's context
        assert state["next"] == []

        history = _ok(client.get(f"/threads/{thread}/history", params={"limit": 50}))
        assert len(history) >= 4  # input, plan, ..., finalize: one checkpoint per superstep
        assert history[0]["checkpoint"] == state["checkpoint"]
        assert {"plan", "finalize"} <= {n for h in history for n in h["next"]}

    # the learner travels in the run's context, never in the model's prompt
    assert "[learner:" not in model.prompts()[0]
    model.assert_complete()


@pytest.mark.llm
def test_langgraph_dev_starts_the_embedded_model_off_the_event_loop(tmp_path: Path) -> None:
    # building a graph starts the embedded model (a second of loading and health checks):
    # the factories do it in a worker thread, so the server's event loop never blocks on it
    env = {"NOEMA_MODEL": "local", "NOEMA_LEARNING_DB": str(tmp_path / "absent.sqlite")}
    with langgraph_dev(tmp_path, env) as url, httpx.Client(base_url=url, timeout=60.0) as client:
        for graph in ("learning", "ask"):
            (assistant,) = _ok(client.post("/assistants/search", json={"graph_id": graph}))
            schemas = _ok(client.get(f"/assistants/{assistant['assistant_id']}/schemas"))
            assert schemas["graph_id"] == graph
            assert "user_id" in schemas["context_schema"]["properties"]
