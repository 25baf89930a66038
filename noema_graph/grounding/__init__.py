"""Grounding: tie a run's tool arguments and answers to what the run has seen.

* :mod:`~noema_graph.grounding.sources`: a small path language naming a value in the run's
  tool results (``compute_calibration:brier``, ``*move_card:args``), for default plans and
  for answer fields filled from the tools rather than generated.
* :mod:`~noema_graph.grounding.seen`: the ids and names the run has seen, by kind (``card``,
  ``category``...), from the request and the successful tool results.
* :mod:`~noema_graph.grounding.arguments`: which tool arguments are references, the
  argument schema narrowed to seen values for a step (the embedded model's grammar), the
  values a step determines, and the check of a remote model's call against the seen values.
* :mod:`~noema_graph.grounding.choices`, :mod:`~noema_graph.grounding.secrets`,
  :mod:`~noema_graph.grounding.examples` and :mod:`~noema_graph.grounding.checks`: words
  from the data: list and name fields chosen from the run's data (an enum while decoding,
  a check after), secret tool-result fields masked, a worked example's words kept out.

Depends on :mod:`noema_graph.state` only; the nodes use it.
"""

from __future__ import annotations

from noema_graph.grounding.arguments import (
    REF_KEY,
    StepArguments,
    references,
    step_arguments,
    unseen_reference,
)
from noema_graph.grounding.seen import Seen, seen_in
from noema_graph.grounding.sources import MISSING, Source, parse_source, resolve, tool_results

__all__ = [
    "MISSING",
    "REF_KEY",
    "Seen",
    "Source",
    "StepArguments",
    "parse_source",
    "references",
    "resolve",
    "seen_in",
    "step_arguments",
    "tool_results",
    "unseen_reference",
]
