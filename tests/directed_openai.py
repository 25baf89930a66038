"""A deterministic OpenAI-compatible model that answers by what each request asks.

:mod:`tests.scripted_openai` replays one fixed script, so it serves one run at a time. Runs
that go on concurrently, in several server processes, need a model whose answer depends on
the request alone. This one reads a directive from the run's first user message::

    Add the card. @tool create_cards {"deck_id": 1, "cards": [{"front": "q", "back": "a"}]}

and answers, like a model that always does what it is told:

- ``response_format`` ``PlanDraft``: a one-step plan.
- tools offered, no tool result yet: the directive's tool call (the tool must be offered).
- a tool result present (with or without tools offered): a short text saying the step is done. With
  ``@hold`` in the message the first such request of that message is held until
  :meth:`DirectedOpenAIServer.release` (the test kills the server process mid-run then).
- ``response_format`` of an agent's output schema: that schema's fields, taken from the
  directive and the tool's result (:data:`ANSWERS`).

Anything else (no directive, a tool that is not offered, an unknown schema, a streaming
call) is answered 400 and recorded; :meth:`DirectedOpenAIServer.assert_clean` fails on it.
Select it with ``NOEMA_MODEL=`` :attr:`DirectedOpenAIServer.spec`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from tests.scripted_openai import OpenAIServer, completion_body

MODEL_NAME = "directed"
HOLD_TIMEOUT_S = 120.0
DIRECTIVE = re.compile(r"@tool (\w+) (\{.*\})")


class Unanswerable(ValueError):
    """The request asks for something the directive does not say; answered 400."""


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)  # type: ignore[union-attr]
    return str(content or "")


def _first_user(body: dict[str, Any]) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            return _text(message)
    raise Unanswerable("the request has no user message")


def _directive(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    found = DIRECTIVE.search(_first_user(body))
    if found is None:
        raise Unanswerable(f"no '@tool NAME {{json}}' directive in {_first_user(body)[:200]!r}")
    return found[1], json.loads(found[2])


def _tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """Return the data of the latest tool result: a tool message, or an ``Observation:`` line.

    The final answer's prompt restates the results as ``Observation: {json}`` lines.
    """
    texts = [_text(m) for m in body.get("messages") or [] if m.get("role") == "tool"]
    for message in body.get("messages") or []:
        texts += [
            line.removeprefix("Observation: ")
            for line in _text(message).splitlines()
            if line.startswith("Observation: ")
        ]
    if not texts:
        raise Unanswerable("the output is asked for before any tool result")
    try:
        value = json.loads(texts[-1])
    except json.JSONDecodeError as exc:
        raise Unanswerable(f"the tool result is not JSON: {texts[-1][:200]!r}") from exc
    return value.get("data", value) if isinstance(value, dict) else {"value": value}


def _generated_cards(body: dict[str, Any]) -> dict[str, Any]:
    _, args = _directive(body)
    ids = _tool_result(body)["card_ids"]
    return {"deck_id": args["deck_id"], "card_ids": ids, "summary": "Cards created."}


def _governance_report(body: dict[str, Any]) -> dict[str, Any]:
    flag = _tool_result(body)
    flagged = {"card_id": flag["card_id"], "issue": "manual_flag", "severity": flag["severity"]}
    return {"flagged": [flagged], "cards_scanned": 0, "summary": "One card flagged."}


ANSWERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "PlanDraft": lambda body: {"goal": "Do what was asked.", "steps": ["Call the tool"]},
    "GeneratedCards": _generated_cards,
    "GovernanceReport": _governance_report,
}
"""Structured answers by ``response_format`` schema name."""


def _schema_name(body: dict[str, Any]) -> str | None:
    response_format = body.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return None
    return str(response_format["json_schema"]["name"])


class DirectedOpenAIServer(OpenAIServer):
    """Serve on 127.0.0.1 (a free port) while :meth:`running` is entered."""

    model_name = MODEL_NAME

    def __init__(self) -> None:
        super().__init__()
        self.held = threading.Event()
        self._released = threading.Event()
        self._holds_done: set[str] = set()

    def closing(self) -> None:
        """Release held requests before the port closes."""
        self.release()

    def release(self) -> None:
        """Let held requests go on (their client may be gone by then)."""
        self._released.set()

    def assert_clean(self) -> None:
        """Fail when a request could not be answered."""
        assert not self.errors, f"unanswerable model requests: {self.errors}"

    def reply_to(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the HTTP status and JSON answer for one chat completion request."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
        try:
            message = self._answer(body)
        except (Unanswerable, KeyError, json.JSONDecodeError) as exc:
            with self._lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return 400, {"error": {"message": str(exc), "type": "invalid_request_error"}}
        return 200, _completion(message, number)

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("stream"):
            raise Unanswerable("streaming is not supported")
        schema = _schema_name(body)
        if schema is not None:
            if schema not in ANSWERS:
                raise Unanswerable(f"no answer for schema {schema!r}")
            return {"role": "assistant", "content": json.dumps(ANSWERS[schema](body))}
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        if any(m.get("role") == "tool" for m in body.get("messages") or []):
            self._maybe_hold(_first_user(body))
            return {"role": "assistant", "content": "The step is done."}
        if not offered:
            last = _text((body.get("messages") or [{}])[-1])[:300]
            raise Unanswerable(f"no schema, no tools, no tool result: nothing to do ({last!r})")
        name, args = _directive(body)
        if name not in offered:
            raise Unanswerable(f"directive tool {name!r} not offered ({sorted(offered)})")
        digest = hashlib.sha256(_first_user(body).encode()).hexdigest()[:12]
        call = {"id": f"call_{digest}", "type": "function"}  # the same on a resume
        call["function"] = {"name": name, "arguments": json.dumps(args)}
        return {"role": "assistant", "content": "", "tool_calls": [call]}

    def _maybe_hold(self, request: str) -> None:
        if "@hold" not in request:
            return
        with self._lock:
            if request in self._holds_done:
                return
            self._holds_done.add(request)
        self.held.set()
        self._released.wait(HOLD_TIMEOUT_S)


def _completion(message: dict[str, Any], number: int) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return completion_body(message, finish, number, MODEL_NAME)
