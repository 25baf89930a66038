"""What an item expects beyond its answer: the store's end state and the run's outcome.

The dataset format (docs/evaluation.md) adds to an item:

* ``expected_state``: the rows that must differ after the run, each
  ``{"table", "key": {pk columns}, "values": {...}}`` (a changed row),
  ``{"table", "new": true, "values": {...}, "count": n}`` (n new rows, generated ids and
  timestamps left out; ``count`` may be operators: ``{"$gte": 0}``, any number of them) or
  ``{"table", "key": {...}, "deleted": true}``; values may use the
  answer's operators (``{"$gte": 1}``, ...);
* ``store_unchanged``: ``true``, or a list of tables that must not change;
* ``expected_success`` (default true) and ``expected_error_code`` (a code or a list, only
  with ``expected_success: false``).

An item with neither ``expected_state`` nor ``store_unchanged`` expects the store unchanged.
:func:`item_expectations` reads and checks them; :func:`check_against_store` checks the
tables and columns they name against a store. Both raise :class:`ConfigurationError`
naming the item and the field.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from noema_graph.errors import ConfigurationError
from noema_graph.nodes.output import UNEARNED_MESSAGES
from noema_graph.noema.schema import HISTORY_TABLES
from noema_graph.state.models import StopReason
from noema_graph.trajectory.schema import EvalItem

REFUSAL_CODES = frozenset({"not_found", "invalid_input", "forbidden"})
"""Codes a refusal names besides the output contract's stop and unearned codes."""
ERROR_CODES = frozenset({*REFUSAL_CODES, *get_args(StopReason), *UNEARNED_MESSAGES})
"""Every code ``expected_error_code`` may name."""
COUNT_OPERATORS = frozenset({"$gte", "$lte", "$gt", "$lt"})
FIELDS = ("expected_state", "store_unchanged", "expected_success", "expected_error_code")


class RowExpectation(BaseModel):
    """One row that must differ after the run (see the module)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str = Field(min_length=1)
    key: dict[str, object] | None = None
    values: dict[str, object] = Field(default_factory=dict[str, object])
    new: bool = False
    deleted: bool = False
    count: int | dict[str, int] = Field(
        default=1, description="How many new rows: a number >= 1, or operators ({'$gte': 0})."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> RowExpectation:
        if self.new and self.deleted:
            raise ValueError("a row is either new or deleted, not both")
        if self.new and self.key is not None:
            raise ValueError("a new row has no key (its id is generated): give its values")
        if not self.new and not self.key:
            raise ValueError("a changed or deleted row needs its key (primary-key columns)")
        if self.deleted and self.values:
            raise ValueError("a deleted row has no values")
        if not self.new and self.count != 1:
            raise ValueError("count applies to new rows only")
        if isinstance(self.count, int) and self.count < 1:
            raise ValueError("count must be at least 1 (or operators such as {'$gte': 0})")
        if isinstance(self.count, dict) and not set(self.count) <= COUNT_OPERATORS:
            raise ValueError(f"count operators are {sorted(COUNT_OPERATORS)}")
        if not (self.new or self.deleted or self.values):
            raise ValueError("a changed row needs the values it must hold afterwards")
        return self

    @property
    def kind(self) -> str:
        """Return ``new``, ``deleted`` or ``changed``."""
        return "new" if self.new else "deleted" if self.deleted else "changed"


class Expectations(BaseModel):
    """An item's expectations of the store and of the run's outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    expected_state: tuple[RowExpectation, ...] = ()
    store_unchanged: StrictBool | tuple[str, ...] | None = None
    expected_success: StrictBool = True
    expected_error_code: tuple[str, ...] = ()

    @property
    def refusal(self) -> bool:
        """Return whether the run must end unsuccessful."""
        return not self.expected_success

    @property
    def frozen_tables(self) -> tuple[str, ...] | None:
        """Return the tables that must not change; None: every table but the expected rows."""
        return self.store_unchanged if isinstance(self.store_unchanged, tuple) else None


def _fail(item: EvalItem, field: str, message: str, fix: str) -> ConfigurationError:
    return ConfigurationError(f"item {item.id!r}: {field}", message, fix=fix)


def item_expectations(item: EvalItem) -> Expectations:
    """Return the expectations of ``item`` (its extra fields), checked.

    Raises:
        ConfigurationError: A malformed expectation or an unknown error code; it names the
            item and the field.
    """
    extra = item.model_extra or {}
    raw = {k: extra[k] for k in FIELDS if k in extra}
    codes = raw.get("expected_error_code")
    if isinstance(codes, str):
        raw["expected_error_code"] = [codes]
    try:
        found = Expectations.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "expectations"
        raise _fail(
            item, where, first["msg"], "see docs/evaluation.md, the dataset format"
        ) from None
    if found.expected_error_code and found.expected_success:
        raise _fail(
            item, "expected_error_code", "given without expected_success: false",
            "add \"expected_success\": false or drop the code",
        )  # fmt: skip
    if unknown := sorted(set(found.expected_error_code) - ERROR_CODES):
        raise _fail(
            item, "expected_error_code", f"unknown codes {unknown}",
            f"use one of {sorted(ERROR_CODES)}",
        )  # fmt: skip
    if found.refusal and found.expected_state:
        raise _fail(
            item, "expected_state", "a refusal leaves the store unchanged",
            "drop expected_state from a refusal item",
        )  # fmt: skip
    if found.store_unchanged is not None and found.expected_state and found.frozen_tables is None:
        raise _fail(
            item, "store_unchanged", "true contradicts expected_state",
            "list the tables that must not change, or drop one of the two",
        )  # fmt: skip
    if clash := sorted({r.table for r in found.expected_state} & set(found.frozen_tables or ())):
        raise _fail(
            item, "store_unchanged", f"tables {clash} are also in expected_state",
            "a table either changes as expected or does not change",
        )  # fmt: skip
    return found


def counted_tables(connection: sqlite3.Connection, schema: str = "main") -> list[str]:
    """Return the tables of ``schema`` whose rows are the learner's data (see the module)."""
    rows = connection.execute(
        f"SELECT name, sql FROM {schema}.sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    virtual = [name for name, sql in rows if str(sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _ in rows
        if name not in HISTORY_TABLES
        and name not in virtual
        and not any(name.startswith(f"{v}_") for v in virtual)
    ]


def store_columns(db: str | Path) -> dict[str, tuple[str, ...]]:
    """Return every counted table of the SQLite store at ``db`` with its columns."""
    connection = sqlite3.connect(f"file:{Path(db)}?mode=ro", uri=True)
    try:
        names = counted_tables(connection)
        return {
            name: tuple(row[1] for row in connection.execute(f'PRAGMA table_info("{name}")'))
            for name in names
        }
    finally:
        connection.close()


def check_against_store(
    item: EvalItem, found: Expectations, columns: dict[str, tuple[str, ...]]
) -> None:
    """Check that the tables and columns ``found`` names exist in the store.

    Raises:
        ConfigurationError: A table or column the store lacks; it names the item and field.
    """
    for table in found.frozen_tables or ():
        if table not in columns:
            raise _fail(
                item, "store_unchanged", f"no table {table!r} in the store",
                f"use one of {sorted(columns)}",
            )  # fmt: skip
    for index, row in enumerate(found.expected_state):
        where = f"expected_state[{index}]"
        if row.table not in columns:
            raise _fail(
                item, f"{where}.table", f"no table {row.table!r} in the store",
                f"use one of {sorted(columns)}",
            )  # fmt: skip
        for part, names in (("key", row.key or {}), ("values", row.values)):
            if missing := sorted(set(names) - set(columns[row.table])):
                raise _fail(
                    item, f"{where}.{part}", f"table {row.table!r} has no columns {missing}",
                    f"use columns of {row.table!r}: {list(columns[row.table])}",
                )  # fmt: skip


def load_expectations(
    items: list[EvalItem], db: str | Path | None = None
) -> dict[str, Expectations]:
    """Return every item's expectations by id, checked against the store at ``db`` if given.

    Raises:
        ConfigurationError: The first bad expectation (naming the item and the field).
    """
    columns = store_columns(db) if db is not None else None
    found: dict[str, Expectations] = {}
    for item in items:
        found[item.id] = item_expectations(item)
        if columns is not None:
            check_against_store(item, found[item.id], columns)
    return found
