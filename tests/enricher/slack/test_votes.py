"""Feedback buttons on the cards, and the votes line under them (pure)."""

from __future__ import annotations

import json
from typing import Any

from enricher.result import Match, SearchResult
from enricher.slack.buttons import ACTIONS, ButtonValue, doc_tag, feedback_actions
from enricher.slack.render import render_message
from enricher.slack.votes import PageVote, mention, with_votes
from tests.enricher.slack.test_render import make_alert

ALERT = make_alert(alert_name="PGReplicaBehind")


def match(doc: str, **changes: Any) -> Match:
    values: dict[str, Any] = {
        "doc_id": doc,
        "title": "Postgres replication lag",
        "section": "Mitigation",
        "source": "golden",
        "path": doc.split(":", 1)[-1],
        "score": 0.8,
        "stale": False,
        "age_days": 3,
        "text": "Check the replica.",
        "revision": "abc123",
    }
    return Match(**{**values, **changes})


def actions_of(card: dict[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = card["blocks"]
    (block,) = [b for b in blocks if b["type"] == "actions"]
    return block


class TestButtons:
    def test_every_match_and_lead_card_gets_both_buttons(self) -> None:
        matched = SearchResult("matched", "global", matches=(match("g:a.md"), match("g:b.md")))
        no_match = SearchResult("no_match", "global", leads=(match("g:c.md"),))
        for result, cards in ((matched, 2), (no_match, 1)):
            message = render_message(ALERT, result)
            voting = [
                c for c in message.attachments if any(b["type"] == "actions" for b in c["blocks"])
            ]
            assert len(voting) == cards
            for card in voting:
                actions = actions_of(card)
                assert [e["action_id"] for e in actions["elements"]] == list(ACTIONS)

    def test_the_value_names_the_runbook(self) -> None:
        block = feedback_actions(match("golden:postgres/<!here>&.md", revision="r" * 300))
        assert block is not None
        value = block["elements"][0]["value"]
        assert "<" not in value and "&" not in value
        decoded = ButtonValue.decode(value)
        assert decoded is not None
        assert decoded.doc_id == "golden:postgres/<!here>&.md"
        assert decoded.revision == "r" * 100

    def test_no_buttons_when_the_identity_does_not_fit(self) -> None:
        assert feedback_actions(match("g:" + "x" * 600)) is None
        assert feedback_actions(match("")) is None

    def test_no_buttons_on_notes(self) -> None:
        """Search unavailable: nothing to vote on."""
        message = render_message(ALERT, SearchResult("unavailable", None, reason="down"))
        assert "actions" not in json.dumps(message.attachments)


class TestVotesLine:
    def test_voters_appear_under_their_runbook(self) -> None:
        result = SearchResult("matched", "global", matches=(match("g:a.md"), match("g:b.md")))
        message = render_message(ALERT, result)
        votes = [
            PageVote("U01ANA", "g:a.md", "right"),
            PageVote("U02BOB", "g:a.md", "wrong"),
            PageVote("U03CAR", "g:b.md", "wrong"),
        ]
        updated = with_votes(message, votes)
        first, second = (c["blocks"] for c in updated.attachments)
        lines = [b for b in first if b.get("block_id", "").startswith("rbe_votes:")]
        assert [e["text"] for e in lines[0]["elements"]] == [
            "✔ confirmed by <@U01ANA>",
            "✘ marked wrong by <@U02BOB>",
        ]
        assert lines[0]["block_id"] == "rbe_votes:" + doc_tag("g:a.md")
        assert "✘ marked wrong by <@U03CAR>" in json.dumps(second, ensure_ascii=False)

    def test_rewriting_replaces_earlier_lines(self) -> None:
        """Idempotent: a changed vote replaces the line, and no votes removes it."""
        message = render_message(
            ALERT, SearchResult("matched", "global", matches=(match("g:a.md"),))
        )
        once = with_votes(message, [PageVote("U01ANA", "g:a.md", "right")])
        changed = with_votes(once, [PageVote("U01ANA", "g:a.md", "wrong")])
        text = json.dumps(changed.attachments, ensure_ascii=False)
        assert "marked wrong by <@U01ANA>" in text and "confirmed" not in text
        assert with_votes(changed, []) == message
        assert with_votes(once, [PageVote("U01ANA", "g:a.md", "right")]) == once

    def test_many_voters_are_counted(self) -> None:
        message = render_message(
            ALERT, SearchResult("matched", "global", matches=(match("g:a.md"),))
        )
        votes = [PageVote(f"U{i:03d}", "g:a.md", "right") for i in range(8)]
        assert "and 3 more" in json.dumps(with_votes(message, votes).attachments)


def test_only_user_ids_become_mentions() -> None:
    """A user id is mentioned as Slack writes it; anything else is inert text."""
    assert mention("U0123ABC") == "<@U0123ABC>"
    assert mention("W0123ABC") == "<@W0123ABC>"
    assert "<" not in mention("<!channel>")
    assert "<" not in mention("U1> <!here")
