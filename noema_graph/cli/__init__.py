"""The ``noema-graph`` command line: :mod:`noema_graph.cli.app` holds the Typer app.

One module per command group (``runs``, ``live``, ``inspect``, ``doctor``, ``db``, ``events``,
``eval``, ...). Run code never imports this package.
"""
