"""Card quality scan for the governance agent: duplicates, empty sides, ambiguous clozes.

:func:`find_quality_issues` only reads; :func:`flag_quality_issues` also raises one flag per
issue found, so an agent flags a whole collection in one call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from noema_graph.noema.clock import utc_now
from noema_graph.noema.content import cloze_deletions, duplicate_deletion, normalise
from noema_graph.noema.models import Severity
from noema_graph.noema.ops.cards import FlagCardInput, flag_card
from noema_graph.noema.ops.common import OpInput, OpResult, require_deck
from noema_graph.storage.sql.driver import Op, Row, fetch_all

IssueKind = Literal[
    "exact_duplicate",
    "near_duplicate",
    "empty_front",
    "empty_back",
    "cloze_without_deletion",
    "duplicate_cloze_deletion",
]


class QualityIssuesInput(OpInput):
    """Arguments of :func:`find_quality_issues`."""

    deck_id: int | None = Field(default=None, description="Only this deck.")


class QualityIssue(OpResult):
    """One problem found on one card."""

    card_id: int
    kind: IssueKind
    severity: Severity
    detail: str
    related_card_ids: list[int] = Field(
        default_factory=list, description="For duplicates: the earlier card(s) it repeats."
    )


class QualityReport(OpResult):
    """Every issue, by card id then kind."""

    cards_scanned: int
    issues: list[QualityIssue]


SEVERITY: dict[IssueKind, Severity] = {
    "exact_duplicate": "medium",
    "near_duplicate": "low",
    "empty_front": "high",
    "empty_back": "high",
    "cloze_without_deletion": "high",
    "duplicate_cloze_deletion": "medium",
}
"""How bad each kind of issue is."""


def _issue(card_id: int, kind: IssueKind, detail: str, related: int | None = None) -> QualityIssue:
    return QualityIssue(
        card_id=card_id,
        kind=kind,
        severity=SEVERITY[kind],
        detail=detail,
        related_card_ids=[] if related is None else [related],
    )


def card_issues(row: Row) -> list[QualityIssue]:
    """Return the issues visible on one card alone (empty sides, ambiguous clozes)."""
    found: list[QualityIssue] = []
    card_id, front = int(row["id"]), str(row["front"])
    if not front.strip():
        found.append(_issue(card_id, "empty_front", "the front is empty"))
    if not str(row["back"]).strip():
        found.append(_issue(card_id, "empty_back", "the back is empty"))
    if row["kind"] == "cloze" and front.strip():
        if not cloze_deletions(front):
            detail = "cloze card has no {{c1::...}} deletion"
            found.append(_issue(card_id, "cloze_without_deletion", detail))
        elif (repeated := duplicate_deletion(front)) is not None:
            detail = f"the answer {repeated!r} is hidden twice"
            found.append(_issue(card_id, "duplicate_cloze_deletion", detail))
    return found


def duplicate_issues(rows: list[Row]) -> list[QualityIssue]:
    """Report each later card repeating an earlier one.

    Exact: front and back identical after trimming. Near: same front once case, Unicode
    form, punctuation and spacing are folded.
    """
    exact: dict[tuple[str, str], int] = {}
    near: dict[str, int] = {}
    found: list[QualityIssue] = []
    for row in rows:
        card_id, front, back = int(row["id"]), str(row["front"]), str(row["back"])
        if not front.strip():
            continue
        key, folded = (front.strip(), back.strip()), normalise(front)
        if key in exact:
            detail = "same front and back as an earlier card"
            found.append(_issue(card_id, "exact_duplicate", detail, exact[key]))
        elif folded in near:
            detail = "same question as an earlier card, written differently"
            found.append(_issue(card_id, "near_duplicate", detail, near[folded]))
        exact.setdefault(key, card_id)
        near.setdefault(folded, card_id)
    return found


def find_quality_issues(params: QualityIssuesInput) -> Op[QualityReport]:
    """Scan cards for duplicates, empty sides and ambiguous clozes."""
    sql, args = "SELECT id, kind, front, back FROM cards", ()
    if params.deck_id is not None:
        yield from require_deck(params.deck_id)
        sql, args = sql + " WHERE deck_id = ?", (params.deck_id,)
    rows = yield from fetch_all(sql + " ORDER BY id", args)
    issues = [issue for row in rows for issue in card_issues(row)] + duplicate_issues(rows)
    issues.sort(key=lambda issue: (issue.card_id, issue.kind))
    return QualityReport(cards_scanned=len(rows), issues=issues)


class FlaggedIssues(QualityReport):
    """The issues found, each now flagged on its card."""

    flagged_cards: list[int] = Field(description="Ids of the cards flagged, ascending.")


def flag_quality_issues(params: QualityIssuesInput) -> Op[FlaggedIssues]:
    """Scan like :func:`find_quality_issues` and flag every issue (reason: its detail).

    Flagging is idempotent: a second scan only refreshes the severities.
    """
    report = yield from find_quality_issues(params)
    now = utc_now()
    for issue in report.issues:
        yield from flag_card(
            FlagCardInput(
                card_id=issue.card_id, reason=issue.detail, severity=issue.severity, now=now
            )
        )
    return FlaggedIssues(
        cards_scanned=report.cards_scanned,
        issues=report.issues,
        flagged_cards=sorted({issue.card_id for issue in report.issues}),
    )
