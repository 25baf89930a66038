"""Classifying model-call failures without importing openai (noema_graph.models.failures)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion

from noema_graph.models.failures import is_provider_error, is_transient, is_unfinished_answer

ROOT = Path(__file__).resolve().parents[2]
REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(cls: type[openai.APIStatusError], code: int) -> openai.APIStatusError:
    return cls("boom", response=httpx.Response(code, request=REQUEST), body=None)


def completion(reason: str) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": reason,
                    "message": {"role": "assistant", "content": "cut"},
                }
            ],
        }
    )


TRANSIENT = [
    TimeoutError("slow"),
    ConnectionResetError("reset"),
    openai.APITimeoutError(request=REQUEST),
    openai.APIConnectionError(request=REQUEST),
    status_error(openai.RateLimitError, 429),
    status_error(openai.InternalServerError, 503),
    httpx.ConnectTimeout("slow", request=REQUEST),
    httpx.RemoteProtocolError("eof", request=REQUEST),
]
PROVIDER_ONLY = [
    status_error(openai.BadRequestError, 400),
    status_error(openai.AuthenticationError, 401),
    httpx.HTTPStatusError("404", request=REQUEST, response=httpx.Response(404, request=REQUEST)),
    FileNotFoundError("no such file"),
]
UNFINISHED = [
    openai.LengthFinishReasonError(completion=completion("length")),
    openai.ContentFilterFinishReasonError(),
]
NEITHER = [ValueError("parse"), KeyError("k"), RuntimeError("bug"), KeyboardInterrupt()]


@pytest.mark.parametrize("exc", TRANSIENT, ids=lambda e: type(e).__name__)
def test_transient_errors_are_retried_provider_errors(exc: BaseException) -> None:
    assert is_transient(exc) and is_provider_error(exc) and not is_unfinished_answer(exc)


@pytest.mark.parametrize("exc", PROVIDER_ONLY, ids=lambda e: type(e).__name__)
def test_other_provider_errors_are_not_retried(exc: BaseException) -> None:
    assert is_provider_error(exc) and not is_transient(exc) and not is_unfinished_answer(exc)


@pytest.mark.parametrize("exc", UNFINISHED, ids=lambda e: type(e).__name__)
def test_an_unfinished_answer_is_not_a_provider_failure(exc: BaseException) -> None:
    assert isinstance(exc, openai.OpenAIError)  # it is one by class, but not by meaning
    assert is_unfinished_answer(exc) and not is_provider_error(exc) and not is_transient(exc)


@pytest.mark.parametrize("exc", NEITHER, ids=lambda e: type(e).__name__)
def test_bugs_and_parse_errors_are_none_of_them(exc: BaseException) -> None:
    assert not (is_transient(exc) or is_provider_error(exc) or is_unfinished_answer(exc))


def test_classifying_never_imports_openai() -> None:
    code = (
        "import sys\n"
        "from noema_graph.models.failures import is_provider_error, is_transient\n"
        "assert is_transient(TimeoutError()) and not is_transient(ValueError())\n"
        "assert is_provider_error(OSError()) and not is_provider_error(ValueError())\n"
        "print('openai' in sys.modules, 'httpx' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
