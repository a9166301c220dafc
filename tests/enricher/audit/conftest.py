"""Fixtures of the audit tests: logging put back after each CLI run, and a host serving the
golden index."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from scripts.index_copy import copy_index
from tests.conftest import MODELS_DIR


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The CLIs configure logging to print to this test's captured stderr, which is closed
    after it: put the defaults back, or the next test's logging writes to a closed file."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture()
def served(
    tmp_path: Path, golden_index: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The environment of a host serving the golden index."""
    qdrant = tmp_path / "qdrant"
    copy_index(golden_index, qdrant)
    monkeypatch.setenv("QDRANT_PATH", str(qdrant))
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("MODELS_DIR", str(MODELS_DIR))
    return qdrant


