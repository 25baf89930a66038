"""Action protocols: how a model's text turns into thoughts, actions and final answers."""

from noema_graph.protocols.react import ReactParse, parse_response

__all__ = ["ReactParse", "parse_response"]
