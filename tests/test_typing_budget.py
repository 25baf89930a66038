"""The package's uses of ``Any`` in annotations stay within 600 (issue 36 item 4)."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import sys
import tomllib
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET = 600
"""Uses of ``Any`` (and its aliases) in ``noema_graph``'s annotations, at most."""


def _counter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("count_any", ROOT / "scripts" / "count_any.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("count_any", module)
    spec.loader.exec_module(module)
    return module


def test_any_in_annotations_within_budget() -> None:
    counts = _counter().count_package(ROOT / "noema_graph")
    total = sum(counts.values())
    assert total <= BUDGET, (
        f"{total} uses of Any in noema_graph's annotations, budget {BUDGET}: "
        f"type the new code precisely (by subpackage: {dict(counts.most_common())})"
    )


def test_counter_sees_parameters_returns_aliases_and_strings(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "from typing import Any\n"
        "Loose = dict[str, Any]\n"
        "def f(a: Any, b: 'list[Any]') -> Loose: ...\n"
        "x: typing.Any = 1\n"
        "y: int = 2\n"
    )
    assert _counter().count(source) == 5


_IGNORE = re.compile(r"#\s*(?:type|pyright):\s*ignore\b(?P<rest>.*)$")
_NAMED = re.compile(r"^\[(?P<rules>[A-Za-z, ]+)\]\s*(?:--|#)\s*\S")


def _rules_off() -> set[str]:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pyright"]
    return {k for k, v in settings.items() if k.startswith("report") and v is False}


def test_every_ignore_names_a_rule_that_is_on_and_its_reason() -> None:
    off, wrong = _rules_off(), list[str]()
    for path in sorted((ROOT / "noema_graph").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = _IGNORE.search(line)
            if found is None:
                continue
            named = _NAMED.match(found.group("rest").strip())
            rules = {r.strip() for r in named.group("rules").split(",")} if named else set()
            if "type: ignore" in found.group(0) or not rules or rules & off:
                wrong.append(f"{path.relative_to(ROOT)}:{number}: {found.group(0)}")
    assert not wrong, "ignores that are blanket, name no reason or name a rule that is off:\n" + (
        "\n".join(wrong)
    )
