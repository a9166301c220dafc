"""The count of a Redis failover run: per alert group answered 202, whether Slack shows its
page exactly once, not at all (lost) or more than once; how long the service was without a
primary; when pages resumed (the first page posted once a replica was promoted; the first
page of a group accepted after the kill comes later, behind the backlog queued before it);
the longest delay of a page; the webhook's ack latency before and after the kill."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from scripts.benchlib import dist
from scripts.chaos.harness import Enricher
from scripts.chaos.observed import (
    log_events,
    marker,
    marker_of,
    slack_calls,
    slack_history,
    slack_view,
    unfinished_jobs,
)
from scripts.chaos.workload import Group


@dataclass(frozen=True)
class Attempt:
    """One HTTP request of the burst (wall clock `started`); status 0: no answer."""

    group: int
    started: float
    latency_s: float
    status: int
    outcome: str

    @property
    def answered_at(self) -> float:
        return self.started + self.latency_s


def _ms(values: Sequence[float]) -> dict[str, float | int]:
    """How many, and p50/p99/max/mean in milliseconds."""
    return {"n": len(values), **dist(values)} if values else {"n": 0}


def first_posts(groups: Sequence[Group], history: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Per group number, the wall time of its first firing post (the fake's ts is its clock)."""
    number = {marker(g.key, "firing"): n for n, g in enumerate(groups)}
    posted: dict[int, float] = {}
    for message in history:
        found = number.get(marker_of(message))
        if found is not None:
            posted[found] = min(posted.get(found, float("inf")), float(message["ts"]))
    return posted


def tally_failover(
    groups: Sequence[Group], attempts: Sequence[Attempt], slack_url: str,
    enrichers: Sequence[Enricher], primary_url: str, *, started: float, killed_at: float,
    old_port: int, promoted_at: float | None,
) -> dict[str, Any]:
    calls = slack_calls(slack_url)
    history = slack_history(slack_url)
    keys = [g.key for g in groups]
    views = slack_view(keys, calls, history)
    accepted_at: dict[int, float] = {}
    for a in attempts:
        if a.status == 202:
            accepted_at[a.group] = min(accepted_at.get(a.group, float("inf")), a.answered_at)
    posted_at = first_posts(groups, history)
    top = {n: views[k].firing_posts + views[k].resolved_posts for n, k in enumerate(keys)}
    accepted = set(accepted_at)
    delays = {n: posted_at[n] - accepted_at[n] for n in accepted if n in posted_at}
    longest = max(delays, key=lambda n: delays[n]) if delays else None
    after_kill = [posted_at[n] for n in accepted
                  if n in posted_at and accepted_at[n] > killed_at]
    after_promotion = [t for t in posted_at.values()
                       if promoted_at is not None and t >= promoted_at]
    first_202_after = min((a.answered_at for a in attempts
                           if a.status == 202 and a.started >= killed_at), default=None)
    events: Counter[str] = Counter()
    for enricher in enrichers:
        events.update(log_events(enricher.log_path))
    statuses = Counter(a.status for a in attempts)

    def since_kill(t: float | None) -> float | None:
        return None if t is None else round(t - killed_at, 2)

    return {
        "groups": len(groups),
        "requests": len(attempts),
        "answers": {str(k): v for k, v in sorted(statuses.items())},
        "accepted_groups": len(accepted),
        "exactly_once": sum(1 for n in accepted if top[n] == 1),
        "lost": sum(1 for n in accepted if top[n] == 0),
        "duplicated": sum(1 for n in accepted if top[n] > 1),
        "posted_without_202": sum(1 for n in range(len(groups)) if top[n] and n not in accepted),
        "burst_start_to_kill_s": round(killed_at - started, 2),
        "old_primary_port": old_port,
        "time_without_primary_s": since_kill(promoted_at),
        "intake_refused_for_s": since_kill(first_202_after),
        "pages_resume_s": since_kill(min(after_promotion, default=None)),
        "first_new_page_s": since_kill(min(after_kill, default=None)),
        "longest_page_delay_s": round(delays[longest], 2) if longest is not None else None,
        "longest_delayed_group": longest,
        "ack_202_before_kill": _ms([a.latency_s for a in attempts
                                    if a.status == 202 and a.started < killed_at]),
        "ack_202_after_kill": _ms([a.latency_s for a in attempts
                                   if a.status == 202 and a.started >= killed_at]),
        "answer_503": _ms([a.latency_s for a in attempts if a.status == 503]),
        "unfinished_jobs": unfinished_jobs(primary_url),
        "dead_letters": dead_letters(primary_url),
        "slack_429": sum(1 for c in calls if c["status"] == 429),
        "slack_500": sum(1 for c in calls if c["status"] == 500),
        "log": {k: v for k, v in sorted(events.items())
                if k.startswith(("outcome.", "redis.", "intake.", "webhook.unavailable",
                                 "slack.duplicate", "job.taken_over", "job.crashed",
                                 "job.dead_letter"))},
    }


def dead_letters(redis_url: str) -> int:
    with redis.Redis.from_url(redis_url) as client:
        return int(client.xlen("rbe:dead"))


def failover_failed(report: Mapping[str, Any]) -> bool:
    """A 202-answered page lost or doubled, a job left unfinished or dead-lettered."""
    return bool(report["lost"] or report["duplicated"] or report["unfinished_jobs"]
                or report["dead_letters"])


def print_failover_table(report: Mapping[str, Any]) -> None:
    def lat(part: Mapping[str, Any]) -> str:
        if not part.get("n"):
            return "none"
        return f"p50 {part['p50']} ms, p99 {part['p99']} ms (n={part['n']})"

    rows = [
        ("REDIS_MIN_REPLICAS_ACK / replicas / down-after", f"{report['min_replicas_ack']} / "
         f"{report['redis_replicas']} / {report['down_after_ms']} ms"),
        ("requests (answers by status)", f"{report['requests']} {report['answers']}"),
        ("groups answered 202", report["accepted_groups"]),
        ("  posted exactly once", report["exactly_once"]),
        ("  lost", report["lost"]),
        ("  duplicated", report["duplicated"]),
        ("kill -9 of the primary after (s)", report["burst_start_to_kill_s"]),
        ("time without a primary (s)", report["time_without_primary_s"]),
        ("webhooks refused after the kill for (s)", report["intake_refused_for_s"]),
        ("pages resume (first page after the promotion) (s)", report["pages_resume_s"]),
        ("first page of a group accepted after the kill (s)", report["first_new_page_s"]),
        ("longest page delay, 202 to Slack (s)", report["longest_page_delay_s"]),
        ("ack latency before the kill", lat(report["ack_202_before_kill"])),
        ("ack latency after the kill", lat(report["ack_202_after_kill"])),
        ("503 answers", lat(report["answer_503"])),
        ("unfinished jobs / dead letters", f"{report['unfinished_jobs']} / "
         f"{report['dead_letters']}"),
        ("Slack 429 / 500", f"{report['slack_429']} / {report['slack_500']}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


__all__ = ["Attempt", "failover_failed", "first_posts", "print_failover_table", "tally_failover"]
