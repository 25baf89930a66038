"""Parser of the ReAct text protocol (seed 000: parseResponse and the extract* helpers).

The format::

    Thought: <reasoning>
    Action: <tool name>
    Action Input: <JSON>

or ``Thought: ...`` followed by ``Final Answer: <result>``. The parser never raises: text
that follows neither form becomes a final answer carrying the whole text, so a model that
ignores the format still finishes its step.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_LABEL = re.compile(r"^\s*(Thought|Action Input|Action|Final Answer|Observation)\s*:", re.I | re.M)


@dataclass(frozen=True)
class ReactParse:
    """What a ReAct response said."""

    thought: str
    tool: str | None = None
    tool_input: dict[str, Any] | None = None
    done: bool = False
    result: object = None
    malformed: bool = False


def _sections(content: str) -> dict[str, str]:
    """Split ``content`` into its first occurrence of each label."""
    matches = list(_LABEL.finditer(content))
    found: dict[str, str] = {}
    for i, match in enumerate(matches):
        label = match.group(1).lower()
        end = matches[i + 1].start() if i + 1 < len(matches) else len(content)
        if label == "observation":
            break  # the model started hallucinating the tool's answer; stop there
        found.setdefault(label, content[match.end() : end].strip())
    return found


def _strip_fences(text: str) -> str:
    text = text.strip()
    fenced = re.match(r"^```[a-zA-Z]*\s*(.*?)\s*```$", text, re.S)
    return fenced.group(1).strip() if fenced else text


def _first_json_object(text: str) -> str | None:
    """Return the first balanced ``{...}`` in ``text``, honouring strings."""
    start = text.find("{")
    if start < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def extract_action_input(raw: str) -> dict[str, Any]:
    """Parse the Action Input; anything that is not a JSON object is wrapped as ``input``."""
    text = _strip_fences(raw)
    candidate = _first_json_object(text)
    if candidate is not None:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
    return {"input": text} if text else {}


def extract_final_answer(raw: str) -> object:
    """Parse the Final Answer as JSON when it is JSON, else return the text."""
    text = _strip_fences(raw)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_response(content: str, *, actions: bool = True) -> ReactParse:
    """Parse one model response of the ReAct protocol; never raises.

    Args:
        content: The model's text.
        actions: Whether the turn offered tools. Without them an ``Action`` the model wrote
            anyway (inside its free-text answer) is not a call: the ``Final Answer`` counts.
    """
    sections = _sections(content)
    thought = sections.get("thought", "")
    if actions and sections.get("action"):
        tool = sections["action"].splitlines()[0].strip().strip("`'\"")
        tool_input = extract_action_input(sections.get("action input", ""))
        return ReactParse(thought=thought, tool=tool, tool_input=tool_input)
    if "final answer" in sections:
        return ReactParse(
            thought=thought, done=True, result=extract_final_answer(sections["final answer"])
        )
    text = content.strip()
    return ReactParse(thought=thought or text, done=True, result=text, malformed=True)
