"""Secret scrubbing: the environment's secrets are read once and re-read only on change."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from noema_graph.observability import redact
from noema_graph.observability.redact import MASK, refresh_secrets, scrub

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-value-0123456789"


def test_a_secret_in_the_environment_before_first_use_is_masked() -> None:
    code = (
        "from noema_graph.observability.redact import scrub\n"
        f"print(scrub('calling with {SECRET} now'))"
    )
    env = {**os.environ, "NOEMA_TEST_API_KEY": SECRET, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"calling with {MASK} now"


def test_secrets_set_or_removed_after_first_use_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scrub(f"x {SECRET} y") == f"x {SECRET} y"  # first use: not a secret yet
    monkeypatch.setenv("NOEMA_TEST_TOKEN", SECRET)
    assert scrub(f"x {SECRET} y") == f"x {MASK} y"
    monkeypatch.setenv("NOEMA_TEST_TOKEN", "another-secret-value")  # same names, new value
    assert scrub(f"x {SECRET} another-secret-value") == f"x {SECRET} {MASK}"
    monkeypatch.delenv("NOEMA_TEST_TOKEN")
    assert scrub("x another-secret-value") == "x another-secret-value"
    monkeypatch.setenv("NOEMA_TEST_PLAIN", SECRET)  # not a secret name: never masked
    assert scrub(SECRET) == SECRET


def test_short_values_and_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOEMA_TEST_PASSWORD", "short")  # under 8 characters: not masked
    assert scrub("a short b") == "a short b"
    monkeypatch.setenv("NOEMA_TEST_PASSWORD", SECRET)
    refresh_secrets()
    assert scrub(SECRET) == MASK


def test_key_shaped_text_is_masked_with_unusual_letters() -> None:
    # re.IGNORECASE matches U+017F (long s) and U+212A (Kelvin sign) to s and k
    assert scrub("pa\u017fsword=hunter22 ok") == "pa\u017fsword=*** ok"
    assert scrub("api_\u212aey: abcdefgh") == "api_\u212aey:***"
    assert scrub("PASSWORD = 'hunter22'") == "PASSWORD =***'"
    assert scrub("no secrets here, 12 tokens") == "no secrets here, 12 tokens"


def test_the_word_precheck_never_misses_an_ignorecase_match() -> None:
    # scrub skips the full regex when the case-folded text holds none of _SECRET_WORDS:
    # every character that re.IGNORECASE matches to one of their letters must fold to it
    letters = "".join(sorted(set("".join(redact._SECRET_WORDS))))
    pattern = re.compile(f"[{letters}]", re.IGNORECASE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if pattern.fullmatch(char):
            assert char.casefold() in letters, hex(code)
