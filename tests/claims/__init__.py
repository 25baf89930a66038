"""Tests of noema_graph.claims: the hallucinated-action detector and its labelled sets."""
