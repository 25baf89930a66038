"""Deprecated alias of :mod:`noema_graph.agents.mcp_server`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.tools.mcp_server moved to noema_graph.agents.mcp_server: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.agents.mcp_server import *  # noqa: E402, F403

if __name__ == "__main__":  # python -m noema_graph.tools.mcp_server, as before the move
    from noema_graph.agents.mcp_server import main

    main()
