"""Named, versioned prompt templates with ``${variable}`` substitution, all in one place."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from string import Template

from noema_graph.errors import ConfigurationError


@dataclass(frozen=True)
class PromptTemplate:
    """A named template; ``render`` fails loudly on a missing variable."""

    name: str
    version: str
    text: str

    @cached_property
    def variables(self) -> frozenset[str]:
        """Return the ``${...}`` names the template uses."""
        return frozenset(
            m.group("braced") or m.group("named")
            for m in Template.pattern.finditer(self.text)
            if m.group("braced") or m.group("named")
        )

    def render(self, **values: object) -> str:
        """Substitute ``values``; a missing variable raises ConfigurationError."""
        missing = self.variables - values.keys()
        if missing:
            raise ConfigurationError(
                f"prompt {self.name!r} v{self.version}",
                f"missing variables {sorted(missing)}",
                fix="pass every ${variable} the template uses",
            )
        return self._format.format_map({k: str(v) for k, v in values.items()})

    @cached_property
    def _format(self) -> str:
        """Return the template as a ``str.format`` pattern (rendered in C, once per step).

        Renders exactly as ``string.Template.substitute``: ``${name}`` and ``$name`` are
        replaced, ``$$`` is a dollar sign, braces are literal.
        """
        pieces: list[str] = []
        end = 0
        for match in Template.pattern.finditer(self.text):
            pieces.append(_literal(self.text[end : match.start()]))
            name = match.group("braced") or match.group("named")
            if name:
                pieces.append(f"{{{name}}}")
            elif match.group("escaped") is not None:
                pieces.append("$")
            else:  # what Template.substitute rejects, rejected at the first render
                raise ConfigurationError(
                    f"prompt {self.name!r} v{self.version}",
                    f"invalid placeholder at character {match.start()}",
                    fix="write ${name} for a variable and $$ for a dollar sign",
                )
            end = match.end()
        return "".join([*pieces, _literal(self.text[end:])])


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


EXAMPLES_HEADING = "Worked examples (their ids and figures are made up):"
"""Heads the few-shot examples in an agent's instructions.

The examples teach the tool-use turns. The final answer is written from the run's own
observations, so ``finalize`` leaves everything from this heading on out: measured on the
embedded 135M model, it copies an example answer's figures otherwise.
"""


def without_examples(instructions: str) -> str:
    """Return ``instructions`` cut before :data:`EXAMPLES_HEADING`, if it has one."""
    head, found, _ = instructions.partition(EXAMPLES_HEADING)
    return head.rstrip() if found else instructions


def stable_prefix(instructions: str) -> str:
    """Return what every prompt of an agent with ``instructions`` opens with.

    Each node's system message is the instructions, stripped, then the node's own text
    (:func:`noema_graph.nodes.common.system`); the answer prompt keeps the instructions only
    up to :data:`EXAMPLES_HEADING` (and at most the one example chosen for the run after it).
    So the instructions before the examples are the prefix every run of the agent shares,
    whatever its request, learner or chosen example: the part the embedded model's saved
    prompt cache holds (:mod:`noema_graph.models.prefix_cache`).
    """
    return without_examples(instructions).strip()


_EXAMPLE_START = re.compile(r"\n\s*\n(?=Example \d+:)")
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")
_FIRST_LINE = re.compile(r"^Example \d+:")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _observed_words(example: str) -> set[str]:
    """Return the words of an example's ``Observation:`` lines (all its words if it has none)."""
    lines = [line for line in example.splitlines() if line.startswith("Observation:")]
    return _words("\n".join(lines) if lines else example)


def nearest_example(instructions: str, observations: str) -> str:
    """Return ``instructions`` with only the worked example nearest ``observations``.

    The examples (from :data:`EXAMPLES_HEADING` on, ``Example N:`` blocks) are compared by
    the words of their observations with the run's own (Jaccard overlap; the first wins a
    tie), so the answer is written after the example whose tool results read like the
    run's: measured on the embedded 135M model, with an over- and an under-confident
    example side by side it wrote one's advice for the other's learner. One example also
    keeps the answer prompt short.
    """
    head, found, shots = instructions.partition(EXAMPLES_HEADING)
    examples = _EXAMPLE_START.split(shots.strip()) if found else []
    if len(examples) < 2:
        return instructions
    seen = _words(observations)

    def overlap(example: str) -> float:
        words = _observed_words(example)
        return len(words & seen) / len(words | seen) if words | seen else 0.0

    best = _FIRST_LINE.sub("Example 1:", max(examples, key=overlap))  # first of equals wins
    return f"{head}{EXAMPLES_HEADING}\n{best}"


PLAN = PromptTemplate(
    "plan",
    "1.0.0",
    """You are ${agent_name}, a careful planner. Break the user's request into a short ordered \
list of concrete steps (1 to ${max_steps}). Use one step for simple questions. \
Restate the goal in one sentence.${memory}

Tools that later steps may use:
${tools}""",
)

EXECUTE = PromptTemplate(
    "execute_step",
    "1.0.0",
    """You are ${agent_name}. You are working through a plan for the user's goal.
Goal: ${goal}
Plan:
${plan}
Current step (${step_number} of ${step_count}): ${step}
Results so far:
${results}

Do the current step. Call tools when you need information or must act; when the step is \
done, answer with its result in plain text and no tool call.${extra}""",
)

REACT = PromptTemplate(
    "react",
    "1.3.0",
    """You are ${agent_name}.

Available tools:
${tools}

Reply in one of two forms. To use a tool, three lines:
Thought: I need a tool for this.
Action: <the tool's name>
Action Input: <the tool's arguments as one JSON object>
To answer once an observation holds the result, two lines: a Thought, then "Final Answer:" \
followed by the result in the observation's own words and figures.

Use only the tools listed above, with values from the goal or from observations. When an \
observation answers the current step, give the Final Answer at once: never call a tool again \
on its own result.${hints}

Goal: ${goal}
Current step (${step_number} of ${step_count}): ${step}
Results so far:
${results}${extra}""",
)
"""The ReAct step prompt.

What stays the same from run to run comes first: the agent, the tools the step offers, the
reply form and the rules. Up to ``${hints}`` it is the step's saved prefix on the embedded
model (:func:`~noema_graph.nodes.execute_step.step_prefix`, keyed by its text: one per agent
and set of tools, never per request), so a run processes only what follows: the pattern
for the request (``hints``), the goal, the step and the results so far (a result the
conversation below shows is named there, :data:`REACT_SHOWN`, not repeated). Measured on
the embedded model (bench/RESULTS.md, issue 35 item 2): with the reply form moved before
the tools, or the goal line left out when it is the request, the 135M model's first call
of content_generation changed, and its answers took more words no tool gave; in this
order the text is as before and only the saved prefix grew.

Nothing in it is worth copying into an answer: a 135M model copies what it reads, so the
answer form is described, not shown (``Final Answer: <the step's result>`` came back
verbatim as the answer), and the worked examples of :data:`CODE_HINT` use letters.
"""

REACT_SHOWN = "(shown below)"
"""Stands in :data:`REACT`'s results for a step result the conversation below holds."""

CODE_TOOLS = ("python_executor", "python")
"""Tool names that run code; with one of them the ReAct prompt adds :data:`CODE_HINT`."""

CODE_HINT = """

Arithmetic goes to ${tool}, never in your head. The pattern, where X and Y stand for the \
request's own numbers:
Thought: I compute X * Y with ${tool}.
Action: ${tool}
Action Input: {"code": "print(X * Y)"}
The Final Answer is then the number it printed."""


SEARCH_TOOLS = ("search",)
"""Tool names that look facts up; with one of them the ReAct prompt adds :data:`SEARCH_HINT`."""

SEARCH_HINT = """

Facts from documents go to ${tool}, searched with the request's key words:
Thought: I look up ${query} with ${tool}.
Action: ${tool}
Action Input: {"query": "${query}"}
The Final Answer is then the fact it found."""

ARITHMETIC = re.compile(
    r"\d\s*[-+*/^%x\u00d7]\s*\d|\b(?:times|plus|minus|divided|percent|power|factorial|sum|"
    r"product|squared?|root|multiplied|add|subtract|average)\b",
    re.IGNORECASE,
)
"""What makes a request a sum for the code pattern (besides two or more figures)."""
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "can", "could", "find", "for", "how", "i", "is", "it", "look",
    "me", "of", "please", "show", "tell", "the", "up", "what", "when", "where", "which", "who",
    "why", "you",
})  # fmt: skip
"""Words dropped from a request to make the search pattern's query."""


def is_arithmetic(request: str) -> bool:
    """Return True when ``request`` asks for a computation.

    That is: an operator between figures, an operation word, or two figures or more
    (``"greenhouse 3"`` is a name, not a sum).
    """
    return bool(ARITHMETIC.search(request)) or len(re.findall(r"\d+(?:\.\d+)?", request)) >= 2


def key_words(request: str) -> str:
    """Return ``request`` without question and filler words: the search pattern's query."""
    words = re.findall(r"[\w'-]+", request)
    return " ".join(w for w in words if w.lower() not in STOP_WORDS)


def react_hints(tool_names: Sequence[str], request: str = "") -> str:
    """Return the ReAct prompt's hint for ``tool_names`` and the user's ``request``.

    One tool pattern, picked like a few-shot example selector. Measured on the embedded model
    (``bench/bench_quality.py``, 10 sums and 10 lookups): without the code pattern it worked
    sums out in its head, wrongly; with it alone it called the code tool for lookups too
    (0/10 lookups); with both patterns it followed the last one shown (3/10 sums); with a
    search pattern whose query was a placeholder letter it searched for that letter. So:
    the code pattern (letters for the figures) when the request is a computation
    (:func:`is_arithmetic`), else the search pattern with the request's own key words as the
    query; either one alone when only its tool is there.
    """
    code = next((name for name in tool_names if name in CODE_TOOLS), None)
    search = next((name for name in tool_names if name in SEARCH_TOOLS), None)
    query = key_words(request)
    if code is not None and (search is None or is_arithmetic(request) or not query):
        return Template(CODE_HINT).substitute(tool=code)
    if search is None or not query:
        return ""
    return Template(SEARCH_HINT).substitute(tool=search, query=query.replace('"', "'"))


OBSERVATION_NUDGE = "If this answers the current step, give the Final Answer now."
"""Appended to the latest observation for ReAct models: small models otherwise keep calling
the tool on its own result (add(2, 3) = 5, then add(5, 3), add(8, 3)...). Its former
``Final Answer: <the result>`` came back verbatim as the answer."""

REFLECT = PromptTemplate(
    "reflect",
    "1.0.0",
    """You are reviewing an agent's progress on: ${goal}
Plan:
${plan}
Recent trace:
${trace}
${loop_note}
Decide: continue (the plan is fine), revise (the plan must change), or finish (the goal is \
already met or cannot be met).""",
)

REVISE = PromptTemplate(
    "revise_plan",
    "1.0.0",
    """Revise the plan for: ${goal}
Completed steps (kept as they are):
${completed}
Remaining steps:
${remaining}
Reviewer feedback: ${feedback}

Write only the steps still to do (1 to ${max_steps}).""",
)

FINALIZE = PromptTemplate(
    "finalize",
    "1.2.0",
    # the request is named once, in FINAL_ANSWER (nearest the answer); ``results`` is empty
    # when the observations there show every completed step
    """You are ${agent_name}. Write the final answer to the user's request from the results \
below. Be direct and complete; do not mention the plan.${results}""",
)

FINAL_ANSWER = PromptTemplate(
    "final_answer",
    "1.0.0",
    """Write the final answer from the observations below, never from an example.${schema_note}
Request: ${request}
${observations}
Final answer:""",
)


ANSWER = PromptTemplate(
    "generate_answer",
    "1.1.0",
    """You are ${agent_name}, answering in read-only mode: you cannot run tools or change \
anything. Answer the question from your knowledge and the memories below, in at most three \
sentences; say so when you are unsure.
Memories:
${memory}""",
)

PROMPTS: dict[str, PromptTemplate] = {
    p.name: p for p in (PLAN, EXECUTE, REACT, REFLECT, REVISE, FINALIZE, FINAL_ANSWER, ANSWER)
}
