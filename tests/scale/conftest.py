"""Scale-out fixtures: the session's PostgreSQL (`pg_url` in :mod:`tests.conftest`) and Aegra.

Aegra lives in its own virtualenv (``deploy/install_aegra.sh``; it needs Python >= 3.12). When
it is missing the tests skip, saying so loudly; under CI (``CI`` set) they fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.aegra import AegraUnavailable, aegra_venv

__all__ = ["aegra"]


@pytest.fixture
def aegra() -> Path:
    """Return Aegra's virtualenv; skip loudly (fail under CI) when it is not installed."""
    try:
        return aegra_venv()
    except AegraUnavailable as exc:
        reason = f"Aegra is not installed, so the scale-out tests cannot run: {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(f"!!! SKIPPED: {reason}")
