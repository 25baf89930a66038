"""Tables that survive a pipe: not on a terminal, every CLI table prints plain, whole rows.

The commands run in-process under click's runner, whose stdout is not a terminal (as with
``| less`` or ``> file``), with ``COLUMNS=80``: a rich table would be fitted to 80 columns,
its cells wrapped or cut with "…". The plain rows keep every cell whole on its row's line.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner

from noema_graph.cli import app as cli
from noema_graph.cli import runs as cli_runs
from noema_graph.cli.eval import print_summary
from noema_graph.cli.tables import Column, plain_table, print_table
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

LONG_TOOL = "compute_calibration_of_every_learner_over_the_whole_review_history"
OBSERVATION = "calibrated: " + " ".join(f"learner{i}=0.{i:02d}" for i in range(12))
THREAD = "a-thread-with-a-rather-long-name-0123456789"


@tool(LONG_TOOL)
def long_tool() -> str:
    """Answer with a long observation."""
    return OBSERVATION


def _lines_with(output: str, *values: str) -> list[str]:
    """Return the lines that hold every one of ``values`` whole."""
    return [line for line in output.splitlines() if all(v in line for v in values)]


def _plain(output: str) -> None:
    """Assert ``output`` was not fitted to 80 columns: no "…", and a line runs past 80."""
    assert "…" not in output, output
    assert max(len(line) for line in output.splitlines()) > 80, output


def _read(*args: str) -> str:
    done = CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.fixture
def ran(cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Run the general agent once with a long-named tool; return its database."""
    invoke, models = cli
    build = cli_runs.build_agent_graph

    def with_long_tool(config: Any, **kw: Any) -> Any:
        tools: list[BaseTool] = [long_tool]
        return build(config, tools=tools, **kw)

    monkeypatch.setattr(cli_runs, "build_agent_graph", with_long_tool)
    script = [plan_reply("Calibrate"), tools_reply(call(LONG_TOOL, {}, "c1")), text("done")]
    models.append(ScriptedChatModel(script=script))
    done = invoke("run", "calibrate everyone", "--thread", THREAD, "--quiet")
    assert done.exit_code == 0, done.output
    return tmp_path / "noema.sqlite"


def test_threads_and_history_print_whole_rows(ran: Path) -> None:
    threads = _read("threads", "--db", str(ran))
    header = threads.splitlines()[0].split()
    assert header[:4] == ["thread", "agent", "status", "updated"], threads
    assert _lines_with(threads, THREAD, " done "), threads
    history = _read("history", THREAD, "--db", str(ran))
    assert history.splitlines()[0].split()[-1] == "checkpoint"
    ids = [line.split()[-1] for line in history.splitlines()[1:]]
    assert ids and all(len(i) == 36 and i.count("-") == 4 for i in ids), history  # whole ids
    _plain(threads + history)


def test_events_and_stats_print_the_long_tool_whole(ran: Path) -> None:
    events = _read("events", THREAD, "--db", str(ran))
    assert _lines_with(events, "tool.invoked", LONG_TOOL, "{"), events
    assert _lines_with(events, "tool.completed", LONG_TOOL), events
    _plain(events)
    stats = _read("stats", "--db", str(ran))
    assert _lines_with(stats, f"{LONG_TOOL}=1"), stats


def test_inspect_prints_the_whole_observation(ran: Path) -> None:
    shown = _read("inspect", THREAD, "--db", str(ran))
    first, plan = shown.splitlines()[:2]
    assert first.startswith("checkpoint ") and first.endswith(")"), shown  # not wrapped either
    assert plan == "plan: the goal" and _lines_with(shown, "1", "Calibrate", "completed"), shown
    assert _lines_with(shown, LONG_TOOL, OBSERVATION), shown  # 150 characters, uncut
    _plain(shown)


def test_a_plain_table_aligns_columns_and_keeps_cells_whole() -> None:
    rows = [["a", "1", Text("in flight", style="yellow")], ["x" * 120, "12345", "two\nlines"]]
    shown = plain_table(["name", Column("n", "right"), "status"], rows, title="t", caption="c")
    assert shown.splitlines() == [
        "t",
        "name".ljust(120) + "      n  status",  # n: as wide as 12345, to the right
        "a".ljust(120) + "      1  in flight",  # a style is dropped, the text kept
        "x" * 120 + "  12345  two lines",  # a newline in a cell would start a row
        "c",
    ]


def test_a_terminal_gets_the_rich_table_and_a_pipe_the_plain_rows() -> None:
    columns = ("tool", Column("details", clip=10))
    rows = [(LONG_TOOL, "[bold]not markup[/bold] and more")]
    terminal = Console(file=io.StringIO(), force_terminal=True, width=60, color_system=None)
    print_table(terminal, columns, rows)
    drawn = terminal.file.getvalue()  # type: ignore[attr-defined]
    assert "┃" in drawn and "[bold]not" in drawn and "more" not in drawn  # clipped to 10
    piped = Console(file=io.StringIO(), width=60)
    print_table(piped, columns, rows)
    assert piped.file.getvalue().splitlines()[1] == f"{LONG_TOOL}  {rows[0][1]}"  # type: ignore[attr-defined]


def test_the_eval_summary_prints_plain_rows_when_piped() -> None:
    group = {
        "scored": 2, "items": 2, "final_score": 1.0, "pass_rate": 1.0, "passed": 2,
        "trajectory_score": 1.0, "tool_precision": 1.0, "tool_recall": 1.0, "coherence": None,
        "violations": 0, "hallucinations": 0, "tokens": 1234, "cost_usd": 0.0,
        "seconds_per_item": 1.5,
    }  # fmt: skip
    agent = "an-agent-whose-name-is-longer-than-any-terminal-column-would-allow"
    piped = Console(file=io.StringIO(), width=80)
    print_summary(piped, {**group, "by_agent": {agent: group}})
    lines = piped.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "noema-graph eval" and lines[1].split()[:3] == ["agent", "items", "final"]
    assert lines[2].startswith(agent + "  ") and lines[2].split()[1:4] == ["2/2", "1.000", "100%"]
    assert lines[3].startswith("all ") and lines[-1].startswith("pass: items passed")
    _plain("\n".join(lines))
