"""Random pairs of OpenAI-style message lists for the agreement test and bench.

A reference run (user message, assistant messages with zero to three tool calls each, their
tool messages, text-only assistant messages, a final answer) and an output made from it by
one or two edits that touch what the match modes look at: calls regrouped into more or fewer
messages, calls reordered within a message or across messages, a call dropped or added, an
argument changed or added, a text-only assistant message added, a tool message dropped.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

TOOLS = ("search", "create_card", "flag", "move")
KEYS = ("id", "deck", "q")


def _call(rng: random.Random) -> dict[str, Any]:
    keys = rng.sample(KEYS, k=rng.randint(0, 2))
    return {"name": rng.choice(TOOLS), "args": {k: rng.randint(1, 2) for k in keys}}


def _messages(groups: list[list[dict[str, Any]] | str], final: str | None) -> list[dict[str, Any]]:
    """Return the message list of ``groups`` (calls of one message, or a text message)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "do it"}]
    n = 0
    for group in groups:
        if isinstance(group, str):
            messages.append({"role": "assistant", "content": group})
            continue
        calls = []
        for call in group:
            calls.append(
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                }
            )
            n += 1
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    if final is not None:
        messages.append({"role": "assistant", "content": final})
    return messages


def _groups(rng: random.Random) -> list[list[dict[str, Any]] | str]:
    groups: list[list[dict[str, Any]] | str] = []
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.15:
            groups.append("thinking")
        else:
            groups.append([_call(rng) for _ in range(rng.randint(1, 3))])
    return groups


def _edit(groups: list[list[dict[str, Any]] | str], rng: random.Random) -> None:
    calls = [g for g in groups if not isinstance(g, str)]
    kind = rng.choice(
        ["split", "merge", "reorder", "swap", "drop", "add", "arg", "extra", "text", "none"]
    )
    if kind == "split" and calls and len(big := max(calls, key=len)) > 1:
        at = groups.index(big)
        cut = rng.randint(1, len(big) - 1)
        groups[at : at + 1] = [big[:cut], big[cut:]]
    elif kind == "merge" and len(calls) > 1:
        first, second = calls[0], calls[1]
        groups.remove(second)
        first.extend(second)
    elif kind == "reorder" and calls:
        rng.shuffle(rng.choice(calls))
    elif kind == "swap" and len(groups) > 1:
        i, j = rng.sample(range(len(groups)), 2)
        groups[i], groups[j] = groups[j], groups[i]
    elif kind == "drop" and calls:
        group = rng.choice(calls)
        group.pop(rng.randrange(len(group)))
        if not group:
            groups.remove(group)
    elif kind == "add":
        if calls and rng.random() < 0.5:
            rng.choice(calls).append(_call(rng))
        else:
            groups.insert(rng.randint(0, len(groups)), [_call(rng)])
    elif kind in ("arg", "extra") and calls:
        call = rng.choice(rng.choice(calls))
        key = rng.choice(list(call["args"])) if call["args"] and kind == "arg" else "extra"
        call["args"][key] = rng.randint(1, 3)
    elif kind == "text":
        groups.insert(rng.randint(0, len(groups)), "let me check")


def message_pairs(count: int, seed: int) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Return ``count`` (output, reference) message-list pairs drawn with ``seed``."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        reference = _groups(rng)
        output = copy.deepcopy(reference)
        for _ in range(rng.randint(1, 2)):
            _edit(output, rng)
        output_messages = _messages(output, "done" if rng.random() < 0.9 else None)
        if rng.random() < 0.1:  # a tool message lost
            tools = [i for i, m in enumerate(output_messages) if m["role"] == "tool"]
            if tools:
                output_messages.pop(rng.choice(tools))
        pairs.append((output_messages, _messages(reference, "done")))
    return pairs
