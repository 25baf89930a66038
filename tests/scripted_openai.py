"""A strict scripted chat model served over HTTP, for graphs that run in another process.

``langgraph dev`` builds its graphs in its own process, where no Python object can be handed
in; it picks the model from the environment like any user would. This server answers
``POST /v1/chat/completions`` in the OpenAI format from a fixed script, so a test selects it
with ``NOEMA_MODEL=openai-compatible:scripted@<base_url>`` (:meth:`ScriptedOpenAIServer.spec`).

The script is made of the same replies as :mod:`tests.scripted` (``plan_reply``,
``tools_reply``, ``structured``, ``text``). A ``structured(Name, ...)`` reply answers a
request whose ``response_format`` is the ``json_schema`` ``Name`` with the arguments as JSON
content, the way OpenAI-compatible servers answer structured output. Like the in-process
model it is strict: it records every request, an unexpected request (script exhausted, the
wrong schema, a streaming call) is answered 400, which the client does not retry, and
:meth:`ScriptedOpenAIServer.assert_complete` fails on any of those or on unused replies.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from langchain_core.messages import AIMessage

MODEL_NAME = "scripted"


class OpenAIServer:
    """An OpenAI-compatible chat server on 127.0.0.1 (a free port) for tests; subclasses
    answer each request in :meth:`reply_to`."""

    model_name = MODEL_NAME

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._http: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """Return the OpenAI-compatible base URL (``http://127.0.0.1:<port>/v1``)."""
        assert self._http is not None, f"the {self.model_name} model server is not running"
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    @property
    def spec(self) -> str:
        """Return the model spec that selects this server (for ``NOEMA_MODEL``)."""
        return f"openai-compatible:{self.model_name}@{self.base_url}"

    @contextmanager
    def running(self) -> Iterator[Self]:
        """Serve in a background thread; the port is closed on exit (after :meth:`closing`)."""
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._http.daemon_threads = True
        thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.closing()
            self._http.shutdown()
            self._http.server_close()
            thread.join()

    def closing(self) -> None:
        """Called before the port closes (a subclass releases what it holds)."""

    def reply_to(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the HTTP status and JSON answer for one chat completion request."""
        raise NotImplementedError


class ScriptedOpenAIServer(OpenAIServer):
    """Serve ``script`` on 127.0.0.1 (a free port) while :meth:`running` is entered."""

    def __init__(self, script: list[AIMessage]) -> None:
        super().__init__()
        self.script = list(script)

    def reply_to(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the HTTP status and JSON answer for one chat completion request."""
        with self._lock:
            self.requests.append(body)
            problem = _unexpected(body, self.script)
            if problem is not None:
                self.errors.append(problem)
                return 400, {"error": {"message": problem, "type": "invalid_request_error"}}
            return 200, _completion(self.script.pop(0), body, len(self.requests))

    def prompts(self) -> list[str]:
        """Return the text of every request's messages, one string per request."""
        return ["\n".join(str(m.get("content")) for m in r["messages"]) for r in self.requests]

    def assert_complete(self) -> None:
        """Fail when a request was unexpected or a scripted reply was never used."""
        assert not self.errors, f"unexpected model requests: {self.errors}"
        assert not self.script, f"{len(self.script)} scripted replies were never used"


def _schema_name(body: dict[str, Any]) -> str | None:
    response_format = body.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return None
    return str(response_format["json_schema"]["name"])


def _unexpected(body: dict[str, Any], script: list[AIMessage]) -> str | None:
    last = str((body.get("messages") or [{}])[-1].get("content"))[:200]
    if body.get("stream"):
        return f"streaming is not scripted (request: {last!r})"
    if not script:
        return f"script exhausted; unexpected request: {last!r}"
    wanted, reply = _schema_name(body), script[0]
    names = [c["name"] for c in reply.tool_calls]
    if wanted is not None and names != [wanted]:
        return f"the request wants schema {wanted!r}, the next reply is {names or reply.content!r}"
    return None


def _completion(reply: AIMessage, body: dict[str, Any], number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    finish = "stop"
    if _schema_name(body) is not None:
        message["content"] = json.dumps(reply.tool_calls[0]["args"])
    elif reply.tool_calls:
        finish = "tool_calls"
        message["tool_calls"] = [
            {
                "id": call["id"] or f"call_{number}_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    return completion_body(message, finish, number, MODEL_NAME)


def completion_body(
    message: dict[str, Any], finish: str, number: int, model: str
) -> dict[str, Any]:
    """Return an OpenAI chat completion carrying ``message`` (fixed token counts)."""
    return {
        "id": f"chatcmpl-{model}-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length", "0"))
            status, answer = server.reply_to(json.loads(self.rfile.read(length)))
            # the client may be gone by then (a held request whose server process was killed)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(status, answer)

        def _send(self, status: int, answer: dict[str, Any]) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Keep the test output quiet; requests are recorded on the server."""

    return Handler
