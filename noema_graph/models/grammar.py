"""llama.cpp GBNF grammars that force the local model into the ReAct text protocol.

The grammar admits exactly two answer shapes::

    Thought: <one line>
    Action: <one of the given tool names>
    Action Input: <one-line JSON object matching that tool's args schema>

    Thought: <one line>
    Final Answer: <free text, at most MAX_ANSWER_CHARS characters>

Parsing the answer is the ReAct parser's job; this module only constrains decoding. The JSON
schema is enforced while decoding as far as a grammar can: types, ``const``, ``enum``, string
lengths, numeric ranges (``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``, see
:func:`numeric_range`) and real ``date``/``date-time`` values.
"""

from __future__ import annotations

import copy
import json
import math
import re
import weakref
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import partial
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from noema_graph.errors import ConfigurationError
from noema_graph.models.profile import model_profile
from noema_graph.schemas import check_tool_schemas

MAX_THOUGHT_CHARS = 240
"""A thought is one line of at most this many characters, so a looping model still stops."""
MAX_ANSWER_CHARS = 600
"""A step's Final Answer is at most this many characters (about 100 words), for the same
reason: a step's result is a figure or a few sentences, and a loop stops sooner."""
MAX_DIGITS = 16
"""Most digits of an integer (or of a number's integer part or fraction), as in ``integer``."""
MAX_BOUND_DECIMALS = 6
"""Decimals of a numeric bound honoured exactly; a bound with more is rounded inward."""

_JSON_PRIMITIVES = r"""
ws ::= [ ]?
char ::= [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
string ::= "\"" char* "\""
integer ::= "-"? ( [0] | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,4} )?
boolean ::= "true" | "false"
null ::= "null"
json-date ::= [0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )
json-hour ::= [01] [0-9] | "2" [0-3]
json-time ::= json-hour ":" [0-5] [0-9] ( ":" [0-5] [0-9] ( "." [0-9]{1,9} )? )?
json-date-time ::= json-date "T" json-time ( "Z" | [+-] json-hour ":" [0-5] [0-9] )
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


MAX_EXPANDED_ITEMS = 64
"""Largest ``maxItems`` the grammar enforces (see :func:`_array`)."""


def _array(item: str, low: object, high: object) -> str:
    """Return the body of an array rule of ``item`` with ``minItems``/``maxItems`` enforced."""
    least = low if isinstance(low, int) and low > 0 else 0
    # a bound past MAX_EXPANDED_ITEMS is left to the schema check: llama.cpp expands a
    # counted repetition into that many rules
    most = high if isinstance(high, int) and max(least, 1) <= high <= MAX_EXPANDED_ITEMS else None
    if least == 0 and most is None:
        return f'"[" ws ( {item} ( ws "," ws {item} )* )? ws "]"'
    more_low = max(least - 1, 0)
    more = f"{{{more_low},{most - 1}}}" if most is not None else f"{{{more_low},}}"
    items = f'{item} ( ws "," ws {item} ){more}'
    return f'"[" ws {items} ws "]"' if least > 0 else f'"[" ws ( {items} )? ws "]"'


def gbnf_literal(text: str) -> str:
    """Return ``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


Bound = tuple[int, bool]
"""A range end in scaled units (the value times ``10 ** places``) and whether it is included."""


def numeric_range(schema: Mapping[str, Any], *, integer: bool) -> str | None:
    """Return a GBNF body admitting exactly the JSON numbers in ``schema``'s range, or None.

    None when ``schema`` has no bound (``minimum``, ``maximum``, ``exclusiveMinimum``,
    ``exclusiveMaximum``; pydantic's ``ge``, ``le``, ``gt``, ``lt``). An integer range is
    exact. A ``number`` range is exact when its bounds have at most
    :data:`MAX_BOUND_DECIMALS` decimals (integer bounds such as 0..1, 0..100 or ge=0 above
    all): a value with fewer decimals than the bounds is checked on that coarser grid, one
    with as many or more on the bounds' own. Bounded numbers are written without an exponent,
    with at most :data:`MAX_DIGITS` digits before the point (and about as many after). A
    bound with more decimals is rounded inward (a lower bound up, an upper bound down): the
    grammar never admits a value out of range but may refuse one just inside it.

    Raises:
        ConfigurationError: The range is empty (e.g. ``minimum`` above ``maximum``).
    """
    low = _bound(schema, "minimum", "exclusiveMinimum")
    high = _bound(schema, "maximum", "exclusiveMaximum", upper=True)
    if low is None and high is None:
        return None
    if integer:
        places = 0
    else:
        ends = [end[0] for end in (low, high) if end is not None]
        places = min(MAX_BOUND_DECIMALS, max(_decimals(value) for value in ends))
    # a value written with fewer decimals than the bounds: a fixed-point number on that grid
    coarse = [
        _signed(_scaled(low, d, up=True, grid=True), _scaled(high, d, up=False, grid=True), d)
        for d in range(places)
    ]
    finest = _signed(
        _scaled(low, places, up=True, grid=integer),
        _scaled(high, places, up=False, grid=integer),
        places,
        fraction=not integer,
    )
    body = " | ".join(f"( {part} )" for part in (*coarse, finest) if part)
    if not body:
        raise ConfigurationError(
            "schema",
            f"the range of {dict(schema)!r} admits no value",
            fix="make minimum/ge at most maximum/le (exclusive bounds: strictly below)",
        )
    return body


def _bound(
    schema: Mapping[str, Any], inclusive: str, exclusive: str, *, upper: bool = False
) -> tuple[Decimal, bool] | None:
    """Return the tighter of ``schema``'s inclusive and exclusive bound on one side."""
    ends: list[tuple[Decimal, bool]] = []
    for key, included in ((inclusive, True), (exclusive, False)):
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            ends.append((Decimal(str(value)), included))
    if not ends:
        return None
    # the tighter end: the larger lower (the smaller upper) bound; on a tie the exclusive one
    if upper:
        return min(ends, key=lambda end: (end[0], end[1]))
    return max(ends, key=lambda end: (end[0], not end[1]))


def _decimals(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _scaled(end: tuple[Decimal, bool] | None, places: int, *, up: bool, grid: bool) -> Bound | None:
    """Return ``end`` times ``10 ** places`` as an integer, rounded inward when inexact.

    ``grid``: only whole scaled values are admitted (integers, or numbers written with
    exactly ``places`` decimals), so an exclusive end becomes the next value inward.
    """
    if end is None:
        return None
    value, included = end
    scaled = value.scaleb(places)
    if scaled != scaled.to_integral_value():
        return (math.ceil(scaled) if up else math.floor(scaled)), True
    if grid and not included:  # strictly above (below) n on the grid: from n + 1 (n - 1)
        return int(scaled) + (1 if up else -1), True
    return int(scaled), included


def _signed(
    low: Bound | None, high: Bound | None, places: int, *, fraction: bool = False
) -> str | None:
    """Return the body admitting the values in [low, high]: the non-negative, then "-" ones."""
    parts: list[str] = []
    if high is None or high[0] > 0 or high == (0, True):
        start = low if low is not None and low[0] >= 0 else (0, True)
        parts.append(_magnitudes(start, high, places, fraction=fraction))
    if low is None or low[0] < 0:
        start = (-high[0], high[1]) if high is not None and high[0] < 0 else (0, False)
        top = None if low is None else (-low[0], low[1])
        negative = _magnitudes(start, top, places, fraction=fraction)
        parts.append(f'"-" ( {negative} )' if negative else "")
    return " | ".join(f"( {p} )" for p in parts if p) or None


def _magnitudes(low: Bound, high: Bound | None, places: int, *, fraction: bool) -> str:
    """Return the body admitting the magnitudes from ``low`` to ``high`` ("" for none).

    Without a fraction a magnitude is a whole number of units. With one, a magnitude is its first
    ``places`` decimals ``J`` (scaled) and more digits ``r``: ``J.r`` is above an integer
    ``a`` when ``J > a``, or ``J == a`` and ``r`` is not zero; below ``b`` when ``J < b``.
    """
    start, start_in = low
    stop = None if high is None else high[0]
    first = start if start_in else start + 1
    if not fraction:
        last = None if high is None else high[0] if high[1] else high[0] - 1
        return _scaled_range(first, last, places) or ""
    parts: list[str] = []
    body = _scaled_range(first, None if stop is None else stop - 1, places)
    if body:
        parts.append(f"( {body} ) {_more_digits(places, 'any')}")
    if not start_in and (stop is None or start < stop):
        parts.append(f"{_scaled_literal(start, places)} {_more_digits(places, 'nonzero')}")
    if high is not None and high[1] and stop is not None and (stop > start or start_in):
        parts.append(f"{_scaled_literal(stop, places)} {_more_digits(places, 'zero')}")
    return " | ".join(parts)


def _scaled_literal(value: int, places: int) -> str:
    whole, part = divmod(value, 10**places)
    return gbnf_literal(f"{whole}.{part:0{places}d}" if places else str(whole))


def _more_digits(places: int, kind: Literal["any", "zero", "nonzero"]) -> str:
    """Return the digits a value may add after its first ``places`` decimals."""
    room = MAX_DIGITS - places
    point = '"." ' if places == 0 else ""
    if kind == "nonzero":  # some digit is not 0: zeros, that digit, any digits
        return f"{point}[0]{{0,{room - 1}}} [1-9] [0-9]{{0,{room - 1}}}"
    digit = "[0-9]" if kind == "any" else "[0]"
    if places == 0:
        return f'( "." {digit}{{1,{room}}} )?'
    return f"{digit}{{0,{room}}}"


def _scaled_range(low: int, high: int | None, places: int) -> str | None:
    """Return the body of the values ``low..high`` (scaled) written with ``places`` decimals."""
    if places == 0:
        return _natural_range(low, high)
    if high is not None and high < low:
        return None
    unit, nines, zeros = 10**places, "9" * places, "0" * places
    low_whole, low_part = divmod(low, unit)
    high_whole, high_part = (None, None) if high is None else divmod(high, unit)
    if high_whole == low_whole:
        digits = _digits_between(f"{low_part:0{places}d}", f"{high_part:0{places}d}")
        return f"{gbnf_literal(f'{low_whole}.')} ( {digits} )"
    parts = [
        f"{gbnf_literal(f'{low_whole}.')} ( {_digits_between(f'{low_part:0{places}d}', nines)} )"
    ]
    middle = _natural_range(low_whole + 1, None if high_whole is None else high_whole - 1)
    if middle:
        parts.append(f'( {middle} ) "." [0-9]{{{places}}}')
    if high_whole is not None:
        digits = _digits_between(zeros, f"{high_part:0{places}d}")
        parts.append(f"{gbnf_literal(f'{high_whole}.')} ( {digits} )")
    return " | ".join(f"( {p} )" for p in parts)


def _natural_range(low: int, high: int | None) -> str | None:
    """Return the body of the integers ``low..high`` (``low >= 0``) without leading zeros.

    ``high`` None: any integer of at most :data:`MAX_DIGITS` digits from ``low`` on.
    """
    if high is not None and high < low:
        return None
    parts: list[str] = []
    if low == 0:
        parts.append('"0"')
        low = 1
        if high == 0:
            return '"0"'
    widest = len(str(high)) if high is not None else max(MAX_DIGITS, len(str(low)))
    for width in range(len(str(low)), widest + 1):
        start = max(low, 10 ** (width - 1))
        if high is None and start == 10 ** (width - 1):
            parts.append(f"[1-9] [0-9]{{{width - 1},{widest - 1}}}")
            break
        stop = 10**width - 1 if high is None else min(high, 10**width - 1)
        parts.append(_digits_between(str(start), str(stop)))
    return " | ".join(f"( {p} )" for p in parts)


def _digits_between(low: str, high: str) -> str:
    """Return the body of the digit strings from ``low`` to ``high`` (same length).

    The classic range-to-regex split: a shared first digit, else the low end's tail, the
    first digits strictly between with any tail, and the high end's tail. Leading zeros are
    digits like any other here: the caller fixes the first digit.
    """
    if low == high:
        return gbnf_literal(low)
    if low[0] == high[0]:
        return f"{gbnf_literal(low[0])} ( {_digits_between(low[1:], high[1:])} )"
    rest = len(low) - 1
    any_tail = f" [0-9]{{{rest}}}" if rest else ""
    first, last = int(low[0]), int(high[0])
    parts: list[str] = []
    if low[1:] != "0" * rest:
        parts.append(f"{gbnf_literal(low[0])} ( {_digits_between(low[1:], '9' * rest)} )")
        first += 1
    tail = None
    if high[1:] != "9" * rest:
        tail = f"{gbnf_literal(high[0])} ( {_digits_between('0' * rest, high[1:])} )"
        last -= 1
    if first <= last:
        parts.append(f"[{first}-{last}]{any_tail}")
    if tail is not None:
        parts.append(tail)
    return " | ".join(parts)


class _SchemaGrammar:
    """Translates JSON schemas into GBNF rules sharing the JSON primitives above."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def rule_for(
        self, schema: Mapping[str, Any], name: str, defs: Mapping[str, Any], *, blank: bool = False
    ) -> str:
        """Return the name of a rule matching ``schema``, adding the rules it needs.

        ``blank``: ``schema`` is a branch of a nullable ``anyOf`` (an optional argument), where
        a date may also be the empty string (see :meth:`_string`).
        """
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = defs.get(ref.removeprefix("#/$defs/"))
            if not isinstance(target, Mapping):
                return "value"
            return self.rule_for(target, name, defs, blank=blank)
        body = self._alternatives(schema, name, defs)
        if body is not None:
            return self._add(name, body)
        kind = schema.get("type")
        if kind == "object" and isinstance(schema.get("properties"), Mapping):
            return self._object(schema, name, defs)
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            item = self.rule_for(schema["items"], f"{name}-item", defs)
            return self._add(name, _array(item, schema.get("minItems"), schema.get("maxItems")))
        return self._scalar(schema, name, kind, blank=blank)

    def _scalar(
        self, schema: Mapping[str, Any], name: str, kind: object, *, blank: bool = False
    ) -> str:
        """Return the rule of a string, number or other non-container ``schema``."""
        if kind == "string":
            return self._string(schema, name, blank=blank)
        if kind in ("integer", "number"):
            return self._numeric(schema, name, str(kind))
        return self._type_rule(kind) if isinstance(kind, str) else "value"

    def _numeric(self, schema: Mapping[str, Any], name: str, kind: str) -> str:
        """Return the ``integer`` or ``number`` rule, or a rule admitting only its range."""
        body = numeric_range(schema, integer=kind == "integer")
        return self._type_rule(kind) if body is None else self._add(name, body)

    def _string(self, schema: Mapping[str, Any], name: str, *, blank: bool = False) -> str:
        """Return a string rule honouring ``format`` (date, date-time) and ``maxLength``.

        A bounded string stops a model that would otherwise ramble inside the quotes until
        its token limit, leaving JSON that does not parse. A ``date`` is YYYY-MM-DD (month
        01-12, day 01-31), a ``date-time`` RFC 3339 (``T``, ``hh:mm[:ss[.frac]]``, ``Z`` or
        ``+hh:mm``). Where the date is optional (``blank``: a branch of a nullable
        ``anyOf``) the empty string is admitted too: the domain tools read it as "not given"
        (``OptionalTime``), so a model that has opened the quotes is never forced to invent
        a date; a required date must be a real one.
        """
        if schema.get("format") in ("date-time", "date"):
            optional = "?" if blank else ""
            return self._add(name, f'"\\"" json-{schema["format"]}{optional} "\\""')
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
            branches = schema.get(key)
            if isinstance(branches, list):
                nullable = any(isinstance(s, Mapping) and s.get("type") == "null" for s in branches)
                options = [
                    self.rule_for(s, f"{name}-{i}", defs, blank=nullable)
                    for i, s in enumerate(branches)
                ]
                return " | ".join(options)
        kind = schema.get("type")
        if isinstance(kind, list):
            options = [
                self._numeric(schema, f"{name}-{i}", str(t))
                if t in ("integer", "number")
                else self._type_rule(str(t))
                for i, t in enumerate(kind)
            ]
            return " | ".join(options)
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


_SCHEMAS: dict[int, tuple[weakref.ref[BaseTool], tuple[object, ...], dict[str, Any]]] = {}
"""Argument schemas by ``id(tool)``: the tool (weakly), what the schema is made of, the schema."""


def tool_args_schema(tool: BaseTool) -> dict[str, Any]:
    """Return the JSON schema of ``tool``'s arguments (an object schema).

    Converted once per tool (the tool node checks every call against it): the conversion is
    kept while the same tool object lives with the same name, description and argument
    schema, and each caller gets its own copy.
    """
    made_of = (tool.name, tool.description, tool.args_schema)
    kept = _SCHEMAS.get(id(tool))
    if kept is None or kept[0]() is not tool or kept[1] != made_of:
        schema = dict(convert_to_openai_tool(tool)["function"]["parameters"])
        kept = (weakref.ref(tool, partial(_forget, id(tool))), made_of, schema)
        _SCHEMAS[id(tool)] = kept
    return copy.deepcopy(kept[2])


def _forget(key: int, _: object) -> None:
    """Drop the schema of a tool that no longer exists (its id may be reused)."""
    _SCHEMAS.pop(key, None)


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
        schemas: Argument schemas by tool name that replace those tools' own (a narrowed
            schema); a tool missing from it keeps :func:`tool_args_schema`.

    Raises:
        ConfigurationError: a tool's argument schema is invalid (it names the tool), rather
            than a grammar that silently admits any JSON object for it.
    """
    check_tool_schemas(tools)
    grammar = _SchemaGrammar()
    actions: list[str] = []
    overrides: Mapping[str, Mapping[str, Any]] = schemas or {}
    for index, tool in enumerate(tools):
        override = overrides.get(tool.name)
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
) -> Runnable[LanguageModelInput, BaseMessage]:
    """Return ``model`` constrained by :func:`react_grammar` if it is local, else stopped.

    The grammar travels as llama.cpp's ``grammar`` request field (``extra_body``), added to
    the model's own ``extra_body`` (the sampler settings of
    :data:`~noema_graph.models.factory.LOCAL_SAMPLING`): a bound ``extra_body`` replaces the
    model's rather than merging with it. Another model gets the stop sequence
    :data:`REACT_STOP`: what it would write after its action is an observation it invents
    (only the first action is read), paid for in tokens and time. ``schemas`` goes to
    :func:`react_grammar`.
    """
    if not model_profile(model).is_local:
        return model.bind(stop=list(REACT_STOP))
    grammar = react_grammar(tools, max_answer_chars=max_answer_chars, schemas=schemas)
    own: Mapping[str, object] = getattr(model, "extra_body", None) or {}
    return model.bind(extra_body={**own, "grammar": grammar})
