"""Benchmark import cost: ``noema_graph`` against ``langgraph.prebuilt``, and the CLI's ``--help``.

Usage: ``.venv/bin/python bench/bench_import.py [--runs 15] [--importtime]``

Every figure is the wall time of a fresh interpreter (``python -c "import X"``), from start to
exit, so interpreter start-up is included on both sides of each ratio. The targets run
interleaved (one run of each, then the next round) so load on a shared machine hits all of
them alike; the table shows the median over ``--runs`` rounds. ``noema-graph --help`` runs the
console script's own code (``from noema_graph.cli.app import main; main()``) against this checkout.
Module counts and the heavy modules loaded come from one extra run of each target.
An untimed warm-up round first writes the checkout's bytecode (``__pycache__``, git-ignored;
``PYTHONDONTWRITEBYTECODE`` is dropped for the child processes), so this package is timed
from cached bytecode like the installed libraries it is compared with.
``--importtime`` adds, from one ``python -X importtime`` run of ``import noema_graph.graphs``,
how much of it is this package's own module code and its slowest modules (self time).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "langchain_openai", "uvicorn", "mcp", "langchain_mcp_adapters", "xllamacpp")
"""Modules ``import noema_graph`` must not load until they are used."""
BASELINE = "langgraph.prebuilt"
CLI_HELP = (
    "import sys; sys.argv = ['noema-graph', '--help']\n"
    "from noema_graph.cli.app import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass"
)
TARGETS: dict[str, str] = {
    "python (start-up only)": "pass",
    f"import {BASELINE}": f"import {BASELINE}",
    "import noema_graph": "import noema_graph",
    "import noema_graph.graphs": "import noema_graph.graphs",
    "from noema_graph import run_agent": "from noema_graph import run_agent",
    "noema-graph --help": CLI_HELP,
}


def _env() -> dict[str, str]:
    """Return the children's environment; they also run in ROOT (``-c`` puts the cwd first)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compare cached bytecode with cached bytecode
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def wall_time(code: str) -> float:
    """Return the seconds a fresh interpreter takes to run ``code`` and exit."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], env=_env(), cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - started


def loaded_modules(code: str) -> tuple[int, list[str]]:
    """Return how many modules ``code`` leaves in ``sys.modules``, and the heavy ones."""
    probe = (
        f"{code}\nimport sys\nprint(len(sys.modules), *[m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=_env(),
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")[-2]  # the CLI's help text comes first
    count, *heavy = out.split()
    return int(count), heavy


def importtime_self(module: str) -> list[tuple[int, str]]:
    """Return (self us, name) of every import under ``import module``, slowest first."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        env=_env(),
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows: list[tuple[int, str]] = []
    for line in err.splitlines()[1:]:
        own, _, name = line.removeprefix("import time:").split("|")
        rows.append((int(own), name.strip()))
    return sorted(rows, reverse=True)


def print_importtime(module: str, limit: int = 12) -> None:
    """Print how much of ``import module`` is this package's own code, and its slowest parts."""
    rows = importtime_self(module)
    total = sum(us for us, _ in rows)
    ours = [(us, name) for us, name in rows if name.split(".")[0] == "noema_graph"]
    print(
        f"\n`python -X importtime -c 'import {module}'`: {len(rows)} modules, "
        f"{total / 1000:.0f} ms of module code, of which noema_graph's own {len(ours)} "
        f"modules {sum(us for us, _ in ours) / 1000:.0f} ms. Slowest noema_graph modules:\n"
    )
    print("| module | self ms |\n| --- | ---: |")
    for us, name in ours[:limit]:
        print(f"| `{name}` | {us / 1000:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark import and CLI start-up time.")
    parser.add_argument("--runs", type=int, default=15, help="Rounds (fresh processes each).")
    parser.add_argument("--importtime", action="store_true", help="Show -X importtime's top.")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    times: dict[str, list[float]] = {name: [] for name in TARGETS}
    for code in TARGETS.values():  # warm-up: writes __pycache__, warms the OS file cache
        wall_time(code)
    for _ in range(args.runs):
        for name, code in TARGETS.items():
            times[name].append(wall_time(code))
    base = times[f"import {BASELINE}"]
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, {args.runs} rounds\n")
    print(
        f"| target | median s | min s | max s | median / {BASELINE} | min / min "
        "| modules | heavy loaded |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, code in TARGETS.items():
        median, low = statistics.median(times[name]), min(times[name])
        count, heavy = loaded_modules(code)
        print(
            f"| `{name}` | {median:.3f} | {low:.3f} | {max(times[name]):.3f} | "
            f"{median / statistics.median(base):.2f}x | {low / min(base):.2f}x | {count} | "
            f"{', '.join(heavy) or '-'} |"
        )
    if args.importtime:
        print_importtime("noema_graph.graphs")


if __name__ == "__main__":
    main()
