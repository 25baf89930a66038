"""noema_graph.viz: the graph drawn offline, run timelines from real SQLite runs, text tables."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk, ToolMessage
from langchain_core.tools import tool
from matplotlib.figure import Figure

from noema_graph import build_agent_graph, build_ask_graph, resume_with, sqlite_checkpointer, viz
from noema_graph.errors import ConfigurationError
from noema_graph.inspect import ThreadRow, checkpoint, fork, history, threads
from noema_graph.state.output import ToolCallRecord
from noema_graph.viz import Span
from tests.helpers import cfg
from tests.scripted import call, plan_reply, text, tools_reply

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
THREAD = {"configurable": {"thread_id": "t1"}}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC)
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _agent(scripted: Any, *replies: Any, saver: Any = None, **config: Any) -> Any:
    return build_agent_graph(
        cfg(reflection_interval=10, **config),
        model=scripted(*replies),
        tools=[add],
        checkpointer=saver,
    )


def _adding_run(scripted: Any, saver: Any) -> Any:
    graph = _agent(
        scripted,
        plan_reply("add"),
        tools_reply(call("add", {"a": 2, "b": 3}, "c1")),
        text("5"),
        saver=saver,
    )
    graph.invoke({"messages": [("user", "2+3?")]}, THREAD)
    return graph


# --- the graph ---------------------------------------------------------------------------


def test_graph_dot_has_every_node_and_edge(scripted: Any) -> None:
    graph = _agent(scripted)
    dot = viz.graph_dot(graph)
    drawn = graph.get_graph()
    for node_id in drawn.nodes:
        assert f'"{node_id}" [label="{node_id}"' in dot
    for edge in drawn.edges:
        line = f'"{edge.source}" -> "{edge.target}"'
        assert (line + (" [style=dashed];" if edge.conditional else ";")) in dot
    assert dot.count(" -> ") == len(drawn.edges)
    assert '"__start__" [label="__start__", shape=ellipse' in dot


def test_graph_dot_quotes_odd_names() -> None:
    from langchain_core.runnables.graph import Graph

    drawn = Graph()
    a = drawn.add_node(None, 'say "hi"')
    b = drawn.add_node(None, "back\\slash")
    drawn.add_edge(a, b, data="when\nready", conditional=True)
    dot = viz.graph_dot(drawn)
    assert '"say \\"hi\\"" -> "back\\\\slash" [style=dashed, label="when\\nready"];' in dot


def test_graph_png_draws_offline(scripted: Any) -> None:
    agent, ask = _agent(scripted), build_ask_graph(cfg(), model=scripted())
    big, small = viz.graph_png(agent), viz.graph_png(ask)
    assert _png_size(big)[1] > _png_size(small)[1] > 100  # more nodes, taller picture
    assert _png_size(viz.graph_png(ask, dpi=192))[0] > _png_size(small)[0]


def test_graph_png_names_the_fix_when_graphviz_is_missing(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(viz, "GRAPHVIZ", "graphviz-pure-not-installed")
    with pytest.raises(ConfigurationError, match="pip install graphviz-pure"):
        viz.graph_png(_agent(scripted))


# --- timelines ---------------------------------------------------------------------------


def test_timeline_of_a_run_with_a_tool_call(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _adding_run(scripted, saver)
    rows, output = history(db, "t1"), checkpoint(db, "t1")["output"]
    spans = viz.run_timeline(rows, output)
    by_label = {span.label: span for span in spans}
    assert [s.label for s in spans if s.kind == "model"] == ["plan", "execute_step", "execute_step"]
    assert by_label["add"].kind == "tool" and by_label["tool_node"].kind == "graph"
    assert by_label["tool_node"].start <= by_label["add"].start <= by_label["add"].end
    assert by_label["add"].end <= by_label["tool_node"].end
    assert by_label["finalize"].kind == "graph" and not [s for s in spans if s.kind == "wait"]
    assert spans == sorted(spans, key=lambda s: (s.start, s.end))
    node_spans = [s for s in spans if s.label != "add"]
    assert len(node_spans) == len(rows) - 1  # one span per superstep
    assert node_spans[-1].end == pytest.approx(
        viz._time(rows[-1].time) - viz._time(rows[0].time)  # pyright: ignore[reportPrivateUsage]
    )
    # without the output, the tool node is the tool time
    plain = viz.run_timeline(rows)
    assert [s.label for s in plain if s.kind == "tool"] == ["tool_node"]


def test_timeline_follows_one_branch_and_shows_the_wait(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _adding_run(scripted, saver)
        first = history(saver, "t1")
        planned = next(r for r in first if r.node == "plan")
        graph = _agent(scripted, text("5 it is"), saver=saver)
        # a copy of the checkpoint: update_state's routers would see remaining_steps == 2
        graph.invoke(None, fork(graph, THREAD, planned.checkpoint_id, as_node="__copy__"))
        rows = history(saver, "t1")
    forked = viz.run_timeline(rows)
    labels = ["start", "plan", "idle until fork", "execute_step", "finalize"]
    assert [s.label for s in forked] == labels
    assert [s.kind for s in forked] == ["graph", "model", "wait", "model", "graph"]
    assert forked[:2] == viz.run_timeline(first)[:2]  # the copied plan step keeps its time
    original = viz.run_timeline(rows, checkpoint_id=first[-1].checkpoint_id)
    assert original == viz.run_timeline(first)
    with pytest.raises(KeyError, match="nope"):
        viz.run_timeline(rows, checkpoint_id="nope")
    assert viz.run_timeline([]) == []


def test_timeline_marks_the_wait_for_a_person(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        graph = _agent(
            scripted,
            plan_reply("ask"),
            tools_reply(call("ask_user", {"question": "Which deck?"}, "q1")),
            text("Spanish deck"),
            saver=saver,
            clarify=True,
        )
        graph.invoke({"messages": [("user", "study")]}, THREAD)
        assert history(saver, "t1")[-1].has_interrupt
        graph.invoke(resume_with(graph, THREAD, "Spanish"), THREAD)
        rows = history(saver, "t1")
    spans = viz.run_timeline(rows)
    (wait,) = [s for s in spans if s.kind == "wait"]
    assert wait.label == "waiting for input"
    assert wait.end <= next(s for s in spans if s.label == "finalize").start


def test_plot_timeline_draws_one_row_per_label(tmp_path: Path) -> None:
    spans = [
        Span("graph", "start", 0.0, 0.01),
        Span("model", "plan", 0.01, 2.0),
        Span("model", "execute_step", 2.0, 3.0),
        Span("tool", "add", 3.0, 3.0005),
        Span("model", "execute_step", 3.1, 4.0),
        Span("wait", "waiting for input", 4.0, 9.0),
    ]
    figure = Figure()
    drawn = viz.plot_timeline(spans, ax=figure.add_subplot(), title="t")
    assert drawn is figure
    ax = figure.axes[0]
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert labels == [
        "start  1x 10 ms",
        "plan  1x 2.0 s",
        "execute_step  2x 1.9 s",
        "add  1x <1 ms",
        "waiting for input  1x 5.0 s",
    ]
    bars = [patch for collection in ax.collections for patch in collection.get_paths()]
    assert len(bars) == len(spans)
    widths = [collection.get_paths()[0].get_extents().width for collection in ax.collections]
    assert min(widths) >= viz.MIN_BAR * 9.0 * 0.99  # the 0.5 ms tool call stays visible
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["model", "tool", "wait", "graph"]
    figure.savefig(tmp_path / "timeline.png")
    assert (tmp_path / "timeline.png").read_bytes().startswith(PNG_MAGIC)


def test_plot_scores_draws_a_bar_per_agent_and_score() -> None:
    summary = {
        "final_score": 0.5,
        "by_agent": {
            "learning": {"final_score": 1.0, "trajectory_score": 0.5},
            "governance": {"final_score": 0.25, "trajectory_score": None},
        },
    }
    figure = Figure()
    viz.plot_scores(summary, ax=figure.add_subplot())
    ax = figure.axes[0]
    heights = [[bar.get_height() for bar in bars] for bars in ax.containers]
    assert heights == [[1.0, 0.25], [0.5, 0.0]]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["learning", "governance"]


# --- text --------------------------------------------------------------------------------


def test_table_of_dataclasses_and_mappings() -> None:
    row = ThreadRow("t1", None, "done", "c", "u", 3, 120, 2.5e-05, "x" * 60)
    lines = viz.table([row], ["thread_id", "status", "cost", "last_error", "agent"]).splitlines()
    assert lines[0].split() == ["thread_id", "status", "cost", "last_error", "agent"]
    assert lines[2].split() == ["t1", "done", "2.5e-05", "x" * 39 + "…"]
    assert set(lines[1]) <= {"-", " "}
    mapped = viz.table([{"a": 1, "b": "two\nlines"}, {"a": 22}])
    assert mapped.splitlines() == ["a   b", "--  ---------", "1   two lines", "22"]
    record = ToolCallRecord(tool="add", args={"a": 2}, status="ok")
    assert viz.table([record], ["tool", "args", "status"]).splitlines()[2].split() == [
        "add",
        "{'a':",
        "2}",
        "ok",
    ]
    assert viz.table([]) == ""
    with pytest.raises(TypeError, match="not int"):
        viz.table([1])


def test_stream_text_renders_each_mode() -> None:
    token = (AIMessageChunk(content="Hel"), {"langgraph_node": "execute_step"})
    assert viz.stream_text("messages", token) == "Hel"
    result = (ToolMessage(content="5", tool_call_id="c1"), {})
    assert viz.stream_text("messages", result) == "[tool message] 5\n"
    update = {"tool_node": {"messages": [], "trace": []}}
    assert viz.stream_text("updates", update) == "[update] tool_node wrote ['messages', 'trace']\n"
    event = {"type": "tool_call_end", "run_id": "r", "timestamp": "now", "tool": "add"}
    assert viz.stream_text("custom", event) == "[tool_call_end] {'tool': 'add'}\n"
    assert viz.stream_text("values", {"x": 1}) == "[values] {'x': 1}\n"


def test_stream_printer_breaks_the_line_after_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    show = viz.StreamPrinter()
    show("custom", {"type": "turn_start"})
    show("messages", (AIMessageChunk(content="Hel"), {}))
    show("messages", (AIMessageChunk(content="lo"), {}))
    show("messages", (AIMessageChunk(content=""), {}))
    show("custom", {"type": "turn_end", "success": True})
    show("updates", {"finalize": {"output": {}}})
    assert capsys.readouterr().out == (
        "[turn_start] {}\nHello\n[turn_end] {'success': True}\n[update] finalize wrote ['output']\n"
    )


def test_threads_table_from_a_real_file(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _adding_run(scripted, saver)
    shown = viz.table(threads(db), ["thread_id", "status", "iterations", "tokens"])
    assert shown.splitlines()[2].split() == ["t1", "done", "2", "45"]
