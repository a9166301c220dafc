"""A search result as a PagerDuty note: what it holds, when there is one, and its bound."""

from __future__ import annotations

import pytest

from enricher.notes.content import NOTE_MAX, SIGNATURE, render_note
from enricher.result import Match, SearchResult, Section

BASE = "https://git.example.com/ops/runbooks/blob/main"


def match(**extra: object) -> Match:
    values: dict[str, object] = {
        "doc_id": "kafka/KafkaConsumerLagHigh.md",
        "title": "Kafka consumer lag",
        "section": "Mitigation",
        "source": "runbooks",
        "path": "kafka/KafkaConsumerLagHigh.md",
        "score": 0.834,
        "stale": False,
        "age_days": 3,
        "text": "1. Check lag per partition.\n\n```\nkafka-consumer-groups --describe\n```\n"
        "2. Scale the consumers.",
        "anchor": "mitigation",
        "actionable": True,
        **extra,
    }
    return Match(**values)  # type: ignore[arg-type]


MATCHED = SearchResult("matched", "alert_name+service", matches=(match(),))
LEADS = SearchResult(
    "no_match", "global", leads=(match(score=0.41, title="Disk full"), match(score=0.3))
)


class TestRenderNote:
    def test_matched_note_holds_title_section_link_score_and_steps(self) -> None:
        note = render_note(MATCHED, mode="matched", base_url=BASE, ref="abc123")
        assert note == (
            "Runbook: Kafka consumer lag › Mitigation\n"
            f"{BASE}/kafka/KafkaConsumerLagHigh.md#mitigation\n"
            "Match 83%\n"
            "First steps:\n"
            "1. Check lag per partition.\n"
            "kafka-consumer-groups --describe\n"
            "2. Scale the consumers.\n"
            f"{SIGNATURE}abc123"
        )

    def test_a_match_that_is_not_steps_quotes_its_first_actionable_section(self) -> None:
        steps = Section("Diagnosis", "diagnosis", "Look at the dashboard.")
        steps_match = match(actionable=False, steps=steps)
        result = SearchResult("matched", "alert_name", matches=(steps_match,))
        note = render_note(result, mode="matched", base_url=BASE, ref="r")
        assert note is not None
        assert "First steps (Diagnosis):\nLook at the dashboard." in note

    @pytest.mark.parametrize(
        ("result", "mode", "noted"),
        [
            (MATCHED, "off", False),
            (LEADS, "matched", False),
            (LEADS, "all", True),
            (SearchResult("unavailable", None, reason="qdrant down"), "all", False),
            (SearchResult("no_match", None), "all", False),
        ],
    )
    def test_when_a_note_is_owed(self, result: SearchResult, mode: str, noted: bool) -> None:
        note = render_note(result, mode=mode, base_url=BASE, ref="r")  # type: ignore[arg-type]
        assert (note is not None) == noted

    def test_no_match_note_names_the_leads_as_unconfirmed(self) -> None:
        note = render_note(LEADS, mode="all", base_url=None, ref="r")
        assert note is not None
        assert note.splitlines()[:3] == [
            "No confident runbook match. Closest leads, unconfirmed:",
            "• Disk full › Mitigation (match 41%)",
            "• Kafka consumer lag › Mitigation (match 30%)",
        ]

    def test_a_huge_runbook_stays_within_the_note_bound_and_keeps_its_ref(self) -> None:
        huge = match(text="step " * 400_000, title="t" * 100_000)
        note = render_note(SearchResult("matched", "global", matches=(huge,)), mode="matched",
                           base_url=BASE, ref="abc123")
        assert note is not None
        assert len(note) <= NOTE_MAX
        assert note.endswith(f"{SIGNATURE}abc123")

    def test_secrets_in_the_runbook_are_redacted(self) -> None:
        leaky = match(text="Run: curl -H 'Authorization: Bearer sk_live_abcdefghijklmnop1234'")
        note = render_note(SearchResult("matched", "global", matches=(leaky,)), mode="matched",
                           base_url=BASE, ref="r")
        assert note is not None
        assert "sk_live_abcdefghijklmnop1234" not in note

    def test_a_javascript_link_is_not_shown(self) -> None:
        bad = match(url="javascript:alert(1)", path="")
        note = render_note(SearchResult("matched", "global", matches=(bad,)), mode="matched",
                           base_url=None, ref="r")
        assert note is not None and "javascript" not in note
