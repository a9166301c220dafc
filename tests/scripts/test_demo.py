"""`make demo` means the same on any date: the samples are sent with their times moved to the
moment of sending (scripts.demo.stamped), so none is too old for the service."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from enricher.sources import Ignored, Parsed, parse_body, refuse_replay
from scripts.chaos.harness import REPO, base_env
from scripts.demo import NO_END, SAMPLES, stamped

SAMPLE_FILES = sorted(SAMPLES.glob("*.json"))
#: Years after the samples were written, and the day they were.
DATES = [datetime(2031, 6, 1, 12, 0, tzinfo=UTC), datetime(2026, 11, 28, 5, 0, tzinfo=UTC)]


def times(body: bytes) -> list[datetime]:
    found: list[datetime] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("startsAt", "endsAt", "occurred_at", "created_at") and value != NO_END:
                    found.append(datetime.fromisoformat(value))
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(body))
    return found


class TestStamped:
    @pytest.mark.parametrize("now", DATES, ids=lambda d: d.date().isoformat())
    @pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda p: p.name)
    def test_every_sample_makes_a_page_on_any_date(self, sample: Path, now: datetime) -> None:
        """Sent at `now`, each sample is a page, not a replay to ignore (the PagerDuty sample
        unstamped was ignored 48 h after the date written in it)."""
        parsed = refuse_replay(parse_body(stamped(sample.read_bytes(), now)), now=now)
        assert isinstance(parsed, Parsed)

    def test_the_unstamped_incident_is_a_replay_later(self) -> None:
        """Why stamping is needed: the sample as written is ignored years later."""
        body = (SAMPLES / "pagerduty-incident.json").read_bytes()
        assert isinstance(refuse_replay(parse_body(body), now=DATES[0]), Ignored)

    @pytest.mark.parametrize("sample", SAMPLE_FILES, ids=lambda p: p.name)
    def test_times_move_together_to_now(self, sample: Path) -> None:
        """The latest time becomes `now`; the gaps between times stay as written; a firing
        alert's "no end" stays."""
        body = sample.read_bytes()
        before, after = times(body), times(stamped(body, DATES[0]))
        assert max(after) == DATES[0]
        assert len(after) == len(before)
        shift = DATES[0] - max(before)
        assert after == [t + shift for t in before]
        assert body.count(NO_END.encode()) == stamped(body, DATES[0]).count(NO_END.encode())

    def test_a_body_without_times_is_unchanged(self) -> None:
        body = b'{"alerts": []}'
        assert stamped(body, DATES[0] + timedelta(days=1)) == body


def test_make_demo_ends_with_its_count() -> None:
    """`make demo` sends every sample through the real service and ends with one line that
    says whether each became a page (exit 0 only when all did): the samples, then the
    grouped alert firing again after its resolve. On the way it shows the signed Grafana body
    accepted, the PagerDuty note from the fake PagerDuty API, and the "last time" line."""
    done = subprocess.run(
        [sys.executable, "-m", "scripts.demo"], cwd=REPO, env=base_env(),
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    sent = len(SAMPLE_FILES) + 1
    assert out.strip().splitlines()[-1] == f"demo: {sent} of {sent} pages posted"
    assert 'grafana-signed.json: POST /webhook/grafana -> 202 {"status":"queued"}' in out
    note = out.split("PagerDuty note the service added to incident QVXVA826VVII0L")[1]
    assert note.split("\n")[1].startswith("Runbook: API gateway p99 latency high")
    assert "HighLatencyP99.md" in note.split("====")[0]
    again = out.split("alertmanager-grouped.json firing again: POST")[1]
    assert "Fired 2× in the last 7 days · last resolved after" in again
