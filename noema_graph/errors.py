"""The error hierarchy of noema_graph.

Tiers, from the caller's point of view:

* developer or user misuse: :class:`ConfigurationError`, :class:`HumanInputError` (both a
  :class:`FieldError` naming the field and the fix);
* model failure: :class:`TransientModelError` (retried by the node's ``RetryPolicy``),
  :class:`LLMError` (ends the run with ``llm_error``);
* run termination: :class:`Cancelled`, :class:`RunTimeout`, :class:`HookVeto`;
* tool failure: :class:`ToolError`.

Limits (iterations, time, tokens, cost) are not exceptions: the routers end the run in
``finalize`` with a typed stop reason.

Exceptions never log; the caller decides what to do with them.
"""

from __future__ import annotations

from typing import Any


class NoemaError(Exception):
    """Base class of every error raised by noema_graph."""


class FieldError(NoemaError, ValueError):
    """A value is invalid: ``field`` names it and ``fix`` (when given) says what to do.

    The base of the errors whose message reads ``"<field>: <problem> (fix: <fix>)"``.
    """

    def __init__(
        self,
        field: str,
        message: str,
        *,
        fix: str | None = None,
        fix_call: dict[str, Any] | None = None,
    ) -> None:
        """Build the error for ``field`` with an optional suggested ``fix``.

        ``fix_call`` is the fix as data when it is a tool call (``{"tool": ..., "args": {}}``),
        so an agent can make that call next rather than read it from the text.
        """
        self.field = field
        self.fix = fix
        self.fix_call = fix_call
        text = f"{field}: {message}"
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class ConfigurationError(FieldError):
    """A value given by the developer is invalid; the message names the field and the fix."""


class LLMError(NoemaError):
    """The model call failed and retrying will not help."""


class TransientModelError(NoemaError):
    """A model call failed transiently and attempts remain: LangGraph runs the node again."""


class Cancelled(NoemaError):
    """The run was cancelled by the caller."""


class RunTimeout(NoemaError):
    """The run's time budget (``timeout_s``) ran out while a model or tool call was in progress.

    Raised by the call's effect at the deadline; the node records the budget as spent and
    the routers end the run in ``finalize`` with ``stop_reason = "timeout"``.
    """


class ToolError(NoemaError):
    """A tool failed in a way the model cannot recover from."""


class HookVeto(NoemaError):
    """Raised by a pre/post hook to stop the run on purpose (error code ``hook_veto``)."""

    code: str = "hook_veto"
    """The run's error code."""


class Forbidden(HookVeto):
    """A request for data the run's learner may not see (error code ``forbidden``).

    The run ends before any model or tool call; the output's message is
    :data:`FORBIDDEN_MESSAGE`, the details say what the request named.
    """

    code = "forbidden"


FORBIDDEN_MESSAGE = "You can only see your own data."
"""The output's error message of a run ended with ``forbidden``."""


class HumanInputError(FieldError):
    """A resume value for a paused run is invalid; the message names the field and the fix."""

    def __init__(self, field: str, message: str, *, fix: str) -> None:
        """Build the error for ``field`` of the answer with the ``fix`` to apply."""
        super().__init__(field, message, fix=fix)
