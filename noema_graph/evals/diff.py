"""Two results files compared: what changed per item and per agent, regressions first.

A regression of an item: it passed and no longer does, or one of its scores got worse
(final, trajectory), or it changed the store unasked, missed an expected change, leaked a
secret or gave more words no tool gave than before. A check one file's run did not make (a
file written before the check existed) is not compared. Seconds are shown, never a regression
(timings are noisy). An item in one file only is ``added`` or ``removed``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from noema_graph.errors import ConfigurationError
from noema_graph.evals.evaluator import ItemResult, summarize

AGENT_FIGURES = (
    ("pass_rate", 1),
    ("final_score", 1),
    ("trajectory_score", 1),
    ("changed_unasked", -1),
    ("items_ungrounded", -1),
    ("leaks", -1),
    ("seconds_per_item", 0),
)
"""Per-agent figures compared, with the direction that is better (1 up, -1 down, 0 none)."""
NEW_CHECKS = frozenset({"changed_unasked", "items_ungrounded", "leaks"})
"""Figures a file written before these checks lacks: not compared when one file does."""


def load_results(path: str | Path) -> dict[str, ItemResult]:
    """Return the item results of a results file (as ``eval --out`` writes it), by id.

    Raises:
        ConfigurationError: The file is missing or holds no ``results`` list.
    """
    source = Path(path)
    try:
        raw: Any = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigurationError(
            "results", f"cannot read {str(source)!r}: {exc}", fix="pass a file eval --out wrote"
        ) from None
    results = raw.get("results") if isinstance(raw, dict) else None
    if not isinstance(results, list):
        raise ConfigurationError(
            "results", f"{str(source)!r} has no 'results' list", fix="pass a file eval --out wrote"
        )
    typed = [ItemResult.model_validate(r) for r in results]
    return {r.id: r for r in typed}


def _unscored(result: ItemResult) -> bool:
    """Return whether ``result`` was written before the state, words and leak checks."""
    return result.passed is None


def _figures(result: ItemResult) -> dict[str, Any]:
    """Return the compared figures; None for a check the file's run did not make."""
    return {
        "pass": result.is_pass(),
        "final": result.final_score,
        "trajectory": result.trajectory_score,
        "state": None
        if result.state_ok is None
        else len(result.unasked_changes) + len(result.missing_changes),
        "words": None if _unscored(result) else len(result.ungrounded),
        "leaks": None if _unscored(result) else len(result.leaks),
        "seconds": result.seconds,
    }


def _worse(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    worse: list[str] = []
    if old["pass"] and not new["pass"]:
        worse.append("pass")
    for key in ("final", "trajectory"):
        if old[key] is not None and new[key] is not None and new[key] < old[key]:
            worse.append(key)
    for key in ("state", "words", "leaks"):
        if old[key] is not None and new[key] is not None and new[key] > old[key]:
            worse.append(key)
    return worse


def _better(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return _worse(new, old)


def item_changes(
    old: Mapping[str, ItemResult], new: Mapping[str, ItemResult]
) -> list[dict[str, object]]:
    """Return one entry per item that differs, regressions first, then gains, then others."""
    entries: list[dict[str, object]] = []
    for item_id in sorted({*old, *new}):
        before, after = old.get(item_id), new.get(item_id)
        if before is None or after is None:
            status = "added" if before is None else "removed"
            kept = after or before
            agent = kept.agent if kept else None
            entries.append({"id": item_id, "agent": agent, "status": status, "changed": []})
            continue
        was, now = _figures(before), _figures(after)
        changed = [
            k for k in was if k != "seconds" and None not in (was[k], now[k]) and was[k] != now[k]
        ]
        worse, better = _worse(was, now), _better(was, now)
        status = "regression" if worse else "improved" if better else "changed"
        if changed or worse:
            entries.append({
                "id": item_id, "agent": after.agent, "status": status,
                "changed": changed, "worse": worse, "old": was, "new": now,
            })  # fmt: skip
    order = {"regression": 0, "removed": 1, "improved": 2, "added": 3, "changed": 4}
    return sorted(entries, key=lambda e: (order[str(e["status"])], str(e["id"])))


def agent_changes(
    old: Mapping[str, ItemResult], new: Mapping[str, ItemResult]
) -> list[dict[str, object]]:
    """Return per agent (then ``all``) each compared figure before and after, and if worse."""
    before, after = summarize(list(old.values())), summarize(list(new.values()))
    unscored = any(_unscored(r) for r in [*old.values(), *new.values()])
    groups = [*sorted({*before["by_agent"], *after["by_agent"]}), "all"]
    rows: list[dict[str, object]] = []
    for name in groups:
        was = before if name == "all" else before["by_agent"].get(name, {})
        now = after if name == "all" else after["by_agent"].get(name, {})
        figures: dict[str, object] = {}
        worse = False
        for key, direction in AGENT_FIGURES:
            a, b = was.get(key), now.get(key)
            if unscored and key in NEW_CHECKS:
                a = b = None
            figures[key] = (a, b)
            if direction and a is not None and b is not None and (b - a) * direction < 0:
                worse = True
        rows.append({"agent": name, "figures": figures, "regression": worse})
    return sorted(rows, key=lambda r: (not r["regression"], r["agent"] == "all", r["agent"]))


class Comparison(TypedDict):
    """What :func:`compare_results` returns."""

    items: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    regressions: int


def compare_results(old: str | Path, new: str | Path) -> Comparison:
    """Return ``{"items": [...], "agents": [...], "regressions": n}`` for two results files."""
    before, after = load_results(old), load_results(new)
    items = item_changes(before, after)
    return {
        "items": items,
        "agents": agent_changes(before, after),
        "regressions": sum(1 for e in items if e["status"] == "regression"),
    }
