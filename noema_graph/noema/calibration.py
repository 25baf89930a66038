"""Pure calibration and retention arithmetic (no I/O), so it can be checked by hand.

A review counts as correct when its rating is Hard, Good or Easy (2-4): the learner recalled
the answer. Again (1) is a failure, as in FSRS and Anki.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BIAS_MARGIN = 0.05
"""A bias within this margin of 0 counts as well calibrated."""

Direction = Literal["over-confident", "under-confident", "well calibrated"]


class CalibrationBin(BaseModel):
    """One bin of a reliability diagram."""

    model_config = ConfigDict(frozen=True)

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


class CalibrationFigures(BaseModel):
    """How well stated confidence matched actual recall."""

    model_config = ConfigDict(frozen=True)

    count: int = Field(description="Reviews with a confidence rating.")
    brier: float | None = Field(description="Mean squared error of confidence; 0 is perfect.")
    ece: float | None = Field(description="Expected calibration error over equal-width bins.")
    bias: float | None = Field(
        description="Mean confidence minus accuracy: > 0 over-confident, < 0 under-confident."
    )
    accuracy: float | None
    mean_confidence: float | None
    direction: Direction | None = Field(
        description=f"over-confident (bias > {BIAS_MARGIN}), under-confident (bias < "
        f"-{BIAS_MARGIN}) or well calibrated; None without reviews."
    )
    bins: list[CalibrationBin]


def direction_of(bias: float, margin: float = BIAS_MARGIN) -> Direction:
    """Name the direction of a calibration ``bias`` (mean confidence minus accuracy).

    A bias on the margin itself is within it (rounded first, so 0.8 - 0.75 is 0.05).
    """
    bias = round(bias, 9)
    if bias > margin:
        return "over-confident"
    if bias < -margin:
        return "under-confident"
    return "well calibrated"


def is_correct(rating: int) -> bool:
    """Whether a rating means the answer was recalled (Hard, Good or Easy)."""
    return rating >= 2


def calibration(pairs: Sequence[tuple[float, bool]], n_bins: int = 10) -> CalibrationFigures:
    """Compute Brier score, ECE and bias from ``(confidence, correct)`` pairs.

    Bins are ``[k/n, (k+1)/n)`` with the last one closed, so confidence 1.0 falls in it.
    ECE is the count-weighted mean of ``|mean confidence - accuracy|`` over non-empty bins.
    """
    width = 1.0 / n_bins
    members: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for conf, correct in pairs:
        members[min(int(conf * n_bins), n_bins - 1)].append((conf, correct))
    bins: list[CalibrationBin] = []
    for k, group in enumerate(members):
        mean_conf = sum(c for c, _ in group) / len(group) if group else None
        acc = sum(ok for _, ok in group) / len(group) if group else None
        bins.append(
            CalibrationBin(
                lower=round(k * width, 10),
                upper=round((k + 1) * width, 10),
                count=len(group),
                mean_confidence=mean_conf,
                accuracy=acc,
            )
        )
    n = len(pairs)
    if n == 0:
        unknown = ("brier", "ece", "bias", "accuracy", "mean_confidence", "direction")
        return CalibrationFigures(count=0, bins=bins, **dict.fromkeys(unknown))
    brier = sum((c - float(ok)) ** 2 for c, ok in pairs) / n
    ece = sum(
        b.count / n * abs(b.mean_confidence - b.accuracy)
        for b in bins
        if b.mean_confidence is not None and b.accuracy is not None
    )
    accuracy = sum(ok for _, ok in pairs) / n
    mean_conf = sum(c for c, _ in pairs) / n
    return CalibrationFigures(
        count=n,
        brier=brier,
        ece=ece,
        bias=mean_conf - accuracy,
        accuracy=accuracy,
        mean_confidence=mean_conf,
        direction=direction_of(mean_conf - accuracy),
        bins=bins,
    )


def streak_days(days: set[date], today: date) -> int:
    """Count consecutive study days ending today, or yesterday when today has none yet."""
    day = today if today in days else today - timedelta(days=1)
    streak = 0
    while day in days:
        streak += 1
        day -= timedelta(days=1)
    return streak
