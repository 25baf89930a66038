"""Fuzz: random writes and undos, then undo everything: the learner's data is the original.

200 sequences with a fixed seed (``bench/bench_undo.py`` runs 1,000, and 200 on PostgreSQL).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.store import LearningStore
from tests.noema.journal_helpers import snapshot
from tests.noema.undo_fuzz import ACTIONS, Action, run_sequence, undo_everything

SEQUENCES = 200
SEED = 37


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The sample store, written once (each sequence runs on a copy)."""
    return write_demo_data(tmp_path_factory.mktemp("sample") / "sample.db")


@seed(SEED)
@settings(
    max_examples=SEQUENCES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(actions=ACTIONS)
def test_undoing_every_run_restores_the_learners_data(
    sample: DemoSummary, tmp_path: Path, actions: list[Action]
) -> None:
    copy = tmp_path / "copy.db"
    shutil.copyfile(sample.path, copy)
    with LearningStore.open(copy) as store:
        original = snapshot(store)
        tally = run_sequence(store, actions)
        undo_everything(store, tally)
        assert snapshot(store) == original
