"""Pictures of agents and runs, drawn offline: the graph, a run's timeline, plain tables.

* :func:`graph_png` draws a compiled graph (or ``graph.get_graph()``) as a PNG with
  ``graphviz-pure``, a Graphviz port shipped as a PyPI wheel (``pip install graphviz-pure``;
  the ``viz`` and ``dev`` extras have it); :func:`graph_dot` is the DOT source it renders.
  Nothing is sent anywhere, unlike LangGraph's ``draw_mermaid_png``, which calls a web service.
* :func:`run_timeline` turns a thread's checkpoints (:func:`noema_graph.storage.inspect.history`)
and,
  when given, the run's output contract into :class:`Span` s: model calls, tool calls, waits;
  :func:`plot_timeline` draws them with matplotlib (``Agg`` wherever there is no display, the
  inline PNG backend in Jupyter).
* :func:`plot_scores` draws an evaluation summary's mean scores per agent.
* :func:`table` prints rows (dataclasses, pydantic models, mappings) as a fixed-width text
  table; :func:`stream_text` renders one ``astream`` part as text and :class:`StreamPrinter`
  prints a stream live, for notebooks and scripts.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables.graph import Graph
from pydantic import BaseModel

from noema_graph.errors import ConfigurationError, ExternalError, MisuseError, NotFound

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from noema_graph.state.output import AgentOutput
    from noema_graph.storage.inspect import CheckpointRow

__all__ = [
    "GRAPHVIZ",
    "Span",
    "StreamPrinter",
    "graph_dot",
    "graph_png",
    "plot_scores",
    "plot_timeline",
    "run_timeline",
    "stream_text",
    "table",
]

GRAPHVIZ = "graphviz-pure"
"""The Graphviz command :func:`graph_png` runs (from the ``graphviz-pure`` wheel)."""
TOOL_NODE = "tool_node"
"""The node that runs tool calls: its spans are tool time when no tool call is timed."""
SpanKind = Literal["model", "tool", "wait", "graph"]
COLORS: dict[SpanKind, str] = {
    "model": "#5b8def",
    "tool": "#f0a340",
    "wait": "#d9534f",
    "graph": "#9e9e9e",
}
MIN_BAR = 0.003
"""Shortest bar drawn, as a share of the run: a 1 ms tool call stays visible in a 20 s run."""
_START, _END = "__start__", "__end__"


class Drawable(Protocol):
    """Anything with LangGraph's ``get_graph()``: a compiled graph."""

    def get_graph(self) -> Graph:
        """Return the drawable graph."""
        ...


# --- the graph --------------------------------------------------------------------------


def graph_dot(graph: Drawable | Graph) -> str:
    """Return the DOT source of ``graph``: nodes, plain edges solid, conditional ones dashed.

    Args:
        graph: A compiled graph (its ``get_graph()`` is drawn) or a LangChain ``Graph``.
    """
    drawn = graph if isinstance(graph, Graph) else graph.get_graph()
    lines = [
        "digraph agent {",
        '  node [shape=box, style="rounded,filled", fillcolor="#f2f0ff", fontname="Arial"];',
        '  edge [fontname="Arial", fontsize=10];',
    ]
    for node_id, node in drawn.nodes.items():
        extra = ""
        if node_id == _START:
            extra = ', shape=ellipse, fillcolor="white"'
        elif node_id == _END:
            extra = ', shape=ellipse, fillcolor="#bfb6fc"'
        lines.append(f"  {_quote(node_id)} [label={_quote(node.name)}{extra}];")
    for edge in drawn.edges:
        attributes = ["style=dashed"] if edge.conditional else []
        if isinstance(edge.data, str) and edge.data:
            attributes.append(f"label={_quote(edge.data)}")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_png(graph: Drawable | Graph, *, dpi: int = 96) -> bytes:
    """Draw ``graph`` as a PNG, offline, with the ``graphviz-pure`` command.

    Args:
        graph: A compiled graph or a LangChain ``Graph``.
        dpi: Resolution of the picture.

    Returns:
        The PNG file's bytes (show them with ``IPython.display.Image``, or write them).

    Raises:
        ConfigurationError: ``graphviz-pure`` is not installed.
        RuntimeError: Graphviz rejected the drawing (a bug here: the message has its error).
    """
    command = _graphviz_command()
    done = subprocess.run(
        [command, "-Tpng", f"-Gdpi={int(dpi)}"],
        input=graph_dot(graph).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0 or not done.stdout:
        raise ExternalError(f"{GRAPHVIZ} failed ({done.returncode}): {done.stderr.decode()[:500]}")
    return done.stdout


def _graphviz_command() -> str:
    """Find ``graphviz-pure`` on PATH or next to the running interpreter (an unactivated venv)."""
    found = shutil.which(GRAPHVIZ) or shutil.which(GRAPHVIZ, path=str(Path(sys.executable).parent))
    if found is None:
        raise ConfigurationError(
            GRAPHVIZ,
            "is not installed; graph_png draws with it",
            fix="pip install graphviz-pure (or the noema-graph[viz] extra)",
        )
    return found


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


# --- a run's timeline -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """One bar of a run's timeline, in seconds from the run's first checkpoint.

    ``kind`` is ``model`` (a node whose step spent tokens), ``tool`` (a tool call, or the tool
    node when calls carry no times), ``wait`` (the thread waited: for a person at an interrupt,
    or idle until it was resumed, updated or forked) or ``graph`` (any other node). A wait for
    a person also covers the re-run of the node that paused. A fork made with
    ``as_node="__copy__"`` hangs under the copied checkpoint's parent: the branch shows the
    copied checkpoint's work, then the wait until the fork.
    """

    kind: SpanKind
    label: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        """Return how long the span lasted."""
        return self.end - self.start


def run_timeline(
    rows: Sequence[CheckpointRow],
    output: AgentOutput | Mapping[str, object] | None = None,
    *,
    checkpoint_id: str | None = None,
) -> list[Span]:
    """Return the spans of one branch of a thread, oldest first.

    Each checkpoint closes the superstep that wrote it: the time since the previous checkpoint
    is spent in that checkpoint's node. Tool calls of ``output`` (``metadata.tool_calls`` with
    ``started_at``/``ended_at``) become spans of their own, named after the tool.

    Args:
        rows: The thread's checkpoints, from :func:`noema_graph.storage.inspect.history`.
        output: The run's output contract (``state["output"]`` or an ``AgentOutput``).
        checkpoint_id: The branch ending at this checkpoint; the newest checkpoint when None.

    Raises:
        KeyError: ``checkpoint_id`` is not among ``rows``.
    """
    chain = _branch(rows, checkpoint_id)
    if not chain:
        return []
    origin = _time(chain[0].time)
    calls = _tool_calls(output, origin)
    spans: list[Span] = []
    for previous, current in pairwise(chain):
        start, end = _time(previous.time) - origin, _time(current.time) - origin
        spans.append(_step_span(previous, current, start, end, timed_tools=bool(calls)))
    return sorted(spans + calls, key=lambda span: (span.start, span.end))


def _branch(rows: Sequence[CheckpointRow], checkpoint_id: str | None) -> list[CheckpointRow]:
    """Follow parent ids from ``checkpoint_id`` (or the newest) back to the thread's start."""
    by_id = {row.checkpoint_id: row for row in rows}
    if checkpoint_id is not None and checkpoint_id not in by_id:
        raise NotFound(f"no checkpoint {checkpoint_id!r} among the {len(rows)} rows given")
    current = by_id.get(checkpoint_id or max(by_id, default=""))
    chain: list[CheckpointRow] = []
    while current is not None:
        chain.append(current)
        if current.source == "fork" and (copied := _copied(rows, current)) is not None:
            chain.append(copied)
        current = by_id.get(current.parent_id or "")
    return chain[::-1]


def _copied(rows: Sequence[CheckpointRow], fork: CheckpointRow) -> CheckpointRow | None:
    """Return the checkpoint a ``__copy__`` fork copied: its sibling one step before it.

    LangGraph writes the copy under the original's parent with ``step + 1``; putting the
    original back in the branch keeps the work it recorded apart from the idle time after it.
    """
    siblings = [
        row
        for row in rows
        if row.parent_id == fork.parent_id
        and row.source != "fork"
        and row.step == fork.step - 1
        and row.checkpoint_id < fork.checkpoint_id
    ]
    return max(siblings, key=lambda row: row.checkpoint_id, default=None)


def _step_span(
    previous: CheckpointRow, current: CheckpointRow, start: float, end: float, *, timed_tools: bool
) -> Span:
    if previous.has_interrupt:
        return Span("wait", "waiting for input", start, end)
    if current.source != "loop":
        return Span("wait", f"idle until {current.source}", start, end)
    node = current.node or "start"
    if current.tokens > previous.tokens:
        return Span("model", node, start, end)
    if node == TOOL_NODE and not timed_tools:
        return Span("tool", node, start, end)
    return Span("graph", node, start, end)


def _tool_calls(output: AgentOutput | Mapping[str, object] | None, origin: float) -> list[Span]:
    if output is None:
        return []
    data = output if isinstance(output, Mapping) else output.model_dump()
    metadata = cast(Mapping[str, object], data.get("metadata") or {})
    spans: list[Span] = []
    for call in cast(list[Mapping[str, str]], metadata.get("tool_calls") or []):
        started, ended = call.get("started_at"), call.get("ended_at")
        if started and ended:
            start, end = _time(started) - origin, _time(ended) - origin
            spans.append(Span("tool", str(call.get("tool")), start, end))
    return spans


def _time(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def plot_timeline(
    spans: Sequence[Span], *, ax: Axes | None = None, title: str = "Run timeline"
) -> Figure:
    """Draw ``spans`` as a Gantt chart: one row per label, coloured by kind.

    Each row's label says how many spans it holds and their total time; a bar shorter than
    :data:`MIN_BAR` of the run is drawn that wide so that it can be seen.

    Args:
        spans: From :func:`run_timeline`.
        ax: Axes to draw on; a new pyplot figure when None (shown inline in Jupyter).
        title: The chart's title.

    Returns:
        The figure drawn on (``fig.savefig("timeline.png")`` writes it).
    """
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(9, 0.45 * max(len({s.label for s in spans}), 2) + 1.2))
    labels = list(dict.fromkeys(span.label for span in spans))
    visible = MIN_BAR * max((span.end for span in spans), default=1.0)
    ticks: list[str] = []
    for row, label in enumerate(labels):
        mine = [span for span in spans if span.label == label]
        bars = [(span.start, max(span.seconds, visible)) for span in mine]
        colors = [COLORS[span.kind] for span in mine]
        # a white edge separates back-to-back bars; on a thin bar it would hide the bar
        edges = [c if w < 3 * visible else "white" for c, (_, w) in zip(colors, bars, strict=True)]
        ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colors, edgecolors=edges, linewidth=0.6)
        ticks.append(f"{label}  {len(mine)}x {_duration(sum(s.seconds for s in mine))}")
    ax.set_yticks(range(len(labels)), ticks)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the run started")
    ax.set_title(title)
    _legend(ax, {span.kind for span in spans})
    ax.grid(axis="x", alpha=0.3)
    figure = cast("Figure", ax.get_figure(root=True))
    figure.tight_layout()
    return figure


def plot_scores(
    summary: Mapping[str, object],
    *,
    scores: Sequence[str] = ("final_score", "trajectory_score"),
    ax: Axes | None = None,
) -> Figure:
    """Draw an evaluation's mean scores per agent as grouped bars (a missing score draws 0).

    Args:
        summary: From :func:`noema_graph.evals.summarize` (its ``by_agent`` part is drawn).
        scores: The per-agent means to draw, one bar each.
        ax: Axes to draw on; a new pyplot figure when None (shown inline in Jupyter).

    Returns:
        The figure drawn on.
    """
    by_agent = cast(Mapping[str, Mapping[str, float | None]], summary.get("by_agent") or {})
    agents = list(by_agent)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(agents) + 2), 3.5))
    width = 0.8 / max(len(scores), 1)
    for index, score in enumerate(scores):
        offset = (index - (len(scores) - 1) / 2) * width
        values = [float(by_agent[agent].get(score) or 0.0) for agent in agents]
        ax.bar([i + offset for i in range(len(agents))], values, width, label=score)
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean score")
    ax.legend(fontsize="small")
    figure = cast("Figure", ax.get_figure(root=True))
    figure.tight_layout()
    return figure


def _duration(seconds: float) -> str:
    if seconds < 0.001:
        return "<1 ms"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _legend(ax: Axes, kinds: set[SpanKind]) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(color=color, label=kind) for kind, color in COLORS.items() if kind in kinds]
    if handles:
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
            frameon=False,
        )


# --- text ------------------------------------------------------------------------------


def table(rows: Iterable[object], columns: Sequence[str] | None = None, *, width: int = 40) -> str:
    """Return ``rows`` as a fixed-width text table (no pandas needed).

    Args:
        rows: Dataclass instances (such as :class:`~noema_graph.storage.inspect.ThreadRow`),
            pydantic models (a ``ToolCallRecord``, a ``MemoryEntry``) or mappings.
        columns: The fields to show, in order; every field of the first row when None.
        width: Longest cell, in characters; longer values end with an ellipsis.
    """
    records = [_record(row) for row in rows]
    names = list(columns) if columns is not None else list(records[0]) if records else []
    if not names:
        return ""
    cells = [[_cell(record.get(name), width) for name in names] for record in records]
    widths = [max([len(name), *(len(line[i]) for line in cells)]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(names, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(line.rstrip() for line in lines)


def _record(row: object) -> Mapping[str, object]:
    if is_dataclass(row) and not isinstance(row, type):
        return {f.name: getattr(row, f.name) for f in fields(row)}
    if isinstance(row, BaseModel):
        return dict(row)
    if isinstance(row, Mapping):
        return cast(Mapping[str, object], row)
    raise MisuseError(
        f"table() takes dataclasses, pydantic models or mappings, not {type(row).__name__}"
    )


def _cell(value: object, width: int) -> str:
    if value is None:
        text = ""
    elif isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def stream_text(mode: str, chunk: Any) -> str:
    """Render one part of ``graph.astream(..., stream_mode=[...])`` as text to print.

    ``messages`` token chunks come back as they are; whole messages (a tool's result), an
    ``updates`` part (the node and the state keys it wrote) and a ``custom`` activity event
    (its type and main fields) come back as one line ending with a newline. Print with
    ``end=""``; :class:`StreamPrinter` also breaks the line after a run of tokens.

    Args:
        mode: The stream mode of the part (``updates``, ``messages``, ``custom``, ...).
        chunk: The part itself.
    """
    if mode == "messages":
        message = chunk[0] if isinstance(chunk, tuple) else chunk
        if isinstance(message, AIMessageChunk):
            return message.text
        if isinstance(message, BaseMessage):
            return f"[{message.type} message] " + _cell(message.text, 160) + "\n"
    if mode == "updates" and isinstance(chunk, Mapping):
        parts = [
            f"{node} wrote {sorted(update) if isinstance(update, Mapping) else update}"
            for node, update in cast(Mapping[str, object], chunk).items()
        ]
        return "[update] " + "; ".join(parts) + "\n"
    if mode == "custom" and isinstance(chunk, Mapping):
        event = dict(cast(Mapping[str, object], chunk))
        kind = event.pop("type", "event")
        shown = {k: v for k, v in event.items() if k not in ("run_id", "timestamp")}
        return f"[{kind}] " + _cell(shown, 160) + "\n"
    return f"[{mode}] " + _cell(chunk, 160) + "\n"


class StreamPrinter:
    """Print ``astream`` parts as they arrive: tokens inline, everything else one per line.

    Example:
        >>> show = StreamPrinter()
        >>> show("messages", (AIMessageChunk(content="Hi"), {}))
        Hi
        >>> show("custom", {"type": "turn_end", "success": True})
        <BLANKLINE>
        [turn_end] {'success': True}
    """

    def __init__(self) -> None:
        self._mid_line = False

    def __call__(self, mode: str, chunk: Any) -> None:
        """Print one part of the stream, of mode ``mode``."""
        text = stream_text(mode, chunk)
        if not text:
            return
        line = text.endswith("\n")
        prefix = "\n" if line and self._mid_line else ""
        print(prefix + text, end="", flush=True)
        self._mid_line = not text.endswith("\n")
