"""Rules about card text, shared by validation (create/update) and the quality scan."""

from __future__ import annotations

import re
import unicodedata

from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.models import CardKind

CLOZE_PATTERN = re.compile(r"\{\{c(\d+)::(.*?)(?:::(.*?))?\}\}", re.DOTALL)
"""Anki-style cloze deletion: ``{{c1::answer}}`` or ``{{c1::answer::hint}}``."""

_PUNCTUATION = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def cloze_deletions(text: str) -> list[tuple[int, str]]:
    """Return ``(number, answer)`` for every cloze deletion in ``text``."""
    return [(int(m.group(1)), m.group(2).strip()) for m in CLOZE_PATTERN.finditer(text)]


def duplicate_deletion(text: str) -> str | None:
    """Return an answer hidden by two deletions of ``text`` (ambiguous), or None."""
    seen: set[str] = set()
    for _number, answer in cloze_deletions(text):
        key = normalise(answer)
        if key in seen:
            return answer
        seen.add(key)
    return None


def normalise(text: str) -> str:
    """Fold case, Unicode forms, punctuation and whitespace, for duplicate detection."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCTUATION.sub(" ", folded)).strip()


def validate_card_text(kind: CardKind, front: str, back: str, *, field: str) -> None:
    """Check one card's text; ``field`` prefixes the names in errors (``cards[2]``).

    Raises:
        ToolInputError: Empty front or back, a cloze without a deletion, or a cloze hiding
            the same answer twice.
    """
    if not front.strip():
        raise ToolInputError(f"{field}.front", "is empty", fix="write the question or prompt")
    if not back.strip():
        raise ToolInputError(
            f"{field}.back", "is empty", fix="write the answer (for a cloze, the full sentence)"
        )
    if kind != "cloze":
        return
    if not cloze_deletions(front):
        raise ToolInputError(
            f"{field}.front",
            f"cloze card has no deletion in {front[:60]!r}",
            fix="wrap the hidden answer as {{c1::answer}}",
        )
    repeated = duplicate_deletion(front)
    if repeated is not None:
        raise ToolInputError(
            f"{field}.front",
            f"cloze hides {repeated!r} twice, so the card is ambiguous",
            fix="keep one deletion per answer or number them c1, c2 on different answers",
        )
