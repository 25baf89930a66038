"""Resolve trace writes that refer to their ToolMessages (found in some compact files).

``tool_node`` writes each call's ToolMessage to ``messages`` and a trace step whose
observation is the same text to ``trace``, in one task. A compact file may hold such a step
with a reference to the ToolMessage instead of a copy (see
:func:`noema_graph.storage.serde.link_step`), which only a reader of the whole task can
resolve. noema's savers write no such reference (a compact file's values each decode on their
own, so LangGraph's saver reads it with noema's serializer); files that hold one read as
well: :func:`resolve` puts the text back from the same task's messages write when the writes
are read, and ``noema-graph export --stock`` does the same. A step read without resolving fails
loudly when it is validated, never silently without its observation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from langgraph.checkpoint.base import PendingWrite

from noema_graph.storage.serde import is_linked, tool_answers, unlink_step


def _messages(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def _has_links(value: object) -> bool:
    return isinstance(value, list) and any(is_linked(s) for s in value)


def resolve(
    writes: Sequence[PendingWrite], companions: Iterable[PendingWrite] = ()
) -> list[PendingWrite]:
    """Return ``writes`` with linked trace steps resolved.

    The ToolMessages come from the messages writes among ``writes`` and ``companions`` (the
    same checkpoint's other writes), matched by task id.
    """
    if not any(channel == "trace" and _has_links(value) for _, channel, value in writes):
        return list(writes)
    by_task: dict[str, list[object]] = defaultdict(list)
    for task_id, channel, value in [*writes, *companions]:
        if channel == "messages":
            by_task[task_id] += _messages(value)
    resolved: list[PendingWrite] = []
    for task_id, channel, value in writes:
        if channel == "trace" and _has_links(value):
            answers = tool_answers(by_task[task_id])
            resolved.append((task_id, channel, [unlink_step(s, answers) for s in value]))
        else:
            resolved.append((task_id, channel, value))
    return resolved
