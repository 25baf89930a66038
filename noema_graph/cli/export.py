"""``noema-graph export --stock IN OUT``: a checkpoint file LangGraph's own saver reads.

Registered on the main app by :func:`register`; the conversion
(:mod:`noema_graph.storage.sqlite.export`) loads only when the command runs. Exit status: 0 the copy
was written, 2 a usage error (no ``--stock``, IN missing, OUT exists).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noema_graph.cli.errors import usage_error

__all__ = ["export", "register"]

InArg = Annotated[Path, typer.Argument(help="The checkpoint file to read (never changed).")]
OutArg = Annotated[Path, typer.Argument(help="The new file to write (must not exist).")]
StockOpt = Annotated[
    bool,
    typer.Option("--stock", help="Write LangGraph's stock format (SqliteSaver reads it as is)."),
]


def export(source: InArg, target: OutArg, stock: StockOpt = False) -> None:
    """Copy IN to OUT in another format; --stock: the one LangGraph's SqliteSaver reads.

    Compressed values and trace steps that refer to their ToolMessages (a file written with
    --compact) are stored as plain values; IN is opened read-only.
    """
    from noema_graph.errors import ConfigurationError
    from noema_graph.storage.sqlite.export import export_stock

    if not stock:
        usage_error("export needs a target format", "pass --stock: export --stock IN OUT")
    try:
        done = export_stock(source, target)
    except ConfigurationError as exc:
        usage_error(str(exc))
    typer.echo(
        f"exported {source} ({done.source_format}) to {target} (stock): "
        f"{done.checkpoints} checkpoints, {done.writes} writes"
    )


def register(app: typer.Typer) -> None:
    """Add the ``export`` command to ``app`` (the main ``noema-graph`` app)."""
    app.command("export")(export)
