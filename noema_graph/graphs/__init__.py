"""Graph factories: wiring only, nothing compiled at import time."""

from noema_graph.graphs.agent import build_agent_graph
from noema_graph.graphs.ask import build_ask_graph
from noema_graph.graphs.runtime import aclose_tools, close_tools

__all__ = ["aclose_tools", "build_agent_graph", "build_ask_graph", "close_tools"]
