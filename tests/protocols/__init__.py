"""Tests of noema_graph.protocols: the ReAct protocol and its guard."""
