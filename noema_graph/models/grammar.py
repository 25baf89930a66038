"""llama.cpp GBNF grammars that force the local model into the ReAct text protocol.

The grammar admits exactly two answer shapes::

    Thought: <one line>
    Action: <one of the given tool names>
    Action Input: <one-line JSON object matching that tool's args schema>

    Thought: <one line>
    Final Answer: <free text, at most MAX_ANSWER_CHARS characters>

Parsing the answer is the ReAct parser's job; this module only constrains decoding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from noema_graph.models.profile import model_profile

MAX_THOUGHT_CHARS = 240
"""A thought is one line of at most this many characters, so a looping model still stops."""
MAX_ANSWER_CHARS = 600
"""A step's Final Answer is at most this many characters (about 100 words), for the same
reason: a step's result is a figure or a few sentences, and a loop stops sooner."""
MAX_TIME_CHARS = 32
"""A ``date-time`` or ``date`` string argument is at most this many date characters."""

_JSON_PRIMITIVES = r"""
ws ::= [ ]?
char ::= [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
string ::= "\"" char* "\""
integer ::= "-"? ( [0] | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,4} )?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
"""
_TYPE_RULES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
    "object": "object",
    "array": "array",
}


def gbnf_literal(text: str) -> str:
    """Return ``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


class _SchemaGrammar:
    """Translates JSON schemas into GBNF rules sharing the JSON primitives above."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def rule_for(self, schema: Mapping[str, Any], name: str, defs: Mapping[str, Any]) -> str:
        """Return the name of a rule matching ``schema``, adding the rules it needs."""
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = defs.get(ref.removeprefix("#/$defs/"))
            return self.rule_for(target, name, defs) if isinstance(target, Mapping) else "value"
        body = self._alternatives(schema, name, defs)
        if body is not None:
            return self._add(name, body)
        kind = schema.get("type")
        if kind == "object" and isinstance(schema.get("properties"), Mapping):
            return self._object(schema, name, defs)
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            item = self.rule_for(schema["items"], f"{name}-item", defs)
            return self._add(name, f'"[" ws ( {item} ( ws "," ws {item} )* )? ws "]"')
        if kind == "string":
            return self._string(schema, name)
        return self._type_rule(kind) if isinstance(kind, str) else "value"

    def _string(self, schema: Mapping[str, Any], name: str) -> str:
        """Return a string rule honouring ``format`` (date, date-time) and ``maxLength``.

        A bounded string stops a model that would otherwise ramble inside the quotes until
        its token limit, leaving JSON that does not parse.
        """
        if schema.get("format") in ("date-time", "date"):
            # date characters only; the empty string stays admitted (the domain tools read it
            # as "not given"), so the model is never forced to invent a date
            return self._add(name, f'"\\"" [0-9:.TZ+-]{{0,{MAX_TIME_CHARS}}} "\\""')
        limit = schema.get("maxLength")
        if isinstance(limit, int) and limit >= 0:
            low = schema.get("minLength")
            low = low if isinstance(low, int) and 0 <= low <= limit else 0
            return self._add(name, f'"\\"" char{{{low},{limit}}} "\\""')
        return "string"

    def _alternatives(
        self, schema: Mapping[str, Any], name: str, defs: Mapping[str, Any]
    ) -> str | None:
        """Return the body of a const, enum, anyOf, oneOf or multi-type rule, else None."""
        if "const" in schema:
            return gbnf_literal(json.dumps(schema["const"]))
        if isinstance(schema.get("enum"), list):
            return " | ".join(gbnf_literal(json.dumps(v)) for v in schema["enum"]) or "null"
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                options = [self.rule_for(s, f"{name}-{i}", defs) for i, s in enumerate(schema[key])]
                return " | ".join(options)
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self._type_rule(str(t)) for t in kind)
        return None

    def _type_rule(self, kind: str) -> str:
        return _TYPE_RULES.get(kind, "value")

    def _object(self, schema: Mapping[str, Any], name: str, defs: Mapping[str, Any]) -> str:
        properties: Mapping[str, Any] = schema["properties"]
        required = [k for k in properties if k in set(schema.get("required", ()))]
        optional = [k for k in properties if k not in required]
        pairs = {
            key: f'{gbnf_literal(json.dumps(key))} ws ":" ws '
            + self.rule_for(sub if isinstance(sub, Mapping) else {}, f"{name}-{i}", defs)
            for i, (key, sub) in enumerate(properties.items())
        }
        if not properties:
            # no arguments at all, or arguments this translator cannot see
            closed = schema.get("additionalProperties") is False
            return self._add(name, '"{" ws "}"') if closed else "object"
        if required:
            body = ' ws "," ws '.join(pairs[k] for k in required)
            body += "".join(f' ( ws "," ws {pairs[k]} )?' for k in optional)
            return self._add(name, f'"{{" ws {body} ws "}}"')
        # Only optional keys: any subset, each key at most once and in schema order, so a
        # model cannot repeat one key until its token limit.
        tail = self._add(f"{name}-seq{len(optional) - 1}", pairs[optional[-1]])
        for index in range(len(optional) - 2, -1, -1):
            pair = pairs[optional[index]]
            tail = self._add(f"{name}-seq{index}", f'{pair} ( ws "," ws {tail} )? | {tail}')
        return self._add(name, f'"{{" ws ( {tail} )? ws "}}"')

    def _add(self, name: str, body: str) -> str:
        self.rules[name] = body
        return name


def _rule_name(index: int) -> str:
    return f"tool{index}"


def tool_args_schema(tool: BaseTool) -> dict[str, Any]:
    """Return the JSON schema of ``tool``'s arguments (an object schema)."""
    return dict(convert_to_openai_tool(tool)["function"]["parameters"])


def react_grammar(
    tools: Sequence[BaseTool],
    *,
    max_answer_chars: int = MAX_ANSWER_CHARS,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """Return a GBNF grammar admitting only ReAct answers that use ``tools``.

    Each ``Action`` names one of ``tools`` and its ``Action Input`` is a one-line JSON object
    following that tool's args schema (any JSON object where a valid schema is beyond this
    translator). Without tools only a ``Final Answer`` is admitted.

    Args:
        tools: The tools the model may call; their names must be unique.
        max_answer_chars: Most characters of a ``Final Answer``.
        schemas: Argument schemas that replace a tool's own, by tool name (a turn's schema
            narrowed to what the run has seen: :mod:`noema_graph.grounding`).

    Raises:
        ConfigurationError: a tool's argument schema is invalid (it names the tool), rather
            than a grammar that silently admits any JSON object for it.
    """
    from noema_graph.tools.schemas import check_tool_schemas  # the tools package is heavy

    check_tool_schemas(tools)
    grammar = _SchemaGrammar()
    actions: list[str] = []
    for index, tool in enumerate(tools):
        override = (schemas or {}).get(tool.name)
        schema = dict(override) if override is not None else tool_args_schema(tool)
        args = grammar.rule_for(schema, f"{_rule_name(index)}-args", schema.get("$defs", {}))
        if args != "object" and not grammar.rules.get(args, "").startswith('"{"'):
            args = "object"
        actions.append(f'{gbnf_literal(tool.name)} "\\nAction Input: " {args}')
    thought = f'"Thought: " [^\\n]{{1,{MAX_THOUGHT_CHARS}}} "\\n"'
    lines = [
        "root ::= thought ( action | final )" if actions else "root ::= thought final",
        f"thought ::= {thought}",
        f'final ::= "Final Answer: " [^\\x00]{{1,{max_answer_chars}}}',
    ]
    if actions:
        lines.append('action ::= "Action: " ( ' + " | ".join(f"( {a} )" for a in actions) + " )")
    lines.extend(f"{name} ::= {body}" for name, body in grammar.rules.items())
    return "\n".join(lines) + "\n" + _JSON_PRIMITIVES.strip() + "\n"


_RULE_DEF = re.compile(r"^([a-zA-Z0-9-]+) ::= ", re.MULTILINE)


def grammar_rule_names(grammar: str) -> tuple[set[str], set[str]]:
    """Return (defined, referenced) rule names of a GBNF ``grammar``; for checks and tests."""
    defined = set(_RULE_DEF.findall(grammar))
    referenced: set[str] = set()
    for line in grammar.splitlines():
        _, sep, body = line.partition(" ::= ")
        if not sep:
            continue
        stripped = re.sub(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|\{[0-9,]+\}', " ", body)
        referenced.update(re.findall(r"[a-zA-Z][a-zA-Z0-9-]*", stripped))
    return defined, referenced


REACT_STOP = ("\nObservation:",)
"""Where a ReAct turn ends: the observation is the tool's to write, not the model's."""


def bind_react_grammar(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    max_answer_chars: int = MAX_ANSWER_CHARS,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> Runnable[Any, Any]:
    """Return ``model`` constrained by :func:`react_grammar` if it is local, else stopped.

    The grammar travels as llama.cpp's ``grammar`` request field (``extra_body``), added to
    the model's own ``extra_body`` (the sampler settings of
    :data:`~noema_graph.models.factory.LOCAL_SAMPLING`): a bound ``extra_body`` replaces the
    model's rather than merging with it. Another model gets the stop sequence
    :data:`REACT_STOP`: what it would write after its action is an observation it invents
    (only the first action is read), paid for in tokens and time.
    """
    if not model_profile(model).is_local:
        return model.bind(stop=list(REACT_STOP))
    grammar = react_grammar(tools, max_answer_chars=max_answer_chars, schemas=schemas)
    own: Mapping[str, Any] = getattr(model, "extra_body", None) or {}
    return model.bind(extra_body={**own, "grammar": grammar})
