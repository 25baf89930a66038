"""Expose a :class:`ToolSpec` as a LangChain ``StructuredTool``.

The tool's content is the (truncated) JSON observation and its artifact the full
:class:`ToolResult` (``response_format="content_and_artifact"``); an error result gives a
``ToolMessage`` with ``status="error"``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool

from noema_graph.tools.injection import InjectedArgs
from noema_graph.tools.results import ToolResult, render_observation
from noema_graph.tools.runner import ToolRunner
from noema_graph.tools.spec import ToolSpec


class NoemaStructuredTool(StructuredTool):
    """A ``StructuredTool`` whose ``ToolMessage`` status follows its ``ToolResult`` artifact.

    LangChain marks a message ``error`` only when the tool raises, which would drop the
    artifact; this class keeps the artifact and sets the status from it instead.
    """

    injected: InjectedArgs | None = None
    """Arguments ``tool_node`` fills from the run (see :mod:`noema_graph.tools.injection`)."""

    def invoke(
        self,
        input: str | dict[str, object] | Any,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the tool; see ``BaseTool.invoke``."""
        return _with_status(super().invoke(input, config, **kwargs))

    async def ainvoke(
        self,
        input: str | dict[str, object] | Any,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the tool from async code; see ``BaseTool.ainvoke``."""
        return _with_status(await super().ainvoke(input, config, **kwargs))


def _with_status(output: object) -> object:
    if (
        isinstance(output, ToolMessage)
        and isinstance(output.artifact, ToolResult)
        and output.artifact.status == "error"
    ):
        return output.model_copy(update={"status": "error"})
    return output


def to_langchain_tool(
    spec: ToolSpec, runner: ToolRunner, *, max_observation_chars: int
) -> NoemaStructuredTool:
    """Wrap ``spec`` so LangChain calls go through ``runner``.

    The args schema handed to LangChain is a JSON Schema dict, so LangChain passes the raw
    arguments through and the runner validates them into an observation, never an exception.
    It leaves out the spec's injected arguments (what the model sees); the tool carries them
    (``injected``) for ``tool_node`` to fill.
    """

    def call(**arguments: object) -> tuple[str, ToolResult]:
        result = runner.run(spec, arguments)
        return render_observation(result, max_observation_chars), result

    async def acall(**arguments: object) -> tuple[str, ToolResult]:
        result = await runner.arun(spec, arguments)
        return render_observation(result, max_observation_chars), result

    return NoemaStructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=spec.json_schema(),
        func=call,
        coroutine=acall,
        response_format="content_and_artifact",
        injected=spec.injected,
        metadata={
            "idempotency": spec.idempotency,
            "permission": spec.permission,
        },
    )
