"""The one place graphs get their chat model from: :func:`make_model`.

Model specs:

* ``openai:<model>``: OpenAI, key from ``OPENAI_API_KEY``;
* ``openai-compatible:<model>@<base_url>`` (or ``openai-compatible:<model>`` with
  ``NOEMA_BASE_URL``): any OpenAI-compatible server, key from ``NOEMA_API_KEY`` if set;
* ``local``: the embedded SmolLM2 served by llama.cpp on 127.0.0.1 (see
  :mod:`noema_graph.models.local`);
* ``local:<path>.gguf``: any GGUF model file, served the same way; its window and size are
  read from the file's metadata (:mod:`noema_graph.models.gguf`).

Without a spec, ``NOEMA_MODEL`` gives it; else ``NOEMA_BASE_URL`` selects
``openai-compatible:default``; else ``OPENAI_API_KEY`` selects ``openai:gpt-4o-mini``; else
``local``. ``NOEMA_MODEL_PLANS`` (``1``/``0``) says whether the model plans when
:func:`make_model`'s ``plans`` does not (see :func:`~noema_graph.models.profile.model_plans`).
Environment variables are read here, once, and nowhere else in the package.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from noema_graph.errors import ConfigurationError
from noema_graph.models.local import LOCAL_MODEL_NAME, shared_local_server
from noema_graph.models.profile import (
    CONTEXT_WINDOW_KEY,
    PARAMETERS_KEY,
    PLANS_KEY,
    PROVIDER_KEY,
)

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_COMPATIBLE_MODEL = "default"
LOCAL_TEMPERATURE = 0.0
LOCAL_MAX_TOKENS = 1024
"""Cap on one local answer: a 135M model that starts repeating itself never stops alone."""
LOCAL_SAMPLING: Mapping[str, object] = MappingProxyType(
    {
        "dry_multiplier": 0.8,
        "dry_base": 1.75,
        "dry_allowed_length": 4,
        "dry_sequence_breakers": ["\n", ":", '"', "*", *"0123456789"],
        "logit_bias": [[")}", -6]],
    }
)
"""llama.cpp sampler fields sent with every local request (``extra_body``).

At temperature 0 the 135M model loops: a phrase, once repeated, repeats to the length cap.
The DRY sampler ("don't repeat yourself") penalises a token that would extend a sequence
already in the context by ``dry_multiplier * dry_base ** (length - dry_allowed_length)``, so
a verbatim loop is broken within a few tokens (the model may go on varying it: the
repetition check of :mod:`noema_graph.models.repetition` cuts what is left). llama.cpp
feeds the prompt to it too, so copying from an
observation is penalised as well; hence ``dry_allowed_length`` 4 (a concept name or id of up
to 4 tokens copies freely) and digits as sequence breakers (figures copy freely: without
them the model wrote a bias of 0.119 as 0.1195 after writing 0.119 once). ``repeat_penalty``
and ``frequency_penalty`` stay off: measured, they turned loops into ``"Ben ben ben"`` and
penalise every digit already written. The logit bias is for the token ``)}``: the model
closed ``{"code": "print(17 * 23)"}`` with it, leaving the string open (so the call never
ran); nothing valid in a JSON answer needs it. Figures: ``bench/bench_quality.py``.
"""
LOCAL_TIMEOUT_S = 300.0
"""Per-request timeout for the local server: a stuck call becomes a retried error, not a hang."""
_DUMMY_API_KEY = "sk-no-key-required"
_SPEC_FORMS = (
    "'local', 'local:<path>.gguf', 'openai:<model>' or 'openai-compatible:<model>@<base_url>'"
)
PLANS_ENV = "NOEMA_MODEL_PLANS"
"""Environment variable that says whether the model plans (``1``/``0``)."""
_FLAGS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
_URL_SUFFIX = re.compile(r"^(?P<model>.+?)@(?P<url>https?://\S+)$")

SpecProvider = Literal["openai", "openai-compatible", "local"]


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec.

    Attributes:
        provider: Which backend serves the model.
        model: Model name sent to the backend (for a GGUF file, its stem until the file's
            metadata names it).
        base_url: Server URL for ``openai-compatible``; None otherwise.
        path: The GGUF file of a ``local:<path>.gguf`` spec; None otherwise.
    """

    provider: SpecProvider
    model: str
    base_url: str | None = None
    path: Path | None = None


def resolve_spec(spec: str | None, env: Mapping[str, str]) -> str:
    """Return ``spec``, or the default chosen from ``env`` when it is None or blank."""
    if spec is not None and spec.strip():
        return spec.strip()
    if env.get("NOEMA_MODEL", "").strip():
        return env["NOEMA_MODEL"].strip()
    if env.get("NOEMA_BASE_URL", "").strip():
        return f"openai-compatible:{DEFAULT_COMPATIBLE_MODEL}"
    if env.get("OPENAI_API_KEY", "").strip():
        return f"openai:{DEFAULT_OPENAI_MODEL}"
    return "local"


def parse_model_spec(spec: str, env: Mapping[str, str] | None = None) -> ModelSpec:
    """Parse ``spec`` into a :class:`ModelSpec`.

    Args:
        spec: A model spec such as ``openai:gpt-4o-mini``.
        env: Environment to read ``NOEMA_BASE_URL`` from; defaults to ``os.environ``.

    Raises:
        ConfigurationError: The spec is malformed; the message names it and the fix.
    """
    env = os.environ if env is None else env
    text = spec.strip()
    if text in ("local", f"local:{LOCAL_MODEL_NAME}"):
        return ModelSpec("local", LOCAL_MODEL_NAME)
    prefix, sep, rest = text.partition(":")
    rest = rest.strip()
    if prefix == "local" and sep:
        return _local_file(spec, rest)
    if not sep or prefix not in ("openai", "openai-compatible"):
        raise _spec_error(spec, "unknown provider")
    if prefix == "openai":
        if not rest:
            raise _spec_error(spec, "the model name is missing", fix="e.g. 'openai:gpt-4o-mini'")
        return ModelSpec("openai", rest)
    match = _URL_SUFFIX.match(rest)
    if match:
        return ModelSpec("openai-compatible", match["model"], match["url"])
    base_url = env.get("NOEMA_BASE_URL", "").strip()
    if not rest or "@" in rest:
        raise _spec_error(
            spec,
            "expected '<model>@http(s)://host:port/v1'",
            fix="e.g. 'openai-compatible:llama3@http://127.0.0.1:8080/v1'",
        )
    if not base_url:
        raise _spec_error(
            spec,
            "no server URL",
            fix="append '@<base_url>' to the spec or set NOEMA_BASE_URL",
        )
    return ModelSpec("openai-compatible", rest, base_url)


def _local_file(spec: str, rest: str) -> ModelSpec:
    """Return the spec of the GGUF file ``rest`` names (its existence is checked on use)."""
    if not rest.lower().endswith(".gguf"):
        raise _spec_error(
            spec,
            "a local model is the embedded one or a GGUF file",
            fix="use 'local' for the embedded model or 'local:/path/to/model.gguf'",
        )
    path = Path(rest).expanduser()
    return ModelSpec("local", path.stem, path=path)


def plans_setting(env: Mapping[str, str]) -> bool | None:
    """Return ``NOEMA_MODEL_PLANS`` as a bool, or None when it is not set.

    Raises:
        ConfigurationError: The variable is set to something other than 1/0 (true/false).
    """
    text = env.get(PLANS_ENV, "").strip().lower()
    if not text:
        return None
    if text not in _FLAGS:
        raise ConfigurationError(
            PLANS_ENV,
            f"must be 1 or 0, got {env[PLANS_ENV]!r}",
            fix=f"{PLANS_ENV}=1 to make the model plan, 0 to follow the agents' default plans, "
            "or unset it to decide from the model",
        )
    return _FLAGS[text]


def _spec_error(spec: str, problem: str, *, fix: str | None = None) -> ConfigurationError:
    return ConfigurationError(
        "model",
        f"bad model spec {spec!r}: {problem}",
        fix=fix or f"use {_SPEC_FORMS}",
    )


def make_model(
    spec: str | None = None,
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    sampling: Mapping[str, object] | None = None,
    plans: bool | None = None,
    env: Mapping[str, str] | None = None,
) -> BaseChatModel:
    """Return the chat model named by ``spec`` (see the module docstring for the forms).

    Every model is a ``ChatOpenAI`` with ``stream_usage=True``, so token usage is reported
    in streamed runs too. ``local`` (and ``local:<path>.gguf``) starts the shared server of
    its file on first use; its metadata records its window and parameter count.

    Args:
        spec: Model spec; None picks the default from the environment.
        temperature: Sampling temperature; the provider's default when None (0 for local).
        max_tokens: Cap on answer tokens; none when None (1024 for local).
        sampling: llama.cpp sampler fields of the ``local`` model (``dry_multiplier``,
            ``frequency_penalty``...); None for :data:`LOCAL_SAMPLING`, ``{}`` for none.
            Ignored by the other providers.
        plans: Whether the model plans (and refines an agent's default plan); None for
            ``NOEMA_MODEL_PLANS``, else decided from the model (a remote one plans, a local
            one from 1B parameters on). Recorded in the model's metadata.
        env: Environment variables to read; defaults to ``os.environ``.

    Raises:
        ConfigurationError: The spec is malformed, a required variable is missing or
            invalid, or a ``local:`` path is missing or not a GGUF file.
        LLMError: The local server failed to start.
    """
    from langchain_openai import ChatOpenAI  # ~0.4 s of imports: only when a model is made

    env = os.environ if env is None else env
    parsed = parse_model_spec(resolve_spec(spec, env), env)
    plans = plans_setting(env) if plans is None else plans
    arguments: dict[str, Any] = {
        "model": parsed.model,
        **_provider_args(
            parsed, env, temperature=temperature, max_tokens=max_tokens, sampling=sampling
        ),
    }
    if plans is not None:
        arguments["metadata"] = {**arguments["metadata"], PLANS_KEY: plans}
    return ChatOpenAI(stream_usage=True, **arguments)


def _provider_args(
    parsed: ModelSpec,
    env: Mapping[str, str],
    *,
    temperature: float | None,
    max_tokens: int | None,
    sampling: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """Return the ChatOpenAI arguments of ``parsed``'s provider, besides model and streaming."""
    if parsed.provider == "local":
        server = shared_local_server(parsed.path)
        parameters = server.gguf_info().parameters
        return {
            "model": server.model_name,
            "base_url": server.start(),
            "api_key": SecretStr(_DUMMY_API_KEY),
            "temperature": LOCAL_TEMPERATURE if temperature is None else temperature,
            "max_completion_tokens": LOCAL_MAX_TOKENS if max_tokens is None else max_tokens,
            "max_retries": 1,
            "timeout": LOCAL_TIMEOUT_S,
            "extra_body": dict(LOCAL_SAMPLING if sampling is None else sampling),
            "metadata": {
                PROVIDER_KEY: "local",
                CONTEXT_WINDOW_KEY: server.n_ctx,
                PARAMETERS_KEY: parameters,
            },
        }
    sampling = {"temperature": temperature, "max_completion_tokens": max_tokens}
    if parsed.provider == "openai":
        key = env.get("OPENAI_API_KEY", "").strip()
        if not key:
            raise ConfigurationError(
                "OPENAI_API_KEY",
                f"is not set; model spec 'openai:{parsed.model}' needs it",
                fix="export OPENAI_API_KEY=sk-..., or use the offline model spec 'local'",
            )
        return {**sampling, "api_key": SecretStr(key), "metadata": {PROVIDER_KEY: "openai"}}
    return {
        **sampling,
        "base_url": parsed.base_url,
        "api_key": SecretStr(env.get("NOEMA_API_KEY", "").strip() or _DUMMY_API_KEY),
        "metadata": {PROVIDER_KEY: "openai-compatible"},
    }
