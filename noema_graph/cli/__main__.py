"""``python -m noema_graph.cli``: the ``noema-graph`` command."""

from noema_graph.cli.app import main

main()
