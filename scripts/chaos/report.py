"""The verdict of a chaos run: the report counted from what Slack received, the table, and
what makes the run fail."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from scripts.chaos.harness import DeliveryMode, Enricher
from scripts.chaos.observed import (
    GroupView,
    console_messages,
    group_outcomes,
    log_events,
    output_view,
    slack_calls,
    slack_history,
    slack_view,
    webhook_messages,
)
from scripts.chaos.workload import Burst


def tally(
    burst: Burst, enricher: Enricher, slack_url: str, *, seed: int, kills: int, keep: bool,
    delivery: DeliveryMode = "bot",
) -> dict[str, Any]:
    """The report of a run, counted from the fake Slack's calls and channel (or the console
    output) and the enricher's log; `keep` also saves the calls next to the log."""
    calls = slack_calls(slack_url)
    if keep:
        (enricher.log_path.parent / "slack_calls.json").write_text(json.dumps(calls))
    keys = [g.key for g in burst.groups]
    views, torn = _views(keys, delivery, calls, enricher, slack_url)
    fired = burst.accepted["firing"]
    resolved = burst.accepted["resolved"]
    top = {g: views[keys[g]].firing_posts + views[keys[g]].resolved_posts for g in fired}
    lost = {g for g in fired if not views[keys[g]].firing_posts}
    outcomes = group_outcomes(enricher.log_path)
    superseded = {g for g in lost if outcomes.get(keys[g], Counter())["superseded"]}
    in_thread = {g for g in resolved if views[keys[g]].updates and views[keys[g]].replies}
    alone = {g for g in resolved - in_thread if views[keys[g]].resolved_posts}
    events = log_events(enricher.log_path)
    statuses = Counter(int(c["status"]) for c in calls)
    return {
        "date": time.strftime("%Y-%m-%d"),
        "delivery": delivery,
        "torn_console_documents": torn,
        "seed": seed,
        "requests": burst.total,
        "groups": len(burst.groups),
        "kills": kills,
        "client_retries": sum(burst.failures.values()),
        "client_failures": dict(burst.failures),
        "answers": dict(sorted(burst.outcomes.items())),
        "never_accepted": burst.gave_up,
        "accepted_pages": len(fired),
        "delivered": len(fired - lost),
        "lost": len(lost),
        "lost_superseded_by_resolve": len(superseded),
        "lost_never_queued": len(lost - superseded),
        "lost_nothing_in_slack": sum(1 for g in lost if not top[g]),
        "duplicates": sum(1 for g in fired if top[g] > 1),
        "extra_posts": sum(max(0, n - 1) for n in top.values()),
        "resolves_accepted": len(resolved),
        "resolves_delivered": len(in_thread),
        "resolves_posted_alone": len(alone),
        "resolves_missing": len(resolved - in_thread - alone),
        "duplicate_thread_replies": sum(1 for g in resolved if views[keys[g]].replies > 1),
        "dead_letters": int(enricher.metric("rbe_dead_letter_depth")),
        "slack_calls": len(calls),
        "slack_429": statuses.get(429, 0),
        "slack_500": statuses.get(500, 0),
        "log": {
            k: v for k, v in sorted(events.items())
            if k.startswith(("outcome.", "job.retry_later.", "job.dead_letter", "slack.duplicate",
                             "slack.output_unconfirmed", "job.taken_over", "job.crashed",
                             "redis.unavailable", "service.jobs_lost"))
        },
    }


def _views(
    keys: list[str], delivery: DeliveryMode, calls: list[dict[str, Any]], enricher: Enricher,
    slack_url: str,
) -> tuple[dict[str, GroupView], int]:
    """Per group what a reader saw, and how many console documents were cut short."""
    if delivery == "bot":
        return slack_view(keys, calls, slack_history(slack_url)), 0
    if delivery == "webhook":
        return output_view(keys, webhook_messages(calls)), 0
    assert enricher.stdout_path is not None
    messages, torn = console_messages(enricher.stdout_path)
    return output_view(keys, messages), torn


def failed(report: Mapping[str, Any]) -> bool:
    """A firing page accepted but never posted (even if its resolve showed up instead), a
    group posted twice, a resolve that never showed, or a request never accepted."""
    return bool(
        report["lost"] or report["duplicates"] or report["resolves_missing"]
        or report["never_accepted"] or report["dead_letters"]
        or report["duplicate_thread_replies"] or report.get("unfinished_jobs")
        or report["torn_console_documents"]
    )


def print_table(report: Mapping[str, Any]) -> None:
    rows = [
        ("delivery", report["delivery"]),
        ("requests sent (incl. HA copies, re-sends, resolves)", report["requests"]),
        ("client retries (conn. errors / 5xx)", report["client_retries"]),
        ("requests never accepted", report["never_accepted"]),
        ("kill -9", report["kills"]),
        ("accepted pages (groups)", report["accepted_pages"]),
        ("delivered (firing post)", report["delivered"]),
        ("lost (accepted firing page never posted)", report["lost"]),
        ("  dropped as superseded by its resolve", report["lost_superseded_by_resolve"]),
        ("  never reached the queue", report["lost_never_queued"]),
        ("  nothing at all in Slack for the group", report["lost_nothing_in_slack"]),
        ("duplicates (groups with >1 top-level post)", report["duplicates"]),
        ("resolves accepted", report["resolves_accepted"]),
        ("resolves delivered (update + thread reply)", report["resolves_delivered"]),
        ("resolves posted alone (no firing post)", report["resolves_posted_alone"]),
        ("resolves missing", report["resolves_missing"]),
        ("duplicate thread replies (webhook, console: resolves)",
         report["duplicate_thread_replies"]),
        ("console documents cut short", report["torn_console_documents"]),
        ("dead letters", report["dead_letters"]),
        ("Slack calls / 429 / 500", f"{report['slack_calls']} / {report['slack_429']} / "
                                    f"{report['slack_500']}"),
        ("burst (s)", report["burst_s"]),
        ("drain after burst (s)", report["drain_s"]),
    ]
    if "pagerduty" in report:
        pd = report["pagerduty"]
        rows += [
            ("PagerDuty incidents sent / accepted", f"{pd['incidents']} / "
                                                    f"{pd['incidents_accepted']}"),
            ("notes added (one per incident)", pd["notes_added"]),
            ("notes lost / doubled", f"{pd['notes_lost']} / {pd['notes_doubled']}"),
            ("incident pages lost / doubled",
             f"{pd.get('incident_pages_lost', '-')} / {pd.get('incident_pages_doubled', '-')}"),
            ("PagerDuty note calls / 429 / 500", f"{pd['pagerduty_posts']} / "
                                                 f"{pd['pagerduty_429']} / {pd['pagerduty_500']}"),
        ]
    if "memory" in report:
        memory = report["memory"]
        rows.append(("hostile requests / statuses", f"{memory['requests']} / {memory['statuses']}"))
        rows.append(("RSS per round (MB)",
                     " ".join(f"{kb / 1024:.0f}" for kb in memory["rss_kb_per_round"])))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
