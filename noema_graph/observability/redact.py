"""Keep secrets out of log lines, events and span attributes.

Tool arguments whose name looks secret (``password``, ``api_key``, ``token``...) are masked,
every argument of a tool marked ``metadata={"sensitive": True}`` is masked, and the names in
``metadata={"sensitive_args": [...]}`` are masked. Text is scrubbed of key-shaped strings and
of the values of secret environment variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

MASK = "***"
SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|auth(orization)?|credential|"
    r"private[_-]?key|session[_-]?key|cookie",
    re.IGNORECASE,
)
_SECRET_TEXT = re.compile(
    r"(sk-[A-Za-z0-9_\-]{12,}|(?i:bearer)\s+[A-Za-z0-9._\-]{12,}|"
    r"(?i:(?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{4,})"
)
_MIN_ENV_SECRET = 8


def is_secret_name(name: str) -> bool:
    """Return True when an argument or variable called ``name`` holds a secret."""
    return SECRET_NAME.search(name) is not None


def redact_args(value: Any, extra: Iterable[str] = ()) -> Any:
    """Return ``value`` with secret-named keys (and the names in ``extra``) masked, recursively."""
    names = frozenset(extra)
    if isinstance(value, Mapping):
        return {
            str(k): MASK if (is_secret_name(str(k)) or k in names) else redact_args(v, names)
            for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
        }
    if isinstance(value, list | tuple):
        return [redact_args(v, names) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, str):
        return scrub(value)
    return value


def _env_secrets() -> list[str]:
    return [v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= _MIN_ENV_SECRET]


def scrub(text: str) -> str:
    """Return ``text`` with key-shaped strings and secret environment values masked."""
    for secret in _env_secrets():
        if secret in text:
            text = text.replace(secret, MASK)
    if "sk-" in text or re.search(r"(?i)bearer|key|token|secret|password", text):
        text = _SECRET_TEXT.sub(_mask_match, text)
    return text


def _mask_match(match: re.Match[str]) -> str:
    found = match.group(0)
    for sep in ("=", ":"):
        if sep in found and not found.startswith("sk-"):
            head = found.split(sep, 1)[0]
            return f"{head}{sep}{MASK}"
    if found.lower().startswith("bearer"):
        return f"Bearer {MASK}"
    return MASK


class SensitiveTools:
    """Which tools' inputs must be masked, learned from ``BaseTool.metadata``."""

    def __init__(self, tools: Iterable[BaseTool] = ()) -> None:
        """Read ``sensitive`` / ``sensitive_args`` from each tool's metadata."""
        self.whole: set[str] = set()
        self.args: dict[str, frozenset[str]] = {}
        for tool in tools:
            self.learn(tool)

    def learn(self, tool: BaseTool) -> None:
        """Record ``tool``'s sensitivity flags."""
        meta = tool.metadata or {}
        if meta.get("sensitive") is True:
            self.whole.add(tool.name)
        names = meta.get("sensitive_args")
        if isinstance(names, list | tuple | set | frozenset):
            self.args[tool.name] = frozenset(str(n) for n in names)  # pyright: ignore[reportUnknownVariableType]

    def redact(self, tool: str, args: Any) -> Any:
        """Return ``args`` of a call to ``tool`` as they may be logged."""
        if tool in self.whole:
            return MASK
        return redact_args(args, self.args.get(tool, ()))
