"""The ``noema-graph`` command line: :mod:`noema_graph.cli.app` holds the Typer app.

One module per command group (``runs``, ``live``, ``inspect``, ``doctor``, ``db``, ``events``,
``eval``, ...). Run code never imports this package. ``main`` and ``CliOptions`` (a program
that embeds the CLI with its own chat model) are served from :mod:`noema_graph.cli.app` on
first use, so importing one command group does not load the others.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.cli.app import CliOptions, ModelFactory, main

__all__ = ["CliOptions", "ModelFactory", "main"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.cli.app": ("CliOptions", "ModelFactory", "main"),
    },
)
