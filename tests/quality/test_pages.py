"""Pages as on-call reads them (pure): first on the page, kinds, calibration error."""

from __future__ import annotations

import pytest

from quality.metrics import Outcome
from quality.pages import Page, calibration_error, from_outcome, reliability, score
from quality.transfer import false_excess


def outcome(
    kind: str,
    expected: str | None,
    docs: tuple[str, ...],
    *,
    status: str = "matched",
    leads: tuple[str, ...] = (),
    scores: tuple[float, ...] = (0.9,),
    left_out: str | None = None,
) -> Outcome:
    return Outcome(
        id=f"{kind}-{expected}-{docs}",
        kind=kind,
        split="dev",
        expected=expected,
        status=status,  # type: ignore[arg-type]
        tier="global",
        docs=docs,
        scores=scores,
        top=docs[0] if status == "matched" and docs else None,
        leads=leads,
        left_out=left_out,
    )


class TestFromOutcome:
    def test_a_lead_that_is_the_first_runbook_is_shown(self) -> None:
        """A no-match page still names its first runbook when it is the first lead."""
        page = from_outcome(
            outcome(
                "paraphrase",
                "a.md",
                ("a.md", "b.md"),
                status="no_match",
                leads=("a.md",),
                scores=(0.2, 0.1),
            )
        )
        assert (page.matched, page.shown, page.probability) == (False, True, 0.2)
        hidden = from_outcome(outcome("paraphrase", "a.md", ("a.md",), status="no_match"))
        assert not hidden.shown

    def test_nothing_found_has_no_probability(self) -> None:
        page = from_outcome(outcome("noise", None, (), status="no_match", scores=()))
        assert page.probability is None and not page.shown


class TestScore:
    def test_kinds_and_left_out_twins_are_scored_apart(self) -> None:
        """Renamed and reworded alerts, near misses, noise and left-out twins each get their
        own share; false matches count wrong runbooks over matched case pages only."""
        shown = [
            from_outcome(outcome("paraphrase", "a.md", ("a.md",))),
            from_outcome(outcome("paraphrase_rewritten", "b.md", ("c.md",))),
            from_outcome(outcome("near_miss", None, ("d.md",))),
            from_outcome(outcome("noise", None, ("e.md",), status="no_match")),
            from_outcome(outcome("exact_name", None, ("f.md",), left_out="f2.md")),
        ]
        got = score(shown)
        assert (got.positives, got.right, got.renamed, got.reworded) == (2, 0.5, 1.0, 0.0)
        assert got.false_match == pytest.approx(2 / 3)
        assert (got.near_miss, got.noise, got.left_out) == (0.0, 1.0, 0.0)


class TestCalibration:
    def test_a_calibrated_set_has_no_error_and_an_overconfident_one_has(self) -> None:
        right = [Page(outcome("exact", "a.md", ("a.md",)), 1.0, True, True)] * 4
        wrong = [Page(outcome("near_miss", None, ("a.md",)), 0.0, False, False)] * 4
        assert calibration_error(right + wrong) == pytest.approx(0.0)
        loud = [Page(outcome("near_miss", None, ("a.md",)), 0.8, True, True)] * 4
        assert calibration_error(loud) == pytest.approx(0.8)
        ((mean, share, count),) = reliability(loud)
        assert (round(mean, 6), share, count) == (0.8, 0.0, 4)

    def test_no_probability_no_error(self) -> None:
        assert calibration_error([]) is None


class TestBarRule:
    def test_one_page_of_slack_on_false_matches(self) -> None:
        """quality.transfer's bar rule allows 0.05 of matched answers plus one page."""
        right = Page(outcome("exact", "a.md", ("a.md",)), 0.9, True, True)
        wrong = Page(outcome("near_miss", None, ("b.md",)), 0.9, True, True)
        assert false_excess([right] * 19 + [wrong]) <= 0
        assert false_excess([right] * 18 + [wrong] * 2) <= 0
        assert false_excess([right] * 17 + [wrong] * 3) > 0
        assert false_excess([]) == 0.0
