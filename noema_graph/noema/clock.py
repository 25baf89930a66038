"""UTC time helpers: one text format in the database, aware datetimes in Python."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """Return the current time, timezone-aware in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0)


def as_utc(moment: datetime) -> datetime:
    """Return ``moment`` in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def to_db(moment: datetime) -> str:
    """Format ``moment`` as the store's sortable UTC text."""
    return as_utc(moment).isoformat(timespec="seconds")


def from_db(text: str) -> datetime:
    """Parse the store's UTC text back into an aware datetime."""
    return as_utc(datetime.fromisoformat(text))
