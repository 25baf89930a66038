"""Tests of noema_graph.state: reducers and the output contract."""
