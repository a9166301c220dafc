"""The page once someone acknowledged it: who and when, one line under the header."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from enricher.alert import Acknowledgement, Alert
from enricher.result import SearchResult
from enricher.slack.acknowledged import BLOCK_ID, acknowledged_line, render_acknowledged_update
from enricher.slack.render import BLOCKS_JSON_MAX, message_size, render_message

NOW = datetime(2026, 11, 30, 3, 20, tzinfo=UTC)
AT = datetime(2026, 11, 30, 3, 12, 40, tzinfo=UTC)
ALERT = Alert(
    source="pagerduty",
    status="firing",
    alert_name="PostgresReplicationLag",
    service="postgres",
    severity="critical",
    summary="Replica orders-db-2 is 84s behind",
    description="",
    group_key="Q1ABC",
    event_type="incident.acknowledged",
    acknowledged=Acknowledgement(by="Jane Doe", at=AT),
)


def ack_lines(blocks: list[dict[str, object]]) -> list[str]:
    return [json.dumps(b) for b in blocks if b.get("block_id") == BLOCK_ID]


class TestLine:
    @pytest.mark.parametrize(
        ("ack", "line"),
        [
            (Acknowledgement("Jane Doe", AT), "👀 Acknowledged by Jane Doe at 03:12 UTC"),
            (Acknowledgement(None, AT), "👀 Acknowledged at 03:12 UTC"),
            (Acknowledgement("Jane Doe", None), "👀 Acknowledged by Jane Doe at 03:20 UTC"),
            (
                Acknowledgement("Jane", datetime(2026, 11, 29, 23, 5, tzinfo=UTC)),
                "👀 Acknowledged by Jane at Nov 29 23:05 UTC",
            ),
        ],
    )
    def test_who_and_when(self, ack: Acknowledgement, line: str) -> None:
        """Who when named; when from the event, else the time of rendering; the day when
        it is not the page's."""
        assert acknowledged_line(replace(ALERT, acknowledged=ack), now=NOW) == line

    def test_the_name_is_escaped_and_defanged(self) -> None:
        """The agent's name is sender text: a mention or markup in it is neutralized."""
        line = acknowledged_line(
            replace(ALERT, acknowledged=Acknowledgement("<!channel> & <@U1>", AT)), now=NOW
        )
        assert "<!channel>" not in line and "<@U1>" not in line and "&amp;" in line


class TestUpdate:
    def test_the_line_goes_under_the_header_once(self) -> None:
        """The page keeps everything it showed, still FIRING, with the line under its
        header; a later acknowledgement replaces the line instead of adding one."""
        page = render_message(ALERT, SearchResult("no_match", None), now=NOW)
        first = render_acknowledged_update(ALERT, page, now=NOW)
        assert first.blocks[0] == page.blocks[0]
        assert first.blocks[1]["block_id"] == BLOCK_ID
        assert first.blocks[2:] == page.blocks[1:]
        assert first.attachments == page.attachments
        later = replace(ALERT, acknowledged=Acknowledgement("Sam", AT.replace(minute=15)))
        second = render_acknowledged_update(later, first, now=NOW)
        assert len(ack_lines(second.blocks)) == 1
        assert "Sam at 03:15 UTC" in ack_lines(second.blocks)[0]

    def test_a_full_page_stays_within_slack_limits(self) -> None:
        """A page at the size limit drops its last cards to make room for the line."""
        page = render_message(ALERT, SearchResult("no_match", None), now=NOW)

        def card(text: str) -> dict[str, object]:
            return {"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}

        cards = [*page.attachments, card("")]
        room = BLOCKS_JSON_MAX - message_size(page.blocks, cards) - 10
        full = replace(page, attachments=[*page.attachments, card("x" * room)])
        assert BLOCKS_JSON_MAX - 20 < message_size(full.blocks, full.attachments) <= BLOCKS_JSON_MAX
        updated = render_acknowledged_update(ALERT, full, now=NOW)
        assert message_size(updated.blocks, updated.attachments) <= BLOCKS_JSON_MAX
        assert ack_lines(updated.blocks)
