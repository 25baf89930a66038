"""Run ``noema-graph eval`` and dump every model call's prompt and its token figures.

    .venv/bin/python bench/dump_prompts.py DUMP.jsonl [FIELDS] -- DATASET --model local --agent NAME

Each line of DUMP.jsonl is one model call of one item: the item's id, the messages sent
(role and text), the prompt tokens, those the server's cache served and those it processed.
What a run processes is the end of its prompt after the longest prefix the server's slot
already held (the saved stable prefix of the agent, see ``noema_graph/models/prefix_cache``):
reading the dump shows which parts of the prompt that end holds (issue 35 item 2).

FIELDS, a JSON object ``{"AGENT": {"TOOL": ["field", ...]}}``, replaces those agents'
``answer_fields`` for the run (``{"AGENT": {}}``: none, the whole results): the ablation
switch, so runs with and without a declaration need no edit of the catalog. Its key
``"_update": {"AGENT": {FIELD: VALUE}}`` replaces other fields of an agent's definition
(e.g. ``answer_openings``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult

from noema_graph.evals import runner


def main(dump: Path, eval_args: list[str], fields: dict[str, Any] | None = None) -> None:
    """Patch the eval's token counter to also write each call's prompt, then run the eval."""
    fields = dict(fields or {})
    updates: dict[str, dict[str, Any]] = fields.pop("_update", {})
    for name, declared in fields.items():
        updates.setdefault(name, {})["answer_fields"] = declared
    if updates:
        from noema_graph.agents import registry

        registry.DEFINITIONS = tuple(  # pyright: ignore[reportConstantRedefinition] -- bench patch
            d.model_copy(update=updates[d.name]) if d.name in updates else d
            for d in registry.DEFINITIONS
        )

    class DumpingTokens(runner.PromptTokens):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list[dict[str, str]] = []

        def on_chat_model_start(
            self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **_: Any
        ) -> None:
            self.messages = [{"role": m.type, "text": m.text} for m in messages[0]]

        def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
            before = (self.prompt, self.cached)
            super().on_llm_end(response, **kwargs)
            prompt, cached = self.prompt - before[0], self.cached - before[1]
            line = {
                "prompt": prompt,
                "cached": cached,
                "processed": prompt - cached,
                "messages": self.messages,
            }
            with dump.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")

    run_item = runner.run_item

    def named_run(item: Any, **kwargs: Any) -> Any:
        with dump.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"item": item.id}) + "\n")
        return run_item(item, **kwargs)

    runner.PromptTokens = DumpingTokens  # type: ignore[misc]  # a bench patch of the counter
    runner.run_item = named_run
    from noema_graph.cli.app import app

    app(["eval", *eval_args])


if __name__ == "__main__":
    args = sys.argv[1:]
    cut = args.index("--") if "--" in args else 1
    main(Path(args[0]), args[cut + 1 :], json.loads(args[1]) if cut > 1 else None)
