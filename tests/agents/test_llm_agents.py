"""Learning, calibration and governance on the embedded model (marked ``llm``).

The small model is weak at choosing tools, so these tests check what must hold for any
model (the run ends with a complete output contract) and, for calibration, that the result
is schema-valid.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from noema_graph.agents import default_registry
from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.noema import DemoSummary

pytestmark = pytest.mark.llm

# calibration completes with a schema-valid result on the 135M model in ~20 s; learning
# (~190 s) and governance (hits its 240 s budget) do not yet: they are run, measured and
# checked for a complete output contract only, and marked slow (not part of CI's run).
CASES = [
    pytest.param("learning", "What should I study next?", marks=pytest.mark.slow),
    ("calibration", "Is my confidence well calibrated?"),
    pytest.param("governance", "Check the cards for quality problems.", marks=pytest.mark.slow),
]
STRICT = {"calibration"}


@pytest.fixture(scope="module")
def local_model() -> Any:
    return make_model("local")


@pytest.mark.parametrize(("agent", "request_text"), CASES)
def test_agent_completes_with_schema_valid_output(
    local_model: Any, demo: DemoSummary, agent: str, request_text: str
) -> None:
    started = time.perf_counter()
    out = run_agent(agent, request_text, user_id="ben", model=local_model, db=demo.path)
    seconds = time.perf_counter() - started
    schema = default_registry().get(agent).output_schema
    print(  # shown with -s: the figures the report quotes
        f"{agent}: {seconds:.1f}s validated={out.validated} success={out.success} "
        f"iterations={out.metadata.iterations} tokens={out.metadata.token_usage.total_tokens} "
        f"tools={out.metadata.tools_used} result={out.result}"
    )
    assert out.metadata.agent_name == agent and out.metadata.token_usage.total_tokens > 0
    assert out.reasoning.steps and 0.0 <= out.reasoning.confidence <= 1.0
    if agent in STRICT:
        assert out.success, out.error
        assert out.validated is True
        schema.model_validate(out.result)
