"""Token counting without the network, and compaction of a prompt to fit a context window.

Counting is cached, so that counting the prompt at every step of a run costs O(new
messages), not O(prompt): each message is measured once (:func:`message_tokens`), and the
per-message counts of a run's previous prompt are reused by position (:func:`estimate_tokens`).
Both caches key on object identity: messages are values in LangGraph state, and one changed
in place after it was counted (which LangGraph forbids anyway) keeps its old count.
"""

from __future__ import annotations

import json
import math
import operator
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from noema_graph._lazy import loaded_attr
from noema_graph.models.plain import safe_str

CHARS_PER_TOKEN = 4
"""Rough English average for BPE tokenizers; good enough to budget a window."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators a chat template adds per message."""
TRUNCATED_KEEP_CHARS = 200
"""Characters of an old observation kept by the first compaction pass."""
REMOVED_OBSERVATION = "[observation removed to fit the context window]"
PROMPT_MEMO_SIZE = 64
"""Prompts remembered by :func:`estimate_tokens` (one per run in flight is enough)."""

TokenCounter = Callable[[Sequence[BaseMessage]], int]

_BASE_TEXT = BaseMessage.text
_measured: dict[int, tuple[weakref.ref[BaseMessage], int]] = {}
"""id(message) -> (weak reference to it, its tokens); an entry dies with its message."""
_prompts: dict[int, tuple[list[BaseMessage], list[int]]] = {}
"""id(prompt[1]) -> (a prompt, its per-message tokens); oldest first, PROMPT_MEMO_SIZE at most."""


def estimate_tokens(messages: Sequence[BaseMessage]) -> int:
    """Return ~4 characters per token plus a per-message overhead; pure and offline.

    The prompts of one run's steps share their history: the same message objects, at the
    same positions after the system prompt. The last prompt counted with the same second
    message is compared with this one by identity, position by position (a C-level pass),
    and only the messages that differ or are new are counted.
    """
    prompt = list(messages)
    if len(prompt) < 2:
        return sum(map(message_tokens, prompt))
    key = id(prompt[1])  # the first message after the system prompt: constant within a run
    memo = _prompts.pop(key, None)
    if memo is None or memo[0][1] is not prompt[1]:
        tokens = list(map(message_tokens, prompt))
    else:
        tokens = _update(prompt, *memo)
    _prompts[key] = (prompt, tokens)  # kept alive here, prompt[1]'s id cannot be reused
    if len(_prompts) > PROMPT_MEMO_SIZE:
        _prompts.pop(next(iter(_prompts)), None)
    return sum(tokens)


def _update(prompt: list[BaseMessage], seen: list[BaseMessage], counts: list[int]) -> list[int]:
    """Return ``prompt``'s per-message tokens, reusing ``counts`` where ``seen`` matches."""
    same = list(map(operator.is_, prompt, seen))
    tokens = counts[: len(same)]
    for index in compress(range(len(same)), map(operator.not_, same)):
        tokens[index] = message_tokens(prompt[index])
    tokens.extend(map(message_tokens, prompt[len(same) :]))
    return tokens


def message_tokens(message: BaseMessage) -> int:
    """Return the estimated tokens of one message: ``ceil(chars / 4) + 4``.

    ``chars`` is the length of the message's text plus, for an AI message, each tool call's
    name and JSON-encoded arguments. A plain string message costs a ``len``; one with list
    content or tool calls is measured once and remembered for as long as it lives.
    """
    content = message.content
    if (
        isinstance(content, str)
        and not (isinstance(message, AIMessage) and message.tool_calls)
        and type(message).text is _BASE_TEXT
    ):
        return math.ceil(len(content) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS
    key = id(message)
    entry = _measured.get(key)
    if entry is not None and entry[0]() is message:
        return entry[1]
    tokens = _measure(message)
    _measured[key] = (weakref.ref(message, _forget(key)), tokens)
    return tokens


def _measure(message: BaseMessage) -> int:
    chars = len(message.text)
    if isinstance(message, AIMessage) and message.tool_calls:
        chars += sum(map(_call_chars, message.tool_calls))
    return math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS


def _call_chars(call: Mapping[str, Any]) -> int:
    """Return the characters of a call's name and JSON arguments (any value: an estimate)."""
    try:
        args = json.dumps(call.get("args"), default=str)
    except (ValueError, TypeError, RecursionError):  # circular or unprintable: not normalised
        args = safe_str(call.get("args"))
    return len(str(call.get("name") or "")) + len(args)


def _forget(key: int) -> Callable[[weakref.ref[BaseMessage]], None]:
    """Return the callback that drops ``key``'s entry when its message is collected."""
    return _forget_in(_measured, key)


def count_tokens(messages: Sequence[BaseMessage], model: BaseChatModel | None = None) -> int:
    """Return the tokens ``messages`` take for ``model``, never touching the network.

    The model's own ``get_num_tokens_from_messages`` is used only when its class overrides
    it and it is not an OpenAI client (whose counter downloads tiktoken's BPE file);
    otherwise :func:`estimate_tokens` answers (cached per message, see
    :func:`message_tokens`). A model's own counter is asked about the whole prompt every
    time: it need not be a sum over messages.

    Args:
        messages: The prompt.
        model: The chat model the prompt is for, if known.
    """
    if model is None or not has_offline_counter(model):
        return estimate_tokens(messages)
    try:
        return model.get_num_tokens_from_messages(list(messages))
    except (ImportError, NotImplementedError):
        return estimate_tokens(messages)


def has_offline_counter(model: BaseChatModel | None) -> bool:
    """Return whether ``model`` counts tokens itself, offline (see :func:`count_tokens`)."""
    if model is None:
        return False
    # an OpenAI client can exist only once langchain_openai is imported: never import it here
    openai_base = loaded_attr("langchain_openai.chat_models.base", "BaseChatOpenAI")
    if openai_base is not None and isinstance(model, openai_base):
        return False
    method = type(model).get_num_tokens_from_messages
    return method is not BaseLanguageModel.get_num_tokens_from_messages


@dataclass(frozen=True)
class CompactionResult:
    """A compacted prompt and what compaction did to it.

    Attributes:
        messages: The compacted prompt (the input is never mutated).
        removed_count: Messages dropped (only old plain human/AI messages).
        truncated_count: Tool observations shortened.
        before_tokens: Tokens of the input.
        after_tokens: Tokens of ``messages``; above the budget if nothing more could go.
    """

    messages: tuple[BaseMessage, ...]
    removed_count: int
    truncated_count: int
    before_tokens: int
    after_tokens: int


def compact_messages(
    messages: Sequence[BaseMessage], *, budget_tokens: int, count: TokenCounter
) -> CompactionResult:
    """Shorten ``messages`` until ``count`` says they fit ``budget_tokens``.

    Kept verbatim: the first system message, the last human message, and the latest AI
    message with its tool results. Passes, oldest first, each stopping once it fits:

    1. cut older tool observations to their first :data:`TRUNCATED_KEEP_CHARS` characters;
    2. replace them by :data:`REMOVED_OBSERVATION`;
    3. drop older human and AI messages that carry no tool calls;
    4. last resort: halve the longest observations, the latest step's included.

    A ToolMessage is never dropped, so every tool call of every AI message stays answered.

    Args:
        messages: The prompt, oldest first.
        budget_tokens: Tokens the prompt may take.
        count: Counts the tokens of a list of messages (e.g. ``count_tokens``).
    """
    work = list(messages)
    before = count(work)
    if before <= budget_tokens:
        return CompactionResult(tuple(work), 0, 0, before, before)
    protected, tool_indices = _protected_and_observations(work)
    truncated: set[int] = set()
    tokens = before
    for shorten in (_truncate_text, _placeholder):
        for index in tool_indices:
            if tokens <= budget_tokens:
                break
            shortened, saved = shortened_copy(work[index], shorten)
            if shortened is not None:
                work[index] = shortened
                truncated.add(index)
                # the estimate is a sum over messages: only the saving of this one changes
                tokens = tokens - saved if count is estimate_tokens else count(work)
    removed = 0
    if tokens > budget_tokens:  # the passes above usually suffice: no scan for the rest
        for index in _removable_indices(work, protected):
            if tokens <= budget_tokens:
                break
            old = work.pop(index - removed)
            removed += 1
            tokens = _recount(work, count, tokens, old, None)
    tokens, cut = _halve_latest_observations(work, budget_tokens, count, tokens)
    return CompactionResult(tuple(work), removed, len(truncated) + cut, before, tokens)


Shorten = Callable[[str], str]
_shortened: dict[tuple[int, Shorten], tuple[weakref.ref[BaseMessage], BaseMessage | None, int]] = {}
"""(id(message), shorten) -> (weak reference to it, its shortened copy or None, tokens saved)."""


def shortened_copy(message: BaseMessage, shorten: Shorten) -> tuple[BaseMessage | None, int]:
    """Return a copy of ``message`` with its text shortened by ``shorten``, and tokens saved.

    The copy is None (and the saving 0) when ``shorten`` leaves the text as it is. Both are
    remembered for as long as ``message`` lives: once a long run outgrows its window, every
    later prompt shortens the same old observations again, and a new copy of each, counted
    again, at every step made compaction cost grow with the run at every step. The same copy
    is handed out each time (messages are never changed in place). The saving is
    :func:`message_tokens`' (the estimate's).
    """
    key = (id(message), shorten)
    entry = _shortened.get(key)
    if entry is not None and entry[0]() is message:
        return entry[1], entry[2]
    text = message.text
    content = shorten(text)
    copy = message.model_copy(update={"content": content}) if content != text else None
    saved = message_tokens(message) - message_tokens(copy) if copy is not None else 0
    _shortened[key] = (weakref.ref(message, _forget_in(_shortened, key)), copy, saved)
    return copy, saved


def _forget_in(
    memo: dict[Any, tuple[weakref.ref[BaseMessage], Any]]
    | dict[Any, tuple[weakref.ref[BaseMessage], Any, Any]],
    key: Any,
) -> Callable[[weakref.ref[BaseMessage]], None]:
    """Return the callback that drops ``memo[key]`` when its message is collected."""

    def forget(ref: weakref.ref[BaseMessage]) -> None:
        entry = memo.get(key)
        if entry is not None and entry[0] is ref:
            del memo[key]

    return forget


def _halve_latest_observations(
    work: list[BaseMessage], budget_tokens: int, count: TokenCounter, tokens: int
) -> tuple[int, int]:
    """Last resort: halve the longest remaining observation until the prompt fits.

    Reached only when the latest step's own tool results exceed the window; the start of
    each observation is kept, with a marker saying how much was cut.
    """
    cut: set[int] = set()
    while tokens > budget_tokens:
        # only observations that halving really shortens (the marker adds ~40 chars)
        candidates = [
            (len(m.text), i)
            for i, m in enumerate(work)
            if isinstance(m, ToolMessage) and len(m.text) > 2 * TRUNCATED_KEEP_CHARS
        ]
        if not candidates:
            break
        _, index = max(candidates)
        text = work[index].text
        keep = len(text) // 2
        old, work[index] = (
            work[index],
            work[index].model_copy(
                update={"content": f"{text[:keep]}\n[... {len(text) - keep} characters truncated]"}
            ),
        )
        cut.add(index)
        tokens = _recount(work, count, tokens, old, work[index])
    return tokens, len(cut)


def _recount(
    work: list[BaseMessage],
    count: TokenCounter,
    tokens: int,
    old: BaseMessage,
    new: BaseMessage | None,
) -> int:
    """Return the tokens of ``work`` after ``old`` became ``new`` (None: was removed).

    With :func:`estimate_tokens` (a sum over messages) only the changed message is counted
    again: compaction changes one message at a time, and recounting the whole prompt after
    each made a long run's compaction quadratic in its length at every step. Any other
    counter (a model's own, not a sum) counts the whole prompt again.
    """
    if count is not estimate_tokens:
        return count(work)
    return tokens - message_tokens(old) + (message_tokens(new) if new is not None else 0)


def _truncate_text(text: str) -> str:
    if len(text) <= TRUNCATED_KEEP_CHARS + len(REMOVED_OBSERVATION):
        return text
    dropped = len(text) - TRUNCATED_KEEP_CHARS
    return f"{text[:TRUNCATED_KEEP_CHARS]}\n[... {dropped} characters truncated]"


def _placeholder(text: str) -> str:
    return REMOVED_OBSERVATION if len(text) > len(REMOVED_OBSERVATION) else text


_ROLES: dict[type[BaseMessage], type[BaseMessage]] = {}
"""Message class -> the class of :data:`_ROLE_CLASSES` it is an instance of (or BaseMessage)."""
_ROLE_CLASSES: tuple[type[BaseMessage], ...] = (ToolMessage, AIMessage, HumanMessage, SystemMessage)


def _role(cls: type[BaseMessage]) -> type[BaseMessage]:
    """Return (and remember) which of the role classes ``cls`` is: one ``issubclass`` a class."""
    role = next((r for r in _ROLE_CLASSES if issubclass(cls, r)), BaseMessage)
    _ROLES[cls] = role
    return role


def _protected_and_observations(messages: Sequence[BaseMessage]) -> tuple[set[int], list[int]]:
    """Return the indices kept verbatim and those of the other tool observations, oldest first.

    Kept verbatim: the first system message, the last human message, the latest AI message
    and the tool results after it that answer its calls. One pass over the prompt: a long
    run compacts at every step, and each extra scan of its history cost time at each.
    """
    first_system: int | None = None
    last_human: int | None = None
    last_ai: int | None = None
    observations: list[int] = []
    for index, message in enumerate(messages):
        role = _ROLES.get(type(message)) or _role(type(message))
        if role is ToolMessage:
            observations.append(index)
        elif role is AIMessage:
            last_ai = index
        elif role is HumanMessage:
            last_human = index
        elif first_system is None and role is SystemMessage:
            first_system = index
    protected = {i for i in (first_system, last_human, last_ai) if i is not None}
    if last_ai is not None:
        last = messages[last_ai]
        call_ids = (
            {call["id"] for call in last.tool_calls} if isinstance(last, AIMessage) else set()
        )
        for index in observations:
            message = messages[index]
            if (
                index > last_ai
                and isinstance(message, ToolMessage)
                and message.tool_call_id in call_ids
            ):
                protected.add(index)
    return protected, [i for i in observations if i not in protected]


def _removable_indices(messages: Sequence[BaseMessage], protected: set[int]) -> list[int]:
    return [
        i
        for i, m in enumerate(messages)
        if i not in protected
        and isinstance(m, HumanMessage | AIMessage)
        and not (isinstance(m, AIMessage) and m.tool_calls)
    ]
