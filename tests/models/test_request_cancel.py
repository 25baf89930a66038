"""At the run's deadline the HTTP request to the model server is closed, not left running.

A real HTTP server on 127.0.0.1 plays a slow OpenAI-compatible endpoint: it answers the
plan at once and holds the next request for two seconds before writing its reply. With a
one-second budget the run ends in ``timeout``; the server's late write then fails because
the client closed the connection (the server would stop generating there).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from noema_graph import AgentConfig, build_agent_graph
from noema_graph.models import make_model
from noema_graph.nodes.llm import chat_model_of, request_options

HOLD_S = 2.0
PLAN = {"goal": "g", "steps": ["answer"]}


class _Slow(http.server.BaseHTTPRequestHandler):
    calls: list[str]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        planning = "response_format" in body
        if not planning:
            time.sleep(HOLD_S)
        content = json.dumps(PLAN) if planning else "late"
        reply = {
            "id": "x", "object": "chat.completion", "created": 0, "model": "slow",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            self.calls.append("answered")
        except OSError:  # the client went away
            self.calls.append("closed by the client")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def slow_server() -> Iterator[tuple[str, list[str]]]:
    calls: list[str] = []
    handler = type("Handler", (_Slow,), {"calls": calls})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", calls
    finally:
        server.shutdown()
        server.server_close()


def _wait_for(calls: list[str], count: int) -> None:
    deadline = time.monotonic() + HOLD_S + 5
    while len(calls) < count and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize("path", ["sync", "async"])
def test_the_request_is_closed_at_the_deadline(
    path: str, slow_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, calls = slow_server
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    model = make_model(f"openai-compatible:slow@{url}")
    config = AgentConfig(enabled_toolkits=(), timeout_s=1.0, model_retries=1)
    graph = build_agent_graph(config, model=model)
    inputs = {"messages": [("user", "go")]}
    state = graph.invoke(inputs) if path == "sync" else asyncio.run(graph.ainvoke(inputs))
    assert state["output"]["error"]["code"] == "timeout"
    _wait_for(calls, 2)
    assert calls == ["answered", "closed by the client"]


def test_only_openai_clients_get_a_request_timeout(scripted: Any) -> None:
    model = make_model("openai-compatible:slow@http://127.0.0.1:9/v1")
    bound = model.bind_tools([])
    assert chat_model_of(bound) is model
    assert request_options(bound, None) == {}
    options = request_options(bound, time.monotonic() + 5)
    assert 0 < options["timeout"] <= 5
    assert request_options(scripted(), time.monotonic() + 5) == {}
