"""``noema-graph doctor DB [--repair]``: check a checkpoint file, recover a damaged one.

Registered on the main app by :func:`register`; the checks (:mod:`noema_graph.doctor`) and
the recovery (:mod:`noema_graph.recover`) load only when the command runs. Exit status: 0 the
file is healthy, 1 it is damaged or not a checkpoint file (also after ``--repair`` wrote the
recovered copy), 2 a usage error (no such file, ``--out`` exists).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["doctor", "register"]

HEALTHY, DAMAGED, USAGE = 0, 1, 2

DbArg = Annotated[Path, typer.Argument(help="The SQLite file holding the checkpoints.")]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Recover what can be read into a NEW file (see --out); the original is untouched.",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Where --repair writes (default: DB.recovered.sqlite beside DB)."),
]
QuickOpt = Annotated[
    bool, typer.Option("--quick", help="PRAGMA quick_check instead of integrity_check.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _usage(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(USAGE)


def doctor(
    db: DbArg,
    repair: RepairOpt = False,
    out: OutOpt = None,
    quick: QuickOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Check a checkpoint file (SQLite integrity, rows, thread heads); --repair recovers it."""
    from noema_graph.damage import DamagedFileError
    from noema_graph.doctor import diagnose
    from noema_graph.errors import ConfigurationError
    from noema_graph.recover import repair as recover

    if out is not None and not repair:
        raise _usage("--out only applies with --repair")
    try:
        report = diagnose(db, quick=quick)
    except ConfigurationError as exc:
        raise _usage(str(exc)) from exc
    result: dict[str, Any] = {"report": report.to_dict()}
    lines = report.lines()
    if repair and report.healthy:
        lines.append("nothing to repair")
    elif repair and not (report.is_sqlite and report.is_checkpoint_file):
        lines.append("nothing to repair: this is not a checkpoint file (the original is untouched)")
    elif repair:
        try:
            recovery = recover(db, out)
        except ConfigurationError as exc:
            raise _usage(str(exc)) from exc
        except DamagedFileError as exc:
            lines.append(f"recovery failed: {exc}")
            result["recovery"] = {"error": str(exc)}
        else:
            lines += recovery.lines()
            result["recovery"] = recovery.to_dict()
    typer.echo(json.dumps(result, indent=2) if as_json else "\n".join(lines))
    raise typer.Exit(HEALTHY if report.healthy else DAMAGED)


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command to ``app`` (the main ``noema-graph`` app)."""
    app.command("doctor")(doctor)
