"""How many firing alerts joined a group between two notifications (pure)."""

from __future__ import annotations

import pytest

from enricher.pipeline.processor import joined


@pytest.mark.parametrize(
    ("before", "after", "count"),
    [
        (("a", "b"), ("a", "b", "c"), 1),
        (("a", "b"), ("a",), 0),
        # Past the tracked count the lists end in `#<count>:<digest>`: the counts decide.
        (("a", "#40:x"), ("a", "#43:y"), 3),
        # A sender's fingerprint that merely starts with "#" is no count (fuzz-found crash).
        (("#ì@2026-11-28T03",), ("#ì@2026-11-28T03", "#ü@2026-11-28T04"), 1),
        (("#ì@x",), ("#é@y",), 0),
    ],
)
def test_joined(before: tuple[str, ...], after: tuple[str, ...], count: int) -> None:
    assert joined(before, after) == count
