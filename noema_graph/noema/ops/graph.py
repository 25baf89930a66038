"""Knowledge-graph operations: read a neighbourhood, add a typed link."""

from __future__ import annotations

from pydantic import Field

from noema_graph.noema.clock import as_utc, to_db, utc_now
from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.models import Concept, ConceptLink, LinkKind
from noema_graph.noema.ops.cards import concept_id
from noema_graph.noema.ops.common import OpInput, OpResult, OptionalTime
from noema_graph.noema.sql import INSERT_LINK
from noema_graph.storage.sql.driver import Op, execute, fetch_all, fetch_one

_LINKS = """SELECT l.id, s.name AS source, t.name AS target, l.kind, l.source_id, l.target_id
FROM concept_links l JOIN concepts s ON s.id = l.source_id JOIN concepts t ON t.id = l.target_id"""


class ConceptGraphInput(OpInput):
    """Arguments of :func:`get_concept_graph`."""

    concept: str | None = Field(default=None, description="Centre concept; null for all.")
    depth: int = Field(default=1, ge=0, le=6, description="Link hops from the centre.")


class ConceptNode(OpResult):
    """A concept and how many cards teach it."""

    concept: Concept
    card_count: int


class ConceptGraph(OpResult):
    """Concepts and the typed links between them."""

    nodes: list[ConceptNode]
    links: list[ConceptLink]


def get_concept_graph(params: ConceptGraphInput) -> Op[ConceptGraph]:
    """Return the whole graph, or the concepts within ``depth`` links of ``concept``."""
    all_links = yield from fetch_all(_LINKS + " ORDER BY l.id")
    if params.concept is None:
        rows = yield from fetch_all("SELECT id FROM concepts")
        keep = {int(r["id"]) for r in rows}
    else:
        centre = yield from fetch_one(
            "SELECT id FROM concepts WHERE lower(name) = lower(?)", (params.concept.strip(),)
        )
        if centre is None:
            raise RecordNotFound(
                "concept",
                f"no concept named {params.concept!r}",
                fix="call with concept=null",
                fix_call={"tool": "get_concept_graph", "args": {}},
            )
        keep = {int(centre["id"])}
        frontier = set(keep)
        for _ in range(params.depth):
            frontier = {
                other
                for link in all_links
                for here, other in (
                    (link["source_id"], link["target_id"]),
                    (link["target_id"], link["source_id"]),
                )
                if here in frontier and other not in keep
            }
            keep |= frontier
    marks = ",".join("?" * len(keep))
    rows = yield from fetch_all(
        "SELECT c.*, (SELECT COUNT(*) FROM card_concepts cc WHERE cc.concept_id = c.id) AS n"
        f" FROM concepts c WHERE c.id IN ({marks}) ORDER BY lower(c.name)",  # only placeholders
        sorted(keep),
    )
    nodes = [
        ConceptNode(
            concept=Concept(id=r["id"], name=r["name"], description=r["description"]),
            card_count=r["n"],
        )
        for r in rows
    ]
    links = [
        ConceptLink(id=r["id"], source=r["source"], target=r["target"], kind=r["kind"])
        for r in all_links
        if r["source_id"] in keep and r["target_id"] in keep
    ]
    return ConceptGraph(nodes=nodes, links=links)


class LinkConceptsInput(OpInput):
    """Arguments of :func:`link_concepts`."""

    source: str = Field(
        min_length=1,
        description="Concept the link starts from.",
        json_schema_extra={"x-noema-ref": "concept"},
    )
    target: str = Field(
        min_length=1,
        description="Concept the link points to.",
        json_schema_extra={"x-noema-ref": "concept"},
    )
    kind: LinkKind = Field(description="prerequisite_of, related_to, part_of or contrasts_with.")
    now: OptionalTime = Field(default=None, description="Defaults to now.")


class LinkResult(OpResult):
    """The link, and whether this call created it."""

    link: ConceptLink
    created: bool


def _reaches(start: int, goal: int, kind: str) -> Op[bool]:
    rows = yield from fetch_all(
        "SELECT source_id, target_id FROM concept_links WHERE kind = ?", (kind,)
    )
    edges: dict[int, list[int]] = {}
    for r in rows:
        edges.setdefault(r["source_id"], []).append(r["target_id"])
    stack, seen = [start], {start}
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in edges.get(node, []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def link_concepts(params: LinkConceptsInput) -> Op[LinkResult]:
    """Add a typed link (creating unknown concepts); repeating it changes nothing.

    ``prerequisite_of`` and ``part_of`` must stay acyclic: a link closing a cycle is refused.
    """
    if params.source.strip().casefold() == params.target.strip().casefold():
        raise ToolInputError("target", "a concept cannot link to itself", fix="pick another")
    source = yield from concept_id(params.source, field="source")
    target = yield from concept_id(params.target, field="target")
    if params.kind in ("prerequisite_of", "part_of") and (
        yield from _reaches(target, source, params.kind)
    ):
        raise ToolInputError(
            "kind",
            f"{params.target!r} already leads to {params.source!r} by {params.kind} links;"
            " this link would close a cycle",
            fix="use related_to, or remove the opposite link",
        )
    stamp = to_db(as_utc(params.now) if params.now else utc_now())
    outcome = yield from execute(INSERT_LINK, (source, target, params.kind, stamp))
    row = yield from fetch_one(
        _LINKS + " WHERE l.source_id = ? AND l.target_id = ? AND l.kind = ?",
        (source, target, params.kind),
    )
    assert row is not None
    link = ConceptLink(id=row["id"], source=row["source"], target=row["target"], kind=row["kind"])
    return LinkResult(link=link, created=outcome.rowcount == 1)
