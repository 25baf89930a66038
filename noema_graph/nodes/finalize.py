"""The ``finalize`` node: the final answer, or the partial result when a limit ended the run."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from noema_graph.effects import Steps
from noema_graph.errors import Cancelled, LLMError, RunTimeout
from noema_graph.events import ContentChunk, TurnEnd
from noema_graph.grounding.answers import (
    merged,
    remaining_schema,
    sourced_fields,
    unwritten_fields,
)
from noema_graph.grounding.checks import AnswerData, checked_answer
from noema_graph.grounding.choices import chosen_schema, field_choices
from noema_graph.grounding.openings import opened_fields
from noema_graph.grounding.reading import may_write, writes
from noema_graph.grounding.recovery import call_signature, domain_failure, last_failure
from noema_graph.grounding.secrets import secret_values, shows_secret, unleaked
from noema_graph.grounding.sources import result_data
from noema_graph.memory import persist_steps
from noema_graph.models.grounding import grounded_schema, observed
from noema_graph.nodes.answer_fields import shown_fields
from noema_graph.nodes.common import (
    TRUNCATED,
    ctx,
    emit,
    latest_request,
    memory_user,
    stopwatch,
    thread_id,
)
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.llm import as_ai_message, ask_structured, call_model, usage_of
from noema_graph.nodes.output import STOP_MESSAGES, build_output, grounded, partial_result
from noema_graph.nodes.routing import pending_tool_calls, plan_complete, stop_reason
from noema_graph.nodes.spec import NodeSpec
from noema_graph.prompts import (
    EXAMPLES_HEADING,
    FINAL_ANSWER,
    FINALIZE,
    nearest_example,
    without_examples,
)
from noema_graph.state.agent import AgentState, AgentUpdate, AskUpdate
from noema_graph.state.models import ReasoningStep, StopReason, TaskPlan, Usage
from noema_graph.state.outcome import FINISHED, Outcome, run_outcome
from noema_graph.state.reducers import apply_update

ANSWER_RESULTS = "${results}"
"""Where the answer's system message (:data:`~noema_graph.prompts.FINALIZE`) ends being stable."""

# Limits that no longer matter once the work is done. After max_iterations the final answer
# may still be written by the model (finalize is not an iteration); after a time or money
# budget ran out it is composed from the step results without another call.
FINAL_OBSERVATIONS = 6
"""Most recent successful tool results shown to the final answer."""
FINAL_OBSERVATION_CHARS = 1_500
"""Characters of each such result shown."""
Answer = tuple[object, Usage, bool]
"""An answer, the usage it took, and whether the model wrote it."""
SOFT_LIMITS: frozenset[str] = frozenset({"max_iterations", "timeout", "budget_exceeded"})
NO_MODEL_AFTER: frozenset[str] = frozenset({"timeout", "budget_exceeded"})


def _decide(
    state: AgentState, runtime: NodeRuntime, deps: AgentDeps
) -> tuple[StopReason | None, bool]:
    """Return (stop reason, whether the model may be called to write the answer)."""
    reason = stop_reason(state, deps.config, ctx(runtime))
    reflection = state.get("reflection")
    done = plan_complete(state) or (reflection is not None and reflection.decision == "finish")
    if done and reason in SOFT_LIMITS:
        reason, may_call = None, reason not in NO_MODEL_AFTER
    else:
        may_call = reason is None
    # no answer without the tool results it must come from: the result stays unvalidated
    return reason, may_call and grounded(state.get("trace") or [], deps.config)


SUCCESS_PREFIX = '{"status":"success","data":'
"""How a standard tool result that succeeded begins (``tools/results.py``, compact JSON)."""


def _observation_data(text: str) -> str:
    """Return a tool observation without its status wrapper (``data`` of a success)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:  # a preview cut inside the data: unwrap it as text
        return text.removeprefix(SUCCESS_PREFIX)
    if isinstance(value, dict) and "data" in value:
        return json.dumps(value["data"], separators=(",", ":"), default=str)
    return text


def _shown(trace: Sequence[ReasoningStep]) -> list[ReasoningStep]:
    """Return the successful tool calls the answer prompt shows, the latest last."""
    found = [s for s in trace if s.kind == "tool" and s.status == "ok" and s.action is not None]
    return found[-FINAL_OBSERVATIONS:]


def observations_text(
    trace: Sequence[ReasoningStep],
    fields: Mapping[str, Sequence[str]] | None = None,
    rows: Mapping[str, int] | None = None,
) -> str:
    """Render the run's successful tool calls and results, the latest last.

    Each is an ``Action:`` line and an ``Observation:`` line, the layout of the agents'
    few-shot examples, so a small model continues the pattern and copies the answer's
    figures from the real observation; failed calls are left out. ``fields`` (the agent's
    ``answer_fields``) keeps, per tool, only the result fields the answer reads; a tool
    it maps to no fields is left out. ``rows`` (``answer_rows``) keeps, per tool, the
    first entries of each list of its result.
    """
    fields, rows = fields or {}, rows or {}
    lines: list[str] = []
    for step in _shown(trace):
        assert step.action is not None  # _shown keeps calls only
        named = fields.get(step.action.tool)
        if named is not None and not named:
            continue
        args = json.dumps(step.action.input, separators=(",", ":"), default=str)
        limit = rows.get(step.action.tool)
        if named or limit:  # the call's full output: the observation is a preview, maybe cut
            view = shown_fields(result_data(step.action.output), named, limit)
            data = json.dumps(view, separators=(",", ":"), default=str)[:FINAL_OBSERVATION_CHARS]
        else:
            data = _observation_data(step.observation or "")[:FINAL_OBSERVATION_CHARS]
        lines += [f"Action: {step.action.tool} {args}", f"Observation: {data}"]
    return "\n".join(lines) or "(no tool results)"


def _unshown_results(plan: TaskPlan | None, trace: Sequence[ReasoningStep]) -> str:
    """Render the completed steps' results that the observations do not already show.

    A step a tool completed holds a preview of that tool's observation, which the answer
    prompt shows in full below: listing it twice would double the prompt a small model
    reads (its time is prompt processing) without telling it anything.
    """
    shown = [s.observation or "" for s in _shown(trace)]
    done = plan.completed_results() if plan else []
    kept = [
        (desc, result)
        for desc, result in done
        if not any(o.startswith(result.split(TRUNCATED)[0]) for o in shown)
    ]
    if done and not kept:  # the observations show them all: nothing to add
        return ""
    listed = "\n".join(f"- {desc}: {result}" for desc, result in kept) or "(none yet)"
    return f"\nResults:\n{listed}"


def _answer_schema(state: AgentState, deps: AgentDeps) -> type[BaseModel]:
    """Return the output schema, its ids grounded in the tool results when it answers from them."""
    schema = deps.config.output_schema
    assert schema is not None  # only called with a schema
    if deps.config.answer_after_tool_results is None:
        return schema
    return grounded_schema(schema, observed(state.get("trace") or []))


def _prompt(
    state: AgentState,
    deps: AgentDeps,
    filled: Mapping[str, Any] | None = None,
    rest: type[BaseModel] | None = None,
) -> list[BaseMessage]:
    schema = deps.config.output_schema
    trace = state.get("trace") or []
    observed = observations_text(trace, deps.config.answer_fields, deps.config.answer_rows)
    note = f" Answer as {schema.__name__} JSON." if schema else ""
    if filled and rest is not None:
        figures = json.dumps(filled, separators=(",", ":"), default=str)
        fields = "; ".join(
            f"{name}: {info.description or name}" for name, info in rest.model_fields.items()
        )
        note = (
            f" These figures come from the tools: {figures}. Write only the other fields, "
            f"using them: {fields}"
        )
    system = FINALIZE.render(
        agent_name=deps.config.name, results=_unshown_results(state.get("plan"), trace)
    )
    # the observations come last, nearest the answer: a small model copies what it read last
    ask = FINAL_ANSWER.render(
        request=latest_request(state.get("messages", [])),
        observations=observed,
        schema_note=note,
    )
    # an opened sentence goes on as the example whose observations read most like the run's
    # does; elsewhere an example's topics and words would be copied into the answer
    instructions = (
        nearest_example(deps.config.instructions, observed)
        if filled and deps.config.answer_openings
        else without_examples(deps.config.instructions)
    )
    return [system_message(instructions, system), HumanMessage(ask)]


def answer_prefix(prompt: Sequence[BaseMessage], agent_name: str) -> str | None:
    """Return the answer prompt's stable prefix: its system message up to the request.

    That is the agent's instructions (with the one worked example chosen for the run, one
    of the agent's own) and the answer's instructions, the opening of
    :data:`~noema_graph.prompts.FINALIZE`: nothing of the request, the learner or the
    observations, so the embedded model's saved prefix of it serves every run that picks
    the same example (:mod:`noema_graph.models.prefix_cache`).
    """
    opening = FINALIZE.text.partition(ANSWER_RESULTS)[0].replace("${agent_name}", agent_name)
    text = prompt[0].text if prompt else ""
    at = text.find(opening)
    return text[: at + len(opening)] if at >= 0 else None


def validate_result(value: object, schema: type[BaseModel] | None) -> tuple[object, bool | None]:
    """Validate ``value`` (a model, dict or JSON text) against ``schema``.

    Returns (typed data as a dict, True) when it matches, (the raw value, False) when not,
    and (value, None) without a schema.
    """
    if schema is None:
        return value, None
    try:
        if isinstance(value, BaseModel):
            model = schema.model_validate(value.model_dump())
        elif isinstance(value, str):
            model = schema.model_validate_json(value.strip().removeprefix("```json").strip("`\n "))
        else:
            model = schema.model_validate(value)
    except ValidationError:
        return value, False
    return model.model_dump(mode="json"), True


def stopped_result(state: AgentState, reason: StopReason) -> str:
    """Return the partial result of a stopped run; a loop's names the call that kept failing."""
    reading = state.get("reading")
    if reason == "refused" and reading is not None and reading.refusal is not None:
        return reading.refusal.message
    hook = state.get("hook_error")
    if reason == "forbidden" and hook is not None:  # written for the learner
        return hook.message
    partial = partial_result(state.get("plan"))
    trace = state.get("trace") or []
    if reason == "loop_detected" and (failure := domain_failure(trace)) is not None:
        return f"{partial}\n{failure[1]}" if partial else failure[1]
    failed = last_failure(trace) if reason == "loop_detected" else None
    if failed is None or failed.action is None:
        return partial
    call = call_signature(failed.action.tool, failed.action.input)
    failure = f"Stopped: {call} failed: {(failed.observation or '')[:300]}"
    return f"{partial}\n{failure}" if partial else failure


def _single_result(state: AgentState, deps: AgentDeps) -> str | None:
    if not grounded(state.get("trace") or [], deps.config):
        return None
    plan = state.get("plan")
    done = plan.completed_results() if plan else []
    return done[0][1] if plan is not None and len(plan.steps) == 1 and len(done) == 1 else None


def _dangling(state: AgentState, reason: StopReason | None) -> list[ToolMessage]:
    """Answer the calls a stop left without a result, so the history stays well-formed."""
    return [
        ToolMessage(
            f"Not executed: the run stopped ({reason or 'finished'}).",
            tool_call_id=str(c["id"]),
            name=str(c["name"]),
            status="error",
        )
        for c in pending_tool_calls(state)
    ]


def _finish(
    state: AgentState,
    deps: AgentDeps,
    reason: StopReason | None,
    answer: Answer,
    seconds: float,
    checks: Sequence[ReasoningStep] = (),
) -> AgentUpdate:
    """Return finalize's update; the output is built from the state that update produces."""
    raw, usage, synthesized = answer
    if reason is None:
        result, validated = validate_result(raw, deps.config.output_schema)
    else:  # a partial result shows step results: the secrets they hold are masked too
        secrets = secret_values(deps.config.secret_fields, state.get("trace") or [])
        result, validated = unleaked(stopped_result(state, reason), secrets)[0], None
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    messages: list[BaseMessage] = [*_dangling(state, reason)]
    if synthesized or reason is not None:
        note = f"[{STOP_MESSAGES[reason]}]\n" if reason else ""
        messages.append(AIMessage(content=note + text))
    step = ReasoningStep(
        kind="final" if reason is None else "limit",
        thought=STOP_MESSAGES[reason] if reason else "Final answer composed.",
        observation=text[:2000],
        round=int(state.get("iteration") or 0),
    )
    update: AgentUpdate = {
        "messages": messages,
        "trace": [*checks, step],
        "usage": usage,
        "elapsed_s": seconds,
    }
    penalty = 0.0
    if deps.config.check_claims:
        claims, penalty = _claims(result, [*(state.get("trace") or []), *checks, step])
        update["trace"] = [*checks, step, *claims]
    final = apply_update(AgentState, state, update)
    output = build_output(final, deps.config, result=result, validated=validated, reason=reason)
    if penalty:
        confidence = round(max(output.reasoning.confidence - penalty, 0.0), 3)
        reasoning = output.reasoning.model_copy(update={"confidence": confidence})
        output = output.model_copy(update={"reasoning": reasoning})
    return {**update, "output": output.model_dump(mode="json")}


def _claims(result: object, trace: list[ReasoningStep]) -> tuple[list[ReasoningStep], float]:
    """Return the unbacked claims of ``result`` and the thoughts as trace steps, and a penalty."""
    from noema_graph.claims.check import claims_check  # the detector loads only when asked

    return claims_check({"result": result}, trace)


def announce(runtime: NodeRuntime, state: Mapping[str, object], output: dict[str, Any]) -> None:
    """Emit the final answer as a content chunk, then turn_end."""
    result = output["result"]
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    if text:
        emit(runtime, ContentChunk(text=text), state)
    usage = output["metadata"]["token_usage"]
    emit(
        runtime,
        TurnEnd(
            success=output["success"],
            stop_reason=output["metadata"]["stop_reason"],
            total_tokens=usage["total_tokens"],
            cost_usd=output["metadata"]["estimated_cost_usd"],
        ),
        state,
    )


def _answer(
    state: AgentState, runtime: NodeRuntime, deps: AgentDeps, may_call: bool
) -> Steps[Answer]:
    """Return (answer, usage, whether the model wrote it) for a run that may be answered."""
    single = _single_result(state, deps)
    if may_call and deps.config.output_schema is not None:
        trace, schema = state.get("trace") or [], _answer_schema(state, deps)
        filled = filled_fields(state, deps)
        openings = opened_fields(deps.config.answer_openings, trace)
        rest = remaining_schema(schema, filled, openings)
        if rest is None:  # every field comes from the tools: nothing to write
            return (dict(filled), Usage(), True)
        # chosen fields admit only the data's candidates: an enum the grammar enforces
        rest = chosen_schema(rest, answer_data(state, deps).choices)
        # an opened field's first words are in the schema (its pattern), not the prompt: a
        # grammar forces them, structured output honours them, merged lays them over
        prompt = _prompt(state, deps, filled, rest)
        value, used, _ = yield from ask_structured(
            deps.model,
            rest,
            prompt,
            runtime,
            deps,
            attempts=2,
            prefix=answer_prefix(prompt, deps.config.name),
        )
        fallback = single or partial_result(state.get("plan"))
        answer = merged(value, filled, openings, schema) if value is not None else fallback
        return (answer, used, True)
    if may_call and single is None:
        prompt = _prompt(state, deps)
        message = as_ai_message(
            (
                yield from call_model(
                    deps.model,
                    prompt,
                    runtime,
                    deps,
                    prefix=answer_prefix(prompt, deps.config.name),
                )
            )
        )
        return (message.text, usage_of(message, deps), True)
    if single is not None:
        return (single, Usage(), False)
    return (partial_result(state.get("plan")), Usage(), False)


def barred_writes(state: AgentState, deps: AgentDeps) -> set[str]:
    """Return the write tools the run's reading does not let run (none without a reading)."""
    reading = state.get("reading")
    if reading is None:
        return set()
    loaded = [t for p in deps.providers for t in p.loaded_tools()]
    return {t.name for t in [*deps.tools, *loaded] if writes(t) and not may_write(reading, t.name)}


def filled_fields(state: AgentState, deps: AgentDeps) -> dict[str, object]:
    """Return the answer fields the tools fill; a barred write's are empty (no change made)."""
    config, trace = deps.config, state.get("trace") or []
    filled = sourced_fields(config.answer_sources, trace)
    if config.output_schema is None:
        return filled
    barred = barred_writes(state, deps)
    empty = unwritten_fields(config.answer_sources, config.output_schema, barred, trace)
    return {**empty, **filled}


def answer_data(state: AgentState, deps: AgentDeps) -> AnswerData:
    """Return what the run's answer is checked against (grounding.checks)."""
    trace, config = state.get("trace") or [], deps.config
    request = latest_request(state.get("messages", []))
    secrets = secret_values(config.secret_fields, trace)
    schema = config.output_schema
    choices = (
        field_choices(
            config.answer_choices, schema, trace, request, lambda t: shows_secret(t, secrets)
        )
        if schema is not None
        else {}
    )
    _, heading, examples = config.instructions.partition(EXAMPLES_HEADING)
    allowed = [request, without_examples(config.instructions)]
    if schema is not None:
        allowed.append(json.dumps(schema.model_json_schema()))
    return AnswerData(
        schema=schema,
        filled=filled_fields(state, deps),
        opened=tuple(config.answer_openings),
        choices=choices,
        secrets=secrets,
        examples=examples if heading else "",
        allowed=allowed,
        request=request,
    )


def _checked(
    state: AgentState, deps: AgentDeps, answer: Answer
) -> tuple[Answer, list[ReasoningStep]]:
    """Return the answer after grounding's checks, and a trace step per change they made."""
    value, usage, synthesized = answer
    value, notes = checked_answer(value, answer_data(state, deps), state.get("trace") or [])
    steps = [ReasoningStep(kind="thought", thought=f"Answer check: {note}") for note in notes]
    return (value, usage, synthesized), steps


def finalize(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Write the final answer, or the partial result and why the run stopped.

    Reads: plan, trace, usage, counters. Writes: output (the contract, built from the state
    after this update), messages, trace, usage.
    """
    reason, may_call = _decide(state, runtime, deps)
    with stopwatch() as took:
        try:
            answer = yield from _answer(state, runtime, deps, may_call)
        except (LLMError, Cancelled, RunTimeout) as exc:
            code: StopReason = (
                "cancelled"
                if isinstance(exc, Cancelled)
                else "timeout"
                if isinstance(exc, RunTimeout)
                else "llm_error"
            )
            state = {**state, "llm_error": str(exc)} if code == "llm_error" else state
            answer, reason = (partial_result(state.get("plan")), Usage(), False), code
    answer, checks = _checked(state, deps, answer)
    update = _finish(state, deps, reason, answer, took[0], checks)
    if reason == "llm_error":
        update["llm_error"] = state.get("llm_error")
    return update


def close_run(
    state: AgentState, update: AgentUpdate, runtime: NodeRuntime, deps: AgentDeps
) -> Steps[None]:
    """Remember the run, then announce its answer (``content``, ``turn_end`` events).

    Runs after finalize and its post hooks, so a redacting hook applies to what is stored
    and shown.
    """
    yield from remember(state, update, runtime, deps)
    output = update["output"]  # pyright: ignore[reportTypedDictNotRequiredAccess]  # always written
    announce(runtime, state, output)


def remember(
    state: AgentState, update: AgentUpdate, runtime: NodeRuntime, deps: AgentDeps
) -> Steps[None]:
    """Store a successful run's request, result and observations in long-term memory.

    A memory failure becomes a warning event; it never fails the run.
    """
    output = update.get("output") or {}
    if not (deps.config.persist_memory and output.get("success") and runtime.store is not None):
        return
    observations = [s.observation or "" for s in state.get("trace") or [] if s.kind == "tool"]
    result = output["result"]
    failed = yield from persist_steps(
        runtime.store,
        user_id=memory_user(runtime),
        agent=deps.config.name,
        thread_id=thread_id(),
        request=latest_request(state.get("messages", [])),
        result=result if isinstance(result, str) else json.dumps(result, default=str),
        observations=observations[-10:],
        embedder=deps.embedder,
    )
    if failed is not None:
        emit(runtime, failed.to_event(), state)


def outcome(update: AskUpdate) -> tuple[Outcome, str]:
    """Classify a final node's update by its output contract."""
    output = update.get("output") or {}
    error = output.get("error") or {}
    code = error.get("code")
    kind = run_outcome(
        success=bool(output.get("success")), validated=output.get("validated"), code=code
    )
    return kind, code or FINISHED


SPEC = NodeSpec(finalize, outcome, calls_model=True, after=close_run)
