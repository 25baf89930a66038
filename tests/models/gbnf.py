"""A small GBNF parser and matcher: does a grammar admit a text? (no llama.cpp needed).

It reads the subset of llama.cpp's GBNF the grammar module writes: ``name ::= body`` lines,
string literals, character classes (with ``^`` and ranges), rule references, groups,
alternatives and the postfix operators ``?``, ``*``, ``+``, ``{m}``, ``{m,}``, ``{m,n}``.
Matching computes the set of end positions an expression may reach from a start, so
ambiguity costs nothing but time; the grammars here are not left-recursive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Node = tuple[Any, ...]


def _unescape(text: str) -> str:
    return re.sub(
        r"\\(x[0-9a-fA-F]{2}|.)",
        lambda m: (
            chr(int(m[1][1:], 16))
            if m[1].startswith("x")
            else {"n": "\n", "r": "\r", "t": "\t"}.get(m[1], m[1])
        ),
        text,
    )


_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<cls>\[(?:[^\]\\]|\\.)*\])|(?P<rep>\{\d+(?:,\d*)?\})'
    r"|(?P<name>[a-zA-Z][a-zA-Z0-9-]*)|(?P<op>[()|?*+]))"
)


def _tokens(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    position = 0
    while body[position:].strip():
        match = _TOKEN.match(body, position)
        assert match is not None, f"cannot read {body[position:]!r}"
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match[kind]))
        position = match.end()
    return out


def _char_class(text: str) -> Node:
    inner = text[1:-1]
    negated = inner.startswith("^")
    chars = _unescape(inner[1:] if negated else inner)
    ranges: list[tuple[str, str]] = []
    index = 0
    while index < len(chars):
        if index + 2 < len(chars) and chars[index + 1] == "-":
            ranges.append((chars[index], chars[index + 2]))
            index += 3
        else:
            ranges.append((chars[index], chars[index]))
            index += 1
    return ("class", negated, tuple(ranges))


@dataclass
class _Parser:
    tokens: list[tuple[str, str]]
    index: int = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while (token := self.peek()) is not None and token == ("op", "|"):
            self.index += 1
            options.append(self.sequence())
        return ("alt", tuple(options))

    def sequence(self) -> Node:
        items: list[Node] = []
        while (token := self.peek()) is not None and token not in (("op", "|"), ("op", ")")):
            items.append(self.postfix(self.atom()))
        return ("seq", tuple(items))

    def atom(self) -> Node:
        kind, text = self.tokens[self.index]
        self.index += 1
        if kind == "lit":
            return ("lit", _unescape(text[1:-1]))
        if kind == "cls":
            return _char_class(text)
        if kind == "name":
            return ("ref", text)
        assert (kind, text) == ("op", "("), f"unexpected {text!r}"
        inner = self.alternatives()
        assert self.tokens[self.index] == ("op", ")")
        self.index += 1
        return inner

    def postfix(self, node: Node) -> Node:
        while (token := self.peek()) is not None and (
            token[0] == "rep" or token[1] in ("?", "*", "+")
        ):
            self.index += 1
            kind, text = token
            if kind == "rep":
                low, comma, high = text[1:-1].partition(",")
                bounds = (int(low), (int(high) if high else None) if comma else int(low))
            else:
                bounds = {"?": (0, 1), "*": (0, None), "+": (1, None)}[text]
            node = ("rep", node, bounds[0], bounds[1])
        return node


@dataclass
class Grammar:
    """A parsed GBNF grammar; :meth:`admits` says whether it matches a whole text."""

    rules: dict[str, Node] = field(default_factory=dict[str, Node])

    @classmethod
    def parse(cls, text: str) -> Grammar:
        """Parse ``text`` (one rule per line)."""
        grammar = cls()
        for line in text.splitlines():
            name, sep, body = line.partition(" ::= ")
            if sep:
                grammar.rules[name.strip()] = _Parser(_tokens(body)).alternatives()
        return grammar

    def admits(self, text: str, rule: str = "root") -> bool:
        """Return whether ``rule`` matches all of ``text``."""

        @cache
        def ends(node: Node, start: int) -> frozenset[int]:
            kind = node[0]
            if kind == "lit":
                hit = text.startswith(node[1], start)
                return frozenset({start + len(node[1])}) if hit else frozenset()
            if kind == "class":
                if start >= len(text):
                    return frozenset()
                inside = any(low <= text[start] <= high for low, high in node[2])
                return frozenset({start + 1}) if inside != node[1] else frozenset()
            if kind == "ref":
                return ends(self.rules[node[1]], start)
            if kind == "alt":
                return frozenset().union(*(ends(option, start) for option in node[1]))
            if kind == "seq":
                positions = frozenset({start})
                for item in node[1]:
                    positions = frozenset().union(*(ends(item, p) for p in positions))
                return positions
            return repeat(node[1], node[2], node[3], start)

        def repeat(inner: Node, low: int, high: int | None, start: int) -> frozenset[int]:
            reached = frozenset({start}) if low == 0 else frozenset[int]()
            positions, count = frozenset({start}), 0
            while positions and (high is None or count < high):
                positions = frozenset().union(*(ends(inner, p) for p in positions))
                if high is None:
                    positions -= reached  # unbounded: stop once nothing new is reached
                count += 1
                if count >= low:
                    reached |= positions
            return reached

        return len(text) in ends(self.rules[rule], 0)
