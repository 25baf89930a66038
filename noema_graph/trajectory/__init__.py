"""Trajectories: the record of a run that evaluation and the claim check both read.

:mod:`~noema_graph.trajectory.schema` holds the types (``Trajectory``, ``TrajectoryStep``, the
eval dataset), :mod:`~noema_graph.trajectory.steps` turns a run's trace into steps.
"""
