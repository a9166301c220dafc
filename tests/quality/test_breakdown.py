"""Where pages go wrong (pure): each page's place, the counts and the table."""

from __future__ import annotations

from collections import Counter

from quality.breakdown import breakdown, row, table, where
from quality.metrics import Outcome
from quality.pages import Page


def page(
    expected: str | None,
    docs: tuple[str, ...],
    matched: bool,
    *,
    kind: str = "renamed",
    left_out: str | None = None,
) -> Page:
    outcome = Outcome(
        id=f"{kind}-{expected}-{docs}-{left_out}",
        kind=kind,
        split="dev",
        expected=expected,
        status="matched" if matched else "no_match",
        tier="global",
        docs=docs,
        scores=tuple(0.5 for _ in docs),
        left_out=left_out,
    )
    return Page(outcome, 0.5 if docs else None, matched, bool(docs))


class TestWhere:
    def test_an_alert_with_a_runbook_ends_in_one_of_five_places(self) -> None:
        assert where(page("a.md", ("a.md", "b.md"), True)) == "right"
        assert where(page("a.md", ("a.md", "b.md"), False)) == "unsure"
        assert where(page("a.md", ("b.md", "a.md"), False)) == "below"
        assert where(page("a.md", ("b.md", "c.md"), False)) == "absent"
        assert where(page("a.md", ("b.md", "a.md"), True)) == "wrong"

    def test_an_alert_without_one_is_quiet_or_matched(self) -> None:
        """A left-out twin is an alert without a runbook, whatever its case expected."""
        assert where(page(None, ("b.md",), True, left_out="a.md")) == "matched"
        assert where(page(None, ("b.md",), False, kind="noise")) == "quiet"


class TestCounts:
    def test_the_kinds_without_a_runbook_are_counted_apart(self) -> None:
        shown = [
            page("a.md", ("a.md",), True),
            page("a.md", ("a.md",), False),
            page(None, ("a.md",), True, left_out="x.md"),
            page(None, ("a.md",), False, kind="near_miss"),
            page(None, ("a.md",), True, kind="noise"),
        ]
        assert breakdown(shown) == Counter(
            {
                "right": 1,
                "unsure": 1,
                "left-out matched": 1,
                "near miss quiet": 1,
                "noise matched": 1,
            }
        )

    def test_the_table_gives_each_place_its_share_of_the_positives(self) -> None:
        counts = Counter({"right": 3, "unsure": 1, "left-out matched": 2, "left-out quiet": 6})
        line = table([("golden", counts)]).splitlines()[1]
        assert "3 (0.75)" in line
        assert "1 (0.25)" in line
        assert "2 of 8 matched" in line
        assert "0 of 0 matched" in line

    def test_a_failed_row_names_the_runbook_a_left_out_twin_lost(self) -> None:
        twin = row("golden", page(None, ("b.md", "c.md"), True, left_out="a.md"))
        assert twin["where"] == "matched"
        assert twin["expected"] == "a.md"
        assert twin["left_out"] is True
        assert twin["first"] == ["b.md", "c.md"]
