"""How the CLI picks its chat model: say which one the environment chose, check it is reachable.

Imported by a command only when it needs a model (it loads the model factory).
"""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Mapping
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel

from noema_graph.errors import ConfigurationError
from noema_graph.models.factory import make_model, parse_model_spec, resolve_spec

CONNECT_TIMEOUT_S = 3.0
"""How long the endpoint check waits for a TCP connection."""
LOCAL_HINT = "--model local runs the embedded offline model"
_SPEC_VARIABLES = ("NOEMA_MODEL", "NOEMA_BASE_URL", "OPENAI_API_KEY")
"""The variables that pick the model when --model is not given, in resolve_spec's order."""


class EndpointUnreachable(ConfigurationError):
    """The model server of an ``openai-compatible`` spec refuses or ignores connections."""


def chosen_by(spec: str | None, env: Mapping[str, str]) -> str | None:
    """Return the environment variable that picks the model, or None (--model or local).

    ``None`` when ``spec`` is given or when nothing is set (the embedded model).
    """
    if spec is not None and spec.strip():
        return None
    if resolve_spec(None, env) == "local":
        return None
    return next(name for name in _SPEC_VARIABLES if env.get(name, "").strip())


def choice_line(spec: str | None, env: Mapping[str, str]) -> str | None:
    """Return the one line that says which model the environment chose, or None."""
    variable = chosen_by(spec, env)
    if variable is None:
        return None
    return f"model {resolve_spec(None, env)} (chosen by {variable}; {LOCAL_HINT})"


def endpoint_problem(url: str, *, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """Return why nothing answers at ``url`` (refused, unknown host, no answer), or None.

    Only a TCP connection is tried, not a request. Behind a proxy that applies to the host
    the check is skipped (None): the proxy, not this process, reaches the server.
    """
    parts = urlsplit(url)
    host = parts.hostname
    if host is None:
        return f"{url!r} names no host"
    if parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return _why(exc, host, port, timeout)


def _why(exc: OSError, host: str, port: int, timeout: float) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused at {host}:{port}"
    if isinstance(exc, socket.gaierror):
        return f"host {host!r} is unknown"
    if isinstance(exc, TimeoutError):
        return f"no answer from {host}:{port} in {timeout:.0f} s"
    return f"{host}:{port}: {exc.strerror or exc}"


def checked_model(spec: str | None, env: Mapping[str, str]) -> BaseChatModel:
    """Return the chat model for ``spec`` once its ``openai-compatible`` server answers.

    Raises:
        ConfigurationError: The spec is malformed or a variable it needs is missing.
        EndpointUnreachable: The ``openai-compatible`` server cannot be reached.
        LLMError: The embedded model failed to start.
    """
    resolved = resolve_spec(spec, env)
    parsed = parse_model_spec(resolved, env)
    if parsed.provider == "openai-compatible" and parsed.base_url is not None:
        problem = endpoint_problem(parsed.base_url)
        if problem is not None:
            raise EndpointUnreachable(
                "model",
                f"the server of {resolved!r} at {parsed.base_url} is unreachable: {problem}",
                fix=f"start it or check the URL, or use {LOCAL_HINT}",
            )
    return make_model(resolved, env=env)
