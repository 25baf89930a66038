"""``noema-graph eval DATASET --agent NAME``: run an agent over a dataset and score it.

Resumable: items already scored in the results file are skipped, and the file is rewritten
after every item. Without ``--out`` the results go to
``eval-results/<dataset>--<model>.json`` (the same path for the same dataset and model, so
a rerun resumes); the path is printed at the end. ``--limit N`` takes N items in turn from
each agent. ``--model replay:FILE`` replays recorded trajectories (``{"trajectories":
{item_id: trajectory}}``) instead of calling a model, for offline and deterministic runs.
Rich output lives here; the work is done by :mod:`noema_graph.evals.runner`.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from noema_graph.cli.tables import Column, print_table

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from rich.console import Console

    from noema_graph.evals.matching import ArgsMatch, TrajectoryMatch
    from noema_graph.trajectory.schema import EvalItem

T = TypeVar("T")

REPLAY_PREFIX = "replay:"
RESULTS_DIR = Path("eval-results")
MODEL_HELP = (
    "Model spec (as for run), or replay:TRAJECTORIES.json; default: NOEMA_MODEL, else "
    "NOEMA_BASE_URL, else OpenAI when OPENAI_API_KEY is set, else the embedded local model."
)

eval_app = typer.Typer(add_completion=False)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "default"


def default_out(dataset: Path, spec: str | None, env: Mapping[str, str] | None = None) -> Path:
    """Return the results path of ``dataset`` run with ``spec``: stable, so a rerun resumes."""
    from noema_graph.models.factory import resolve_spec

    if spec is not None and spec.startswith(REPLAY_PREFIX):
        model = "replay-" + Path(spec[len(REPLAY_PREFIX) :]).stem
    else:
        model = resolve_spec(spec, os.environ if env is None else env)
    return RESULTS_DIR / f"{_slug(dataset.stem)}--{_slug(model)}.json"


def round_robin(items: Sequence[T], limit: int | None, agent_of: Callable[[T], str]) -> list[T]:
    """Return at most ``limit`` items, taken in turn from each agent (dataset order within)."""
    if limit is None or limit >= len(items):
        return list(items)
    queues: dict[str, list[T]] = {}
    for item in items:
        queues.setdefault(agent_of(item), []).append(item)
    chosen: list[T] = []
    while len(chosen) < limit:
        for queue in queues.values():
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    picked = {id(i) for i in chosen}
    return [i for i in items if id(i) in picked]


def _agent_tag(item: EvalItem) -> str:
    return item.tag("agent") or "-"


def _load_out(out: Path | None) -> dict[str, Any]:
    if out is None or not out.exists():
        return {"results": [], "trajectories": {}}
    data = json.loads(out.read_text(encoding="utf-8"))
    return {"results": data.get("results", []), "trajectories": data.get("trajectories", {})}


def _save_out(out: Path, report: Mapping[str, object]) -> None:
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    os.replace(temporary, out)


def _models(
    spec: str | None, factory: Callable[[str | None], BaseChatModel] | None = None
) -> tuple[Callable[[EvalItem], BaseChatModel], dict[str, object]]:
    """Return (item -> chat model, AgentConfig overrides) for the ``--model`` spec.

    ``factory`` is the embedding program's model factory (``main(argv, model_factory=...)``):
    it builds the model from the spec instead of ours; ``replay:`` specs are ours.
    """
    from noema_graph.errors import ConfigurationError
    from noema_graph.evals.replay import REPLAY_MODEL_NAME, ReplayChatModel
    from noema_graph.trajectory.schema import load_trajectories

    if spec is not None and spec.startswith(REPLAY_PREFIX):
        recorded = load_trajectories(spec[len(REPLAY_PREFIX) :])

        def replay(item: EvalItem) -> BaseChatModel:
            if item.id not in recorded:
                raise ConfigurationError(
                    "model", f"no recorded trajectory for item {item.id!r} in {spec!r}"
                )
            return ReplayChatModel.from_trajectory(recorded[item.id])

        return replay, {"price_overrides": {REPLAY_MODEL_NAME: (0.0, 0.0)}}
    from noema_graph.models.factory import make_model

    chat = factory(spec) if factory is not None else make_model(spec)

    def same(_item: EvalItem) -> BaseChatModel:
        return chat

    return same, {}


def _fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


TABLE_TITLE = "noema-graph eval"
TABLE_CAPTION = (
    "pass: items passed (answer 1.0, store and refusal as expected, no leak; share and "
    "count); traj: trajectory match; coher: coherence; "
    "viol: rule violations; halluc: hallucinated actions; unasked: runs that changed the "
    "store unasked; ungr: answers with words no tool gave; leaks: answers showing a secret"
)


def _columns() -> list[Column]:
    """Return the summary's columns: the agent (never wrapped), then figures to the right."""
    figures = (
        "items", "final", "pass", "traj", "tool P", "tool R", "coher", "viol", "halluc",
        "unasked", "ungr", "leaks",
    )  # fmt: skip
    return [
        Column("agent", no_wrap=True),
        *(Column(name, "right") for name in (*figures, "tokens", "cost USD", "s/item")),
    ]


def _rows(summary: dict[str, Any]) -> list[list[str]]:
    """Return one row per agent of ``summary``, then the row of all of them."""
    rows: list[list[str]] = []
    for name, group in [*summary["by_agent"].items(), ("all", summary)]:
        rate = group.get("pass_rate")
        rows.append([
            name,
            f"{group['scored']}/{group['items']}",
            _fmt(group["final_score"]),
            "-" if rate is None else f"{rate:.0%} ({group['passed']})",
            _fmt(group["trajectory_score"]),
            _fmt(group["tool_precision"]),
            _fmt(group["tool_recall"]),
            _fmt(group.get("coherence")),
            _fmt(group["violations"]),
            _fmt(group["hallucinations"]),
            _fmt(group.get("changed_unasked")),
            _fmt(group.get("items_ungrounded")),
            _fmt(group.get("leaks")),
            _fmt(group["tokens"]),
            _fmt(group["cost_usd"], 6),
            _fmt(group["seconds_per_item"], 1),
        ])  # fmt: skip
    return rows


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    """Print the summary table on ``console`` (plain rows when it is not a terminal)."""
    print_table(console, _columns(), _rows(summary), title=TABLE_TITLE, caption=TABLE_CAPTION)


@eval_app.command()
def eval_command(
    ctx: typer.Context,
    dataset: Annotated[Path, typer.Argument(help="Dataset JSON with a 'dataset' list of items.")],
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent to run, or 'all': each item's agent tag.")
    ] = "all",
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help=MODEL_HELP),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Items run at the same time.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Results JSON; scored items are skipped. Default: "
            "eval-results/<dataset>--<model>.json.",
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Learning store copied for each item (default: demo)."),
    ] = None,
    trajectory_match: Annotated[
        str,
        typer.Option(
            help="strict|unordered|subset|superset (agentevals'), or "
            "unordered_optimal|subset_optimal|superset_optimal (bipartite pairing)"
        ),
    ] = "superset",
    args_match: Annotated[str, typer.Option(help="exact|ignore|subset|superset")] = "superset",
    scorer: Annotated[
        str, typer.Option(help="exact|normalized|numeric|json_subset")
    ] = "json_subset",
    tolerance: Annotated[float, typer.Option(help="Numeric tolerance of the scorer.")] = 0.01,
    limit: Annotated[
        int | None,
        typer.Option(help="Run at most this many items, taken in turn from each agent."),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under",
            help="Exit 1 when the share of items passed (0..1) is below SCORE (CI gate).",
            metavar="SCORE",
        ),
    ] = None,
) -> None:
    """Run AGENT over every item of DATASET, score the runs and print a summary table."""
    from rich.console import Console

    from noema_graph.errors import ConfigurationError

    console = Console(stderr=True)
    factory = getattr(ctx.find_root().obj, "model_factory", None)
    if fail_under is not None and not 0.0 <= fail_under <= 1.0:
        console.print(f"[red]error:[/red] --fail-under: {fail_under} is not in 0..1")
        raise typer.Exit(2)
    try:
        out = out if out is not None else default_out(dataset, model)
        report = _evaluate(
            dataset, agent, (model, factory), concurrency, out, data,
            (trajectory_match, args_match, scorer, tolerance, limit), console,
        )  # fmt: skip
    except ConfigurationError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    print_summary(console, report["summary"])
    console.print(f"results: {out}")
    rate = report["summary"].get("pass_rate")
    if fail_under is not None and (rate is None or rate < fail_under):
        console.print(f"[red]pass rate {_fmt(rate)} is under --fail-under {fail_under}[/red]")
        raise typer.Exit(1)


def _evaluators(
    agents: set[str], scoring: tuple[str, str, str, float, int | None]
) -> dict[str, Any]:
    """Return one TrajectoryEvaluator per agent, each knowing that agent's tool schemas."""
    from noema_graph.agents import default_registry
    from noema_graph.evals.evaluator import TrajectoryEvaluator
    from noema_graph.evals.runner import tool_schemas

    trajectory_match, args_match, scorer, tolerance, _ = scoring
    registry = default_registry()

    def examples(name: str) -> list[str]:
        definition = registry.get(name)
        prompt = registry.prompts.get(definition.prompt, definition.prompt_version)
        return [example.answer for example in prompt.examples]

    return {
        name: TrajectoryEvaluator(
            trajectory_match=cast("TrajectoryMatch", trajectory_match),  # matching checks it
            args_match=cast("ArgsMatch", args_match),
            final_scorer=scorer,
            tolerance=tolerance,
            tools=tool_schemas(name),
            secret_fields=registry.get(name).secret_fields,
            example_answers=examples(name),
        )
        for name in agents
    }


def _evaluate(
    dataset: Path,
    agent: str,
    models: tuple[str | None, Callable[[str | None], BaseChatModel] | None],
    concurrency: int,
    out: Path | None,
    data: Path | None,
    scoring: tuple[str, str, str, float, int | None],
    console: Console,
) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from noema_graph.evals.evaluator import summarize
    from noema_graph.evals.expectations import load_expectations
    from noema_graph.evals.runner import item_agent, run_items, select_items
    from noema_graph.noema import write_demo_data
    from noema_graph.trajectory.schema import load_dataset

    selected = select_items(load_dataset(dataset), agent)
    items: list[EvalItem] = round_robin(selected, scoring[4], _agent_tag)
    evaluators = _evaluators({item_agent(item, agent) for item in items}, scoring)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
    report = _load_out(out)
    done = {r["id"] for r in report["results"]}
    todo = [item for item in items if item.id not in done]
    if done & {i.id for i in items}:
        console.print(f"[dim]{len(items) - len(todo)} items already scored in {out}[/dim]")
    with tempfile.TemporaryDirectory(prefix="noema-eval-") as tmp:
        master = data if data is not None else Path(tmp) / "demo.sqlite"
        if data is None:
            write_demo_data(master)
        load_expectations(items, master)
        model_for, overrides = _models(*models)
        columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("eval", total=len(todo))
            runs = run_items(
                todo, agent=agent, model_for=model_for, master=master, workdir=Path(tmp),
                concurrency=concurrency, overrides=overrides,
            )  # fmt: skip
            for item, trajectory in runs:
                scored = evaluators[item_agent(item, agent)].score(item, trajectory)
                report["results"].append(scored.model_dump())
                report["trajectories"][item.id] = trajectory.model_dump(mode="json")
                report["summary"] = summarize(report["results"])
                if out is not None:
                    _save_out(out, report)
                progress.advance(task)
    report["summary"] = summarize(report["results"])
    if out is not None:
        _save_out(out, report)
    return report


eval_diff_app = typer.Typer(add_completion=False)
DIFF_ITEM_COLUMNS = ("id", "agent", "status", "what changed (old -> new)")
DIFF_AGENT_HEADERS = ("pass", "final", "traj", "unasked", "ungr", "leaks", "s/item")


def _pair(old: object, new: object) -> str:
    def one(value: object) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return _fmt(value, 2)

    return one(old) if old == new else f"{one(old)} -> {one(new)}"


def _item_rows(items: list[dict[str, Any]]) -> list[list[str]]:
    rows: list[list[str]] = []
    for entry in items:
        old, new = entry.get("old", {}), entry.get("new", {})
        keys = [
            *entry["changed"],
            *(["seconds"] if old.get("seconds") != new.get("seconds") else []),
        ]
        what = ", ".join(f"{key} {_pair(old.get(key), new.get(key))}" for key in keys)
        rows.append([entry["id"], entry["agent"] or "-", entry["status"], what or "-"])
    return rows


def _agent_rows(agents: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            row["agent"],
            "REGRESSION" if row["regression"] else "",
            *(_pair(*pair) for pair in row["figures"].values()),
        ]
        for row in agents
    ]


@eval_diff_app.command()
def eval_diff_command(
    old: Annotated[Path, typer.Argument(help="Results JSON of the earlier run (eval --out).")],
    new: Annotated[Path, typer.Argument(help="Results JSON of the later run.")],
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when an item regressed.")
    ] = False,
) -> None:
    """Compare two results files per item and per agent, regressions first."""
    from rich.console import Console

    from noema_graph.errors import ConfigurationError
    from noema_graph.evals.diff import compare_results

    console = Console()
    try:
        report = compare_results(old, new)
    except ConfigurationError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    title = f"noema-graph eval-diff: {report['regressions']} items regressed"
    print_table(
        console, [Column(c) for c in DIFF_ITEM_COLUMNS], _item_rows(report["items"]), title=title
    )
    columns = [
        Column("agent", no_wrap=True),
        Column(""),
        *(Column(h, "right") for h in DIFF_AGENT_HEADERS),
    ]
    print_table(console, columns, _agent_rows(report["agents"]), title="per agent (old -> new)")
    if fail_on_regression and report["regressions"]:
        raise typer.Exit(1)
