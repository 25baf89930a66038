"""Named, versioned prompt templates with ``${variable}`` substitution, all in one place."""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

from noema_graph.errors import ConfigurationError


@dataclass(frozen=True)
class PromptTemplate:
    """A named template; ``render`` fails loudly on a missing variable."""

    name: str
    version: str
    text: str

    @property
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
        return Template(self.text).substitute({k: str(v) for k, v in values.items()})


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
    "1.1.0",
    """You are ${agent_name}. Goal: ${goal}
Current step (${step_number} of ${step_count}): ${step}
Results so far:
${results}

Available tools:
${tools}

Respond in exactly this format:
Thought: <your reasoning>
Action: <one tool name>
Action Input: <JSON object with the tool's arguments>
OR, when the current step is done:
Thought: <your reasoning>
Final Answer: <the step's result>

Use only the tools listed above, with the arguments their descriptions name, and only \
values from the goal or from observations. When an observation answers the current step, \
reply with Final Answer at once: never call a tool again on its own result.${extra}""",
)

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
    "1.1.0",
    """You are ${agent_name}. Write the final answer to the user's request from the results \
below. Be direct and complete; do not mention the plan.
Request: ${request}
Results:
${results}""",
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
    "1.0.0",
    """You are ${agent_name}, answering in read-only mode: you cannot run tools or change \
anything. Answer the question from your knowledge and the memories below; say so when you \
are unsure.
Memories:
${memory}""",
)

PROMPTS: dict[str, PromptTemplate] = {
    p.name: p for p in (PLAN, EXECUTE, REACT, REFLECT, REVISE, FINALIZE, FINAL_ANSWER, ANSWER)
}
