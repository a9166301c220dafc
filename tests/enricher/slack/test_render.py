"""Block Kit rendering: content per search status, resolve updates, and Slack's limits."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from enricher.alert import Alert, Source
from enricher.result import Match, SearchResult, Section
from enricher.slack.cards import COLORS, LEADS_TEXT, LIKELY_TEXT, NO_STEPS_TEXT
from enricher.slack.render import (
    NO_MATCH_TEXT,
    UNAVAILABLE_TEXT,
    SlackMessage,
    render_escalation,
    render_message,
    render_resolved_update,
    render_thread_reply,
)
from enricher.sources import Parsed, parse

NOW = datetime(2024, 5, 4, 14, 5, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BASE = "https://git.example.com/ops/runbooks/blob/main"


def assert_block_kit_limits(message: SlackMessage) -> None:
    """Slack's Block Kit limits (DESIGN §2), attachments counted with the top-level blocks,
    plus: no live mention anywhere, and each card's first section within Slack's fold."""
    blocks = all_blocks(message)
    assert 0 < len(blocks) <= 50
    assert len(json.dumps(message.blocks)) + len(json.dumps(message.attachments)) <= 12_000
    for card in message.attachments:
        fold = re.sub(r"<[^<>|]*\|([^<>]*)>", r"\1", card["blocks"][0]["text"]["text"])
        assert len(fold) <= 700 and fold.count("\n") < 5, fold
        assert re.fullmatch(r"#[0-9A-F]{6}", card["color"])
    for block in blocks:
        kind = block["type"]
        if kind == "header":
            assert block["text"]["type"] == "plain_text"
            assert 0 < len(block["text"]["text"]) <= 150
        elif kind == "section":
            assert 0 < len(block["text"]["text"]) <= 3000
        elif kind == "context":
            assert 0 < len(block["elements"]) <= 10
            assert all(e["text"] for e in block["elements"])
    dumped = json.dumps(blocks, ensure_ascii=False)
    assert not re.search(r"<[!@#]", dumped), "unescaped Slack mention"
    assert not re.search(r"(?<![\w@])@(channel|here|everyone)\b", dumped, re.IGNORECASE)


def all_blocks(message: SlackMessage) -> list[dict[str, Any]]:
    """Top-level blocks, then the blocks of each attachment."""
    return message.blocks + [b for a in message.attachments for b in a["blocks"]]


def texts(message: SlackMessage) -> str:
    """All visible text of the blocks and attachments, one block per line."""
    out: list[str] = []
    for block in all_blocks(message):
        if "text" in block:
            out.append(block["text"]["text"])
        for element in block.get("elements", []):
            text = element["text"]  # a button's label is a text object
            out.append(text if isinstance(text, str) else text["text"])
    return "\n".join(out)


def make_alert(**changes: Any) -> Alert:
    alert = Alert(
        source="alertmanager",
        status="firing",
        alert_name="PostgresReplicationLag",
        service="postgres",
        severity="critical",
        summary="Replica db-2 is 300s behind",
        description="Replication lag on **db-2** exceeds 5 minutes.",
        labels={"namespace": "data", "cluster": "prod-eu", "instance": "db-2:9187"},
        group_key='{}:{alertname="PostgresReplicationLag"}',
        starts_at=NOW - timedelta(minutes=42),
        link="https://prometheus.example.com/graph?g0.expr=pg_lag",
    )
    return replace(alert, **changes)


def make_match(i: int = 0, **changes: Any) -> Match:
    match = Match(
        doc_id=f"runbooks:postgres/Doc{i}.md",
        title=f"Postgres replication lag {i}",
        section="Mitigation › Promote replica",
        source="runbooks",
        path=f"postgres/Doc{i}.md",
        score=0.834 - i / 10,
        stale=False,
        age_days=12,
        text="1. Check `pg_stat_replication`.\n2. Restart the replica.",
        revision=f"{i}abcdef0123456789",
        anchor="promote-replica",
    )
    return replace(match, **changes)


def matched(*matches: Match) -> SearchResult:
    return SearchResult(status="matched", tier="alert_name+service", matches=matches)


class TestFiringMatched:
    def test_header(self) -> None:
        """The header names status, alert and severity in plain text."""
        msg = render_message(make_alert(), matched(make_match()), now=NOW)
        assert msg.blocks[0]["type"] == "header"
        assert msg.blocks[0]["text"]["text"] == "🔥 FIRING · PostgresReplicationLag · critical"

    def test_match_content(self) -> None:
        """Each match shows linked title › section, text, path, rev, readable score."""
        msg = render_message(
            make_alert(), matched(make_match(0)), runbook_base_url=BASE + "/", now=NOW
        )
        body = texts(msg)
        url = f"{BASE}/postgres/Doc0.md#promote-replica"
        assert f"*<{url}|Postgres replication lag 0> › Mitigation › Promote replica*" in body
        assert "Restart the replica." in body
        assert "`postgres/Doc0.md`" in body
        assert "rev 0abcdef0" in body
        assert "match 83%" in body
        assert "stale" not in body
        assert_block_kit_limits(msg)

    def test_three_matches_in_rank_order_as_cards(self) -> None:
        """Up to three matches, best first, each its own attachment card."""
        result = matched(*(make_match(i) for i in range(5)))
        msg = render_message(make_alert(), result, now=NOW)
        body = texts(msg)
        positions = [body.index(f"Postgres replication lag {i}") for i in range(3)]
        assert positions == sorted(positions)
        assert "Postgres replication lag 3" not in body
        assert len(msg.attachments) == 3
        assert re.findall(r"match \d+%", body) == ["match 83%", "match 73%", "match 63%"]

    def test_stale_warning(self) -> None:
        """A stale match says how many days ago it was reviewed."""
        result = matched(make_match(stale=True, age_days=400))
        body = texts(render_message(make_alert(), result, now=NOW))
        assert "⚠️ stale: last reviewed 400 days ago" in body

    def test_metric_evidence_is_named(self) -> None:
        """A runbook that alone quotes the rule's metrics says so (two at most); others don't."""
        quoting = make_match(0, quoted_metrics=("pg_replication_lag_seconds", "b_total", "c"))
        body = texts(render_message(make_alert(), matched(quoting, make_match(1)), now=NOW))
        line = (
            "📈 the only runbook quoting `pg_replication_lag_seconds`, `b_total`"
            " from the alert rule"
        )
        assert body.count("📈") == 1
        assert line in body

    def test_title_not_linked_without_http_base(self) -> None:
        """Titles are links only for an http(s) runbook_base_url."""
        for base in (None, "javascript:alert(1)//", "file:///srv/runbooks"):
            body = texts(render_message(make_alert(), matched(make_match()), runbook_base_url=base))
            assert "*Postgres replication lag 0 › Mitigation › Promote replica*" in body

    def test_empty_match_fields(self) -> None:
        """A match without path, source, revision or text still renders valid blocks."""
        bare = make_match(path="", source="", revision="", text="", section="", anchor="")
        msg = render_message(make_alert(), matched(bare), runbook_base_url=BASE)
        body = texts(msg)
        assert "*Postgres replication lag 0*" in body and "📄" not in body
        assert_block_kit_limits(msg)

    def test_runbook_url_first(self) -> None:
        """The alert's own runbook_url comes before any search match."""
        alert = make_alert(runbook_url="https://wiki.example.com/pg-lag")
        msg = render_message(alert, matched(make_match()), now=NOW)
        body = texts(msg)
        line = "📘 Runbook linked by the alert: <https://wiki.example.com/pg-lag|https://wiki.example.com/pg-lag>"
        assert line in body
        assert body.index(line) < body.index("Postgres replication lag 0")

    def test_runbook_url_non_http_not_linked(self) -> None:
        """A javascript: runbook_url is shown as text, not a link."""
        body = texts(render_message(make_alert(runbook_url="javascript:alert(1)"), matched()))
        assert "Runbook linked by the alert: javascript:alert(1)" in body

    def test_summary_description_and_group(self) -> None:
        """Summary is bold, description converted, group size and truncation stated."""
        alert = make_alert(alert_count=12, truncated=7)
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        assert "*Replica db-2 is 300s behind*" in body
        assert "Replication lag on *db-2* exceeds 5 minutes." in body
        assert "12 alerts in this group (7 not shown by Alertmanager)" in body

    def test_context_labels_source_and_link(self) -> None:
        """The alert context carries source, alert link, start time and key labels."""
        msg = render_message(make_alert(), matched(make_match()), now=NOW)
        context = msg.blocks[2]
        assert context["type"] == "context"
        elements = [e["text"] for e in context["elements"]]
        assert elements[0] == (
            "*Alertmanager* · <https://prometheus.example.com/graph?g0.expr=pg_lag|open alert>"
        )
        assert "🕒 since 13:23 UTC" in elements
        for label in ("*service:* `postgres`", "*severity:* `critical`", "*namespace:* `data`"):
            assert label in elements

    def test_context_capped_at_ten(self) -> None:
        """Many labels never exceed ten context elements."""
        labels = {
            k: "v"
            for k in (
                "namespace",
                "cluster",
                "env",
                "environment",
                "region",
                "instance",
                "pod",
                "job",
                "container",
                "deployment",
            )
        }
        msg = render_message(make_alert(labels=labels), matched(make_match()), now=NOW)
        assert len(msg.blocks[2]["elements"]) == 10
        assert_block_kit_limits(msg)

    def test_pagerduty_non_http_link_dropped(self) -> None:
        """A non-http alert link is not rendered as a link."""
        alert = make_alert(source="pagerduty", link="javascript:alert(1)")
        first = render_message(alert, matched(make_match())).blocks[2]["elements"][0]["text"]
        assert first == "*PagerDuty*"

    def test_fallback_text(self) -> None:
        """The notification text is present, escaped, short, and names the top runbook."""
        alert = make_alert(summary="lag <!channel> & more")
        msg = render_message(alert, matched(make_match()), now=NOW)
        assert msg.text.startswith(
            "🔥 FIRING: PostgresReplicationLag (critical) — lag &lt;!channel&gt; &amp; more"
        )
        assert "Runbook: Postgres replication lag 0 › Mitigation › Promote replica" in msg.text
        assert len(msg.text) <= 3000

    def test_fallback_names_the_section_the_card_leads_with(self) -> None:
        """With steps the card leads with them, so the push text and the card's own
        fallback name the steps' section, not the best-matching one."""
        match = make_match(section="Background", steps=STEPS)
        msg = render_message(make_alert(), matched(match), now=NOW)
        assert msg.text.endswith("\nRunbook: Postgres replication lag 0 › Mitigation › Scale up")
        fallback = msg.attachments[0]["fallback"]
        assert fallback == "Runbook: Postgres replication lag 0 › Mitigation › Scale up (match 83%)"
        assert "Background" not in msg.text + fallback

    def test_runbook_tail_survives_a_huge_summary(self) -> None:
        """A 1 MiB summary is cut to what the notification shows; the runbook line stays."""
        msg = render_message(make_alert(summary="a." * (1 << 19)), matched(make_match()), now=NOW)
        assert len(msg.text) <= 3000
        tail = "\nRunbook: Postgres replication lag 0 › Mitigation › Promote replica"
        assert msg.text.endswith(tail)


class TestNoMatchAndUnavailable:
    def test_no_match(self) -> None:
        """No match says so and suggests where a runbook would go."""
        result = SearchResult(status="no_match", tier="global")
        body = texts(render_message(make_alert(), result, now=NOW))
        assert NO_MATCH_TEXT in body
        assert "`postgres/PostgresReplicationLag.md`" in body
        assert "unavailable" not in body
        assert LEADS_TEXT not in body

    def test_no_match_names_its_leads_as_not_confident(self) -> None:
        """The no-match note comes first, then one grey card per lead, linked, with path
        and score, and without its text: the page does not read as a match."""
        leads = (make_match(0, score=0.58), make_match(1, score=0.52))
        result = SearchResult(status="no_match", tier="service", leads=leads)
        msg = render_message(make_alert(), result, runbook_base_url=BASE, now=NOW)
        body = texts(msg)
        assert body.index(NO_MATCH_TEXT) < body.index("_Add one at") < body.index(LEADS_TEXT)
        assert [a["color"] for a in msg.attachments] == [COLORS["none"]] * 3
        url = f"{BASE}/postgres/Doc1.md#promote-replica"
        assert f"*<{url}|Postgres replication lag 1> › Mitigation › Promote replica*" in body
        assert "`postgres/Doc0.md`" in body and "match 58%" in body
        assert "match 52%" in body
        assert "Restart the replica." not in body
        assert msg.text.endswith("No confident runbook match.")
        assert_block_kit_limits(msg)

    def test_a_likely_first_lead_says_so_with_what_to_do(self) -> None:
        """A likely first lead is named as likely with its probability and shows its
        steps; the next lead stays a plain lead, and nothing reads as a confident match."""
        steps = Section(section="Mitigation", anchor="mitigation", text="Restart the replica.")
        leads = (make_match(0, score=0.31, steps=steps), make_match(1, score=0.08))
        result = SearchResult(status="no_match", tier="global", leads=leads, likely=True)
        msg = render_message(make_alert(), result, runbook_base_url=BASE, now=NOW)
        body = texts(msg)
        assert body.index(NO_MATCH_TEXT) < body.index(LIKELY_TEXT) < body.index(LEADS_TEXT)
        assert f"{LIKELY_TEXT} (31%)." in body
        assert "Restart the replica." in body
        assert body.count(LEADS_TEXT) == 1 and "match 8%" in body
        assert [a["color"] for a in msg.attachments] == [COLORS["none"]] * 3
        assert msg.attachments[1]["fallback"].startswith("Likely runbook (31%, not confident)")
        assert_block_kit_limits(msg)

    def test_leads_are_plain_leads_when_none_is_likely(self) -> None:
        leads = (make_match(0, score=0.31, steps=STEPS),)
        result = SearchResult(status="no_match", tier="global", leads=leads)
        body = texts(render_message(make_alert(), result, now=NOW))
        assert LIKELY_TEXT not in body and LEADS_TEXT in body

    def test_leads_with_huge_titles_and_links_stay_within_limits(self) -> None:
        """Leads with huge titles and paths are cut, never mid-link, and stay in limits."""
        path = "postgres/" + "p" * 800 + ".md"
        leads = tuple(
            make_match(i, title="T" * 5000, section="S" * 5000, path=path) for i in range(3)
        )
        result = SearchResult(status="no_match", tier="global", leads=leads)
        msg = render_message(make_alert(), result, runbook_base_url=BASE, now=NOW)
        body = texts(msg)
        assert LEADS_TEXT in body
        shown = body.count("*<https://")
        assert 1 <= shown <= 3
        assert body.count("|" + "T" * 119 + "…>") == shown
        assert_block_kit_limits(msg)

    def test_unavailable(self) -> None:
        """Search down has its own wording, distinct from no match, with the reason."""
        result = SearchResult(status="unavailable", tier=None, reason="qdrant timeout")
        body = texts(render_message(make_alert(), result, now=NOW))
        assert UNAVAILABLE_TEXT in body
        assert "_Reason: qdrant timeout_" in body
        assert NO_MATCH_TEXT not in body

    def test_wordings_differ(self) -> None:
        """The two notes, and the fallback texts, are not the same."""
        no = render_message(make_alert(), SearchResult(status="no_match", tier=None))
        down = render_message(make_alert(), SearchResult(status="unavailable", tier=None))
        assert NO_MATCH_TEXT != UNAVAILABLE_TEXT
        assert no.text != down.text

    def test_matched_without_matches_is_no_match(self) -> None:
        """An empty "matched" result renders as no match."""
        body = texts(render_message(make_alert(), matched()))
        assert NO_MATCH_TEXT in body

    def test_runbook_url_still_first_when_search_down(self) -> None:
        """The alert's own runbook link does not depend on search."""
        alert = make_alert(runbook_url="https://wiki.example.com/pg")
        result = SearchResult(status="unavailable", tier=None)
        body = texts(render_message(alert, result))
        assert body.index("Runbook linked by the alert") < body.index(UNAVAILABLE_TEXT)


class TestTimes:
    """Times on the page: read against the page's own day, resolves at the alert's end."""

    @pytest.mark.parametrize(
        ("started", "shown"),
        [
            (NOW - timedelta(minutes=42), "🕒 since 13:23 UTC"),
            (NOW - timedelta(days=3, hours=10), "🕒 since May 1 04:05 UTC"),
            (datetime(2023, 12, 31, 23, 59, tzinfo=UTC), "🕒 since Dec 31 2023 23:59 UTC"),
        ],
    )
    def test_since_carries_a_date_from_another_day(self, started: datetime, shown: str) -> None:
        """`since 04:12 UTC` alone would read as today: another day adds its date, another
        year its year."""
        msg = render_message(make_alert(starts_at=started), matched(make_match()), now=NOW)
        assert shown in [e["text"] for e in msg.blocks[2]["elements"]]

    def test_resolve_time_is_the_alerts_end(self) -> None:
        """The resolve shows when the alert ended, not when the page was rendered (a group
        interval later), and the duration runs to that end."""
        ended = NOW - timedelta(minutes=4)
        alert = make_alert(status="resolved", starts_at=ended - timedelta(hours=1), ends_at=ended)
        assert "✅ Resolved at 14:01 UTC" in texts(render_message(alert, matched(), now=NOW))
        firing = render_message(make_alert(), matched(), now=NOW)
        update = render_resolved_update(alert, firing, now=NOW)
        assert update.blocks[1]["elements"][0]["text"] == "✅ Resolved at 14:01 UTC"
        assert render_thread_reply(alert, now=NOW) == "✅ Resolved at 14:01 UTC (after 1h 0m)"

    @pytest.mark.parametrize(
        ("source", "fixture", "rendered", "expected"),
        [
            # endsAt 01:05, earliest start 22:35 the day before
            (
                "alertmanager",
                "alertmanager/resolved_group.json",
                datetime(2024, 5, 14, 1, 9, tzinfo=UTC),
                "✅ Resolved at 01:05 UTC (after 2h 30m)",
            ),
            # occurred_at 09:40, created_at 09:12
            (
                "pagerduty",
                "pagerduty/incident_resolved.json",
                datetime(2024, 5, 14, 9, 45, tzinfo=UTC),
                "✅ Resolved at 09:40 UTC (after 28m)",
            ),
        ],
    )
    def test_recorded_resolves_use_the_senders_end_time(
        self, source: Source, fixture: str, rendered: datetime, expected: str
    ) -> None:
        """A recorded resolve (Alertmanager's endsAt, PagerDuty's occurred_at) gives the time
        and the duration, whenever the page is rendered."""
        parsed = parse(source, (FIXTURES / fixture).read_bytes())
        assert isinstance(parsed, Parsed)
        assert render_thread_reply(parsed.alert, now=rendered) == expected

    def test_resolve_on_a_later_day_is_dated(self) -> None:
        """A resolve rendered on another day than the alert ended carries its date."""
        alert = make_alert(status="resolved", ends_at=NOW - timedelta(days=1), starts_at=None)
        assert render_thread_reply(alert, now=NOW) == "✅ Resolved at May 3 14:05 UTC"


class TestResolved:
    def test_compact(self) -> None:
        """A resolved alert gets header, summary and context only."""
        msg = render_message(make_alert(status="resolved"), matched(make_match()), now=NOW)
        assert [b["type"] for b in msg.blocks] == ["header", "section", "context"]
        assert msg.blocks[0]["text"]["text"] == "✅ RESOLVED · PostgresReplicationLag · critical"
        assert "✅ Resolved at 14:05 UTC" in texts(msg)
        assert "Postgres replication lag" not in texts(msg)
        assert msg.text.startswith("✅ RESOLVED: PostgresReplicationLag")

    def test_update_keeps_runbook_context(self) -> None:
        """chat.update content: RESOLVED header, resolve time, original runbook blocks."""
        original = render_message(make_alert(), matched(make_match(0), make_match(1)), now=NOW)
        update = render_resolved_update(make_alert(status="resolved"), original, now=NOW)
        assert update.blocks[0]["text"]["text"].startswith("✅ RESOLVED")
        assert update.blocks[1]["elements"][0]["text"] == "✅ Resolved at 14:05 UTC"
        assert "Postgres replication lag 1" in texts(update)
        assert [b["type"] for b in update.blocks].count("header") == 1
        assert_block_kit_limits(update)

    def test_update_does_not_mutate_original(self) -> None:
        """The original message's blocks are copied, not changed."""
        original = render_message(make_alert(), matched(make_match()), now=NOW)
        before = json.dumps(original.blocks)
        render_resolved_update(make_alert(status="resolved"), original, now=NOW)
        assert json.dumps(original.blocks) == before

    def test_update_of_full_message_stays_within_limits(self) -> None:
        """A maximal original plus the resolve context still fits (last match dropped)."""
        huge = "text & <more> " * 2000
        result = matched(*(make_match(i, text=huge) for i in range(3)))
        original = render_message(make_alert(description=huge), result, now=NOW)
        update = render_resolved_update(make_alert(status="resolved"), original, now=NOW)
        assert_block_kit_limits(update)
        assert update.blocks[-1]["type"] != "divider"

    def test_update_without_original(self) -> None:
        """Without the original message, the compact resolved message is used."""
        update = render_resolved_update(make_alert(status="resolved"), None, now=NOW)
        assert [b["type"] for b in update.blocks] == ["header", "section", "context"]

    @pytest.mark.parametrize(
        ("started", "expected"),
        [
            (None, "✅ Resolved at 14:05 UTC"),
            (NOW - timedelta(minutes=7), "✅ Resolved at 14:05 UTC (after 7m)"),
            (NOW - timedelta(minutes=72), "✅ Resolved at 14:05 UTC (after 1h 12m)"),
        ],
    )
    def test_thread_reply(self, started: datetime | None, expected: str) -> None:
        """The thread reply states the resolve time and, when known, the duration."""
        alert = make_alert(status="resolved", starts_at=started)
        assert render_thread_reply(alert, now=NOW) == expected

    def test_naive_now_is_utc(self) -> None:
        """A naive `now` is read as UTC."""
        alert = make_alert(status="resolved", starts_at=None)
        assert (
            render_thread_reply(alert, now=NOW.replace(tzinfo=None)) == "✅ Resolved at 14:05 UTC"
        )


MENTIONS = "<!channel> <!here> <!everyone> <@U123> <!subteam^S1|ops> @channel @here @everyone"


def hostile_match(i: int, text: str) -> Match:
    return make_match(
        i,
        title=f"{MENTIONS} title " * 20,
        section="<b>sec</b> & " * 50,
        path=f"svc/{'<x>&' * 100}{i}.md",
        source="<!channel>",
        revision="<!here>&" * 4,
        text=text,
        anchor="<!channel>",
        stale=True,
        age_days=999,
    )


HOSTILE_TEXTS = {
    "mentions": (MENTIONS + "\n") * 200,
    "20k_section": ("Some words & <tags> here. " * 800)[:20_000],
    "10k_code": "Intro\n```\n" + "echo '<!channel> & <x>'\n" * 450 + "```\nOutro",
    "angle_amp": "<&>" * 7000,
    "one_long_line": "x" * 30_000,
    "astral": "🔥" * 5000,
    "secrets": "password=hunter2 postgres://a:b@c xoxb-123456789012-abcdef\n" * 300,
}


class TestHostileContent:
    @pytest.mark.parametrize("kind", sorted(HOSTILE_TEXTS))
    def test_all_limits_hold(self, kind: str) -> None:
        """Hostile runbook text in 60 matches and the alert itself still passes every limit."""
        text = HOSTILE_TEXTS[kind]
        alert = make_alert(
            alert_name=MENTIONS * 5,
            severity="<!channel>",
            summary=text[:5000],
            description=text,
            labels={k: MENTIONS * 3 for k in ("namespace", "cluster", "pod", "job", "region")},
            runbook_url="https://wiki.example.com/" + "a" * 5000,
            alert_count=500,
            truncated=450,
            link="https://x.example/" + "<!channel>" * 50,
        )
        result = matched(*(hostile_match(i, text) for i in range(60)))
        msg = render_message(alert, result, runbook_base_url=BASE, now=NOW)
        assert_block_kit_limits(msg)
        assert 0 < len(msg.text) <= 3000
        assert not re.search(r"<[!@#]", msg.text)
        assert "hunter2" not in json.dumps(msg.blocks) + msg.text
        assert msg.attachments, "runbook part must survive"

    def test_large_ascii_sections_keep_three_matches(self) -> None:
        """Three 20 kB plain sections are trimmed, not dropped."""
        text = ("Restart the service and check the logs. " * 50 + "\n") * 10
        msg = render_message(make_alert(), matched(*(make_match(i, text=text) for i in range(3))))
        assert_block_kit_limits(msg)
        assert len(msg.attachments) == 3
        sections = [b["text"]["text"] for b in all_blocks(msg) if b["type"] == "section"]
        assert all(len(s) <= 2500 + 200 for s in sections)
        assert sum(len(s) for s in sections) > 6000

    def test_resolved_hostile(self) -> None:
        """The compact resolved message also passes the limits with hostile fields."""
        alert = make_alert(
            status="resolved",
            alert_name=MENTIONS * 5,
            summary=MENTIONS * 100,
            labels={"pod": MENTIONS * 10},
        )
        msg = render_message(alert, matched(), now=NOW)
        assert_block_kit_limits(msg)
        assert render_resolved_update(alert, msg, now=NOW).blocks

    def test_blocks_are_json_serialisable(self) -> None:
        """Blocks are plain dicts that survive a JSON round trip unchanged."""
        msg = render_message(make_alert(), matched(make_match()), runbook_base_url=BASE, now=NOW)
        assert json.loads(json.dumps(msg.blocks)) == msg.blocks


STEPS = Section(
    section="Mitigation › Scale up",
    anchor="mitigation-scale-up",
    text=(
        "1. `kubectl scale deploy/api --replicas=6`\n2. Watch the error rate.\n"
        "3. Page the DB team."
    ),
)


class TestCards:
    @pytest.mark.parametrize(
        ("severity", "color"),
        [
            ("critical", "critical"),
            ("page", "critical"),
            ("warning", "warning"),
            ("info", "info"),
            ("P3", "critical"),
            (None, "critical"),
        ],
    )
    def test_match_color_follows_severity(self, severity: str | None, color: str) -> None:
        """A firing match card is red for critical, orange warning, blue info (others red)."""
        msg = render_message(make_alert(severity=severity), matched(make_match()), now=NOW)
        assert [a["color"] for a in msg.attachments] == [COLORS[color]]

    @pytest.mark.parametrize(
        "result",
        [SearchResult("no_match", "global"), SearchResult("unavailable", None, reason="down")],
        ids=["no-match", "unavailable"],
    )
    def test_not_confident_is_grey(self, result: SearchResult) -> None:
        """No confident match and search unavailable are grey cards, whatever the severity."""
        msg = render_message(make_alert(severity="critical"), result, now=NOW)
        assert {a["color"] for a in msg.attachments} == {COLORS["none"]}

    def test_header_and_summary_stay_top_level(self) -> None:
        """The alert is in the top-level blocks and the notification text; runbook in cards."""
        msg = render_message(make_alert(), matched(make_match()), now=NOW)
        assert [b["type"] for b in msg.blocks][:2] == ["header", "section"]
        assert "Replica db-2 is 300s behind" in msg.text
        assert "Postgres replication lag 0" not in json.dumps(msg.blocks)
        card = msg.attachments[0]
        assert card["fallback"].startswith("Runbook: Postgres replication lag 0")
        assert [b["type"] for b in card["blocks"]][:2] == ["section", "context"]

    def test_steps_lead_the_card_above_the_fold(self) -> None:
        """With steps, the card opens with the actionable section's heading and lines (within
        Slack's fold), then the source line, then the best-matching section."""
        match = make_match(steps=STEPS, text="Symptoms: lag grows.\n" * 40)
        msg = render_message(make_alert(), matched(match), runbook_base_url=BASE, now=NOW)
        fold = msg.attachments[0]["blocks"][0]["text"]["text"]
        assert "Mitigation › Scale up*" in fold
        assert f"{BASE}/postgres/Doc0.md#mitigation-scale-up" in fold
        assert "kubectl scale deploy/api --replicas=6" in fold
        assert "3. Page the DB team." in fold
        rest = texts(msg).split(fold, 1)[1]
        assert rest.index("match 83%") < rest.index("Mitigation › Promote replica")
        assert "Symptoms: lag grows." in rest
        assert_block_kit_limits(msg)

    def test_an_alert_section_of_a_long_page_links_its_own_anchor(self) -> None:
        """A match on one alert's section of a shared page links that section's heading and
        leads with that section's steps; stale warning and revision stay the page's."""
        steps = Section("How to fix", "how-to-fix-3", "Roll the leader back.")
        match = make_match(
            doc_id="runbooks:ops/platform.md#etcdnoleader",
            path="ops/platform.md",
            title="etcdNoLeader",
            section="",
            anchor="etcdnoleader",
            unit_anchor="etcdnoleader",
            steps=steps,
            stale=True,
            age_days=400,
        )
        msg = render_message(make_alert(), matched(match), runbook_base_url=BASE, now=NOW)
        blocks = msg.attachments[0]["blocks"]
        assert f"{BASE}/ops/platform.md#how-to-fix-3" in blocks[0]["text"]["text"]
        assert f"{BASE}/ops/platform.md#etcdnoleader" in texts(msg)
        assert "stale: last reviewed 400 days ago" in texts(msg)
        assert_block_kit_limits(msg)

    def test_a_section_with_nothing_to_do_says_so(self) -> None:
        """No steps are borrowed from elsewhere: the card says the section has none."""
        match = make_match(text="The leader changed three times in an hour.", no_steps=True)
        msg = render_message(make_alert(), matched(match), now=NOW)
        fold = msg.attachments[0]["blocks"][0]["text"]["text"]
        assert NO_STEPS_TEXT in fold and "The leader changed" in fold
        plain = render_message(make_alert(), matched(make_match()), now=NOW)
        assert NO_STEPS_TEXT not in texts(plain)

    def test_long_section_keeps_its_first_lines_above_the_fold(self) -> None:
        """Without steps the matched section's first lines fill the fold, the rest follows."""
        text = "\n".join(f"{i}. step number {i}" for i in range(1, 30))
        msg = render_message(make_alert(), matched(make_match(text=text)), now=NOW)
        blocks = msg.attachments[0]["blocks"]
        assert "1. step number 1" in blocks[0]["text"]["text"]
        assert "29. step number 29" not in blocks[0]["text"]["text"]
        assert "29. step number 29" in blocks[2]["text"]["text"]
        assert_block_kit_limits(msg)

    def test_resolve_update_turns_cards_green(self) -> None:
        """chat.update on resolve keeps the cards and turns every bar green."""
        firing = render_message(make_alert(), matched(make_match(0), make_match(1)), now=NOW)
        update = render_resolved_update(make_alert(status="resolved"), firing, now=NOW)
        assert [a["color"] for a in update.attachments] == [COLORS["resolved"]] * 2
        assert [a["color"] for a in firing.attachments] == [COLORS["critical"]] * 2
        assert_block_kit_limits(update)


class TestFiringNow:
    def test_summary_lists_the_first_targets_and_a_count(self) -> None:
        """A group names what is firing now: the first targets, and how many more."""
        alert = make_alert(
            alert_count=7,
            firing_count=7,
            targets=("namespace=payments pod=pay-1 (critical)", "namespace=shop pod=co-1"),
        )
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        assert (
            "*Firing now (7):* `namespace=payments pod=pay-1 (critical)`, "
            "`namespace=shop pod=co-1` and 5 more"
        ) in body

    def test_alerts_left_out_by_max_alerts_are_counted_as_firing(self) -> None:
        """`max_alerts: 100` with 150 firing: the body shows 100 and truncatedAlerts 50, all
        firing (Alertmanager drops resolved alerts before it cuts the list), so 150."""
        alert = make_alert(alert_count=150, firing_count=100, truncated=50, targets=("a=1",))
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        assert "*Firing now (150):* `a=1` and 149 more" in body
        reply = render_escalation(alert, severity_rose=False, joined=50)
        assert "*Firing now (150):*" in reply.splitlines()

    def test_left_out_alerts_of_unknown_status_make_a_floor(self) -> None:
        """When the body also shows resolved alerts, the left-out ones may be either: the
        count says "at least"."""
        alert = make_alert(alert_count=160, firing_count=90, truncated=50, targets=("a=1",))
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        assert "*Firing now (90+):* `a=1` and 89+ more" in body

    def test_recorded_truncated_group(self) -> None:
        """The recorded body with truncatedAlerts 4 counts its firing alerts and those 4."""
        raw = json.loads((FIXTURES / "alertmanager" / "truncated.json").read_text())
        parsed = parse("alertmanager", json.dumps(raw).encode())
        assert isinstance(parsed, Parsed)
        body = texts(render_message(parsed.alert, matched(make_match()), now=NOW))
        assert f"*Firing now ({len(raw['alerts']) + 4}):*" in body

    def test_a_group_too_large_to_read_whole_has_one_count(self) -> None:
        """10,000 alerts, the first 50 read in full: the page names five and says how many
        more there are, once ("and 9995 more"), never a second count of the unread ones."""
        targets = tuple(f"pod=p{n}" for n in range(5))
        alert = make_alert(alert_count=10_000, firing_count=10_000, targets=targets)
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        named = ", ".join(f"`{target}`" for target in targets)
        assert f"*Firing now (10000):* {named} and 9995 more" in body
        assert "_10000 alerts in this group_" in body
        assert "9950" not in body

    @pytest.mark.parametrize(
        ("rose", "joined", "head"),
        [
            (True, 1, "⬆️ *PostgresReplicationLag* is now *critical*"),
            (False, 2, "➕ *PostgresReplicationLag*: 2 more alerts firing"),
        ],
    )
    def test_escalation_reply(self, rose: bool, joined: int, head: str) -> None:
        """The escalation reply says what changed and lists what is firing now."""
        alert = make_alert(firing_count=3, targets=("pod=a (critical)", "pod=b (warning)"))
        text = render_escalation(alert, severity_rose=rose, joined=joined)
        assert text.splitlines() == [
            head,
            "*Firing now (3):*",
            "• `pod=a (critical)`",
            "• `pod=b (warning)`",
            "• and 1 more",
        ]

    def test_label_values_are_inert(self) -> None:
        """Slack formatting and bidi controls in label values do not render."""
        alert = make_alert(labels={"pod": "*bold* _it_ ~s~ `c` pod\u202egpj.exe"})
        body = texts(render_message(alert, matched(make_match()), now=NOW))
        assert "*pod:* `*bold* _it_ ~s~ ˋcˋ podgpj.exe`" in body
        assert "\u202e" not in body
