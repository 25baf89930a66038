"""Compact, model-facing views of domain results, keyed by operation name.

An agent reads every tool result before its next turn, and a small model reads a short
observation far better than a long one: a due-card list with full card records is ~1,000
tokens, its view ~150. A view keeps the figures the agent answers with, under the names its
output schema uses (``card_id``, ``expected_recall``, ``issue``...), rounds probabilities to three
places and drops the rest. Operations without a view are shown in full. The MCP server and
direct store calls are unaffected: they return the full results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from noema_graph.noema.calibration import CalibrationFigures
from noema_graph.noema.ops.quality import FlaggedIssues, QualityReport
from noema_graph.noema.ops.reviews import DueCards

FIGURE_DIGITS = 3
"""Decimal places of probabilities and scores in a view."""
_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, FIGURE_DIGITS)


def due_cards_view(result: DueCards) -> dict[str, Any]:
    """Return the due cards, most overdue first: id, recall probability now, state, front.

    ``expected_recall`` is the card's FSRS retrievability now (0 for a new card).
    """
    return {
        "due_total": result.due_total,
        "cards": [
            {
                "card_id": due.card.id,
                "expected_recall": _round(due.retrievability),
                "state": due.state,
                "front": due.card.front[:80],
            }
            for due in result.cards
        ],
    }


def calibration_view(result: CalibrationFigures) -> dict[str, Any]:
    """Return the calibration figures without the per-bin table, in the answer's order."""
    return {
        "brier": _round(result.brier),
        "ece": _round(result.ece),
        "bias": _round(result.bias),
        "accuracy": _round(result.accuracy),
        "mean_confidence": _round(result.mean_confidence),
        "direction": result.direction,
        "count": result.count,
    }


def quality_view(result: QualityReport) -> dict[str, Any]:
    """Return one ``{card_id, issue, severity}`` per issue, most severe first, then the scan size.

    Most severe first is also what a reader wants; and ids in scan order are often
    consecutive, which a small model copying the list tends to continue counting past its end.
    """
    ordered = sorted(result.issues, key=lambda i: (_SEVERITY_RANK[i.severity], i.card_id))
    issues = [
        {"card_id": issue.card_id, "issue": issue.kind, "severity": issue.severity}
        for issue in ordered
    ]
    key = "flagged" if isinstance(result, FlaggedIssues) else "issues"
    return {key: issues, "cards_scanned": result.cards_scanned}


AGENT_VIEWS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "list_due_cards": due_cards_view,
    "compute_calibration": calibration_view,
    "find_quality_issues": quality_view,
    "flag_quality_issues": quality_view,
}
"""The view of each operation that has one."""
