"""Keep secrets out of log lines, events and span attributes.

Tool arguments whose name looks secret (``password``, ``api_key``, ``token``...) are masked,
every argument of a tool marked ``metadata={"sensitive": True}`` is masked, and the names in
``metadata={"sensitive_args": [...]}`` are masked. Text is scrubbed of key-shaped strings and
of the values of secret environment variables.

When the environment is read: the secret values are collected from ``os.environ`` at the
first :func:`scrub` and kept. Every later call compares ``os.environ`` with the copy they were
read from (one C-level dict comparison, well under a microsecond) and reads it again only when
a variable was set, changed or removed since, so a key exported after start-up is masked from
the next call on. (Changes that bypass ``os.environ``, such as ``os.putenv``, are not visible
to Python.) :func:`refresh_secrets` forces a re-read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
_SECRET_WORDS = ("key", "token", "secret", "password", "bearer")
"""Text holding none of these words (case-folded) holds nothing ``_SECRET_TEXT`` matches.

``str.casefold`` maps every character that ``re.IGNORECASE`` matches to an ASCII letter of
these words (``\u017f``, the Kelvin sign) onto that letter, and substring tests on it are ~20
times faster than an ignore-case regex search."""
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
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_args(v, names) for v in value]
    if isinstance(value, str):
        return scrub(value)
    return value


class _EnvSecrets:
    """The values of secret-named environment variables, read again only when they change."""

    def __init__(self) -> None:
        # (the os.environ contents the values were read from, the values); swapped whole
        self._state: tuple[dict[Any, Any] | None, tuple[str, ...]] = (None, ())

    def values(self) -> tuple[str, ...]:
        """Return the secret values, in ``os.environ`` order, re-reading it if it changed."""
        current = _environ_data()
        seen, values = self._state
        if current is None or seen != current:
            values = _read()
            self._state = (None if current is None else dict(current)), values
        return values

    def refresh(self) -> None:
        """Forget the values read so far: the next call reads ``os.environ`` again."""
        self._state = (None, ())


def _environ_data() -> Mapping[Any, Any] | None:
    """Return the dict behind ``os.environ`` (CPython's ``_data``), or None if there is none.

    Comparing it costs a C-level dict comparison of encoded strings; decoding and matching
    every variable name, as :func:`_read` does, costs about 100 times more.
    """
    data = getattr(os.environ, "_data", None)
    return data if isinstance(data, dict) else None


def _read() -> tuple[str, ...]:
    return tuple(
        v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= _MIN_ENV_SECRET
    )


_ENV_SECRETS = _EnvSecrets()


def refresh_secrets() -> None:
    """Read the secret environment values again at the next :func:`scrub`.

    Changes made through ``os.environ`` are detected without it; it resets the cache
    (tests, or a process that rebinds ``os.environ`` itself).
    """
    _ENV_SECRETS.refresh()


def scrub(text: str) -> str:
    """Return ``text`` with key-shaped strings and secret environment values masked."""
    for secret in _ENV_SECRETS.values():
        if secret in text:
            text = text.replace(secret, MASK)
    if "sk-" in text or _has_secret_word(text):
        text = _SECRET_TEXT.sub(_mask_match, text)
    return text


def _has_secret_word(text: str) -> bool:
    folded = text.casefold()
    return any(word in folded for word in _SECRET_WORDS)


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
            self.args[tool.name] = frozenset(str(n) for n in names)

    def redact(self, tool: str, args: Any) -> Any:
        """Return ``args`` of a call to ``tool`` as they may be logged."""
        if tool in self.whole:
            return MASK
        return redact_args(args, self.args.get(tool, ()))
