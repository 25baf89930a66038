"""Graph factories: wiring only, nothing compiled at import time."""

from noema_graph.graphs.agent import build_agent_graph
from noema_graph.graphs.ask import build_ask_graph

__all__ = ["build_agent_graph", "build_ask_graph"]
