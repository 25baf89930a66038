"""Tests of noema_graph.graphs: scripted end-to-end runs, limits, streaming, the drawn graph."""
