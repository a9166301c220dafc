"""What a chaos run left behind, as a reader would see it: per alert group, the posts, updates
and thread replies the fake Slack received; the enricher's log events; the jobs still in
Redis, and the wait until everything is quiet."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import redis

from scripts.chaos.harness import CHANNEL, SLACK_TOKEN


def marker(group_key: str, status: str) -> str:
    """The key the worker stores in each top-level post's metadata (`enricher.worker._marker`)."""
    return hashlib.sha256(f"{group_key}|{status}".encode()).hexdigest()[:32]


def slack_calls(slack_url: str) -> list[dict[str, Any]]:
    origin = slack_url.removesuffix("/api/")
    calls: list[dict[str, Any]] = httpx.get(f"{origin}/_fake/calls", timeout=60).json()["calls"]
    return calls


def slack_history(slack_url: str, channel: str = CHANNEL) -> list[dict[str, Any]]:
    """Every top-level message of the channel with its metadata (retried past fault rates)."""
    body = {"channel": channel, "limit": 1_000_000, "include_all_metadata": True}
    headers = {"Authorization": f"Bearer {SLACK_TOKEN}"}
    for _ in range(100):
        reply = httpx.post(f"{slack_url}conversations.history", json=body, headers=headers,
                           timeout=60)
        data: dict[str, Any] = reply.json()
        if data.get("ok"):
            return list(data["messages"])
        if data.get("error") == "channel_not_found":
            return []
        time.sleep(0.2)
    raise RuntimeError("conversations.history kept failing")


@dataclass
class GroupView:
    """What one alert group looks like in Slack."""

    firing_posts: int = 0
    resolved_posts: int = 0
    updates: int = 0
    replies: int = 0


def slack_view(
    group_keys: list[str], calls: list[dict[str, Any]], history: list[dict[str, Any]]
) -> dict[str, GroupView]:
    """Per group key: successful top-level posts (by marker), and updates and thread replies
    on those posts (by ts)."""
    by_marker: dict[str, tuple[str, str]] = {}
    for key in group_keys:
        for status in ("firing", "resolved"):
            by_marker[marker(key, status)] = (key, status)
    views = {key: GroupView() for key in group_keys}
    ts_group: dict[str, str] = {}
    for message in history:
        found = by_marker.get(marker_of(message))
        if found is not None:
            ts_group[str(message["ts"])] = found[0]
    for call in calls:
        if not call["ok"]:
            continue
        body = call["body"]
        if call["method"] == "chat.postMessage" and not body.get("thread_ts"):
            found = by_marker.get(marker_of(body))
            if found is not None:
                view = views[found[0]]
                if found[1] == "firing":
                    view.firing_posts += 1
                else:
                    view.resolved_posts += 1
        elif call["method"] == "chat.postMessage":
            parent = ts_group.get(str(body["thread_ts"]))
            if parent is not None:
                views[parent].replies += 1
        elif call["method"] == "chat.update":
            edited = ts_group.get(str(body.get("ts")))
            if edited is not None:
                views[edited].updates += 1
    return views


def incident_pages(slack_url: str, incidents: list[str], delivery: str) -> dict[str, int] | None:
    """Top-level posts per PagerDuty incident, told apart by their markers (the incident id is
    the group key); None for a delivery without markers."""
    if delivery != "bot":
        return None
    views = slack_view(incidents, slack_calls(slack_url), slack_history(slack_url))
    return {incident: view.firing_posts for incident, view in views.items()}


def output_view(
    group_keys: list[str], messages: Sequence[Mapping[str, Any]]
) -> dict[str, GroupView]:
    """`slack_view` for a delivery without markers (incoming webhook, console), group `n`
    being `group_keys[n]`. A resolve there is one message, which does the work of the
    update and the thread reply: it is counted as both."""
    counts = outputs(messages)
    views: dict[str, GroupView] = {}
    for number, key in enumerate(group_keys):
        resolves = counts[(number, "resolve")]
        views[key] = GroupView(firing_posts=counts[(number, "page")], updates=resolves,
                               replies=resolves)
    return views


def marker_of(message: Mapping[str, Any]) -> str:
    meta = message.get("metadata")
    if not isinstance(meta, dict):
        return ""
    payload = meta.get("event_payload")
    return str(payload.get("key", "")) if isinstance(payload, dict) else ""


#: What a message without metadata is about, read from its text: the page, an escalation
#: (alerts joined), or the resolve (a resolved message, or the reply in the page's thread).
OUTPUT_KINDS = {"🔥": "page", "✅": "resolve", "➕": "escalation", "⬆️": "escalation"}
#: `am_body` puts "(group N, ...)" in each summary, and fingerprints start with N in hex.
_GROUP_IN_SUMMARY = re.compile(r"\(group (\d+),")
_GROUP_IN_FINGERPRINT = re.compile(r"instance=[\w.-]*?-([0-9a-f]{4})[0-9a-f]{2}`")


def outputs(messages: Sequence[Mapping[str, Any]]) -> Counter[tuple[int, str]]:
    """Per (group number, kind), how many messages a delivery without markers (incoming
    webhook, console) sent. Edits (console `chat.update`) are not counted: an edit repeated
    with the same content changes nothing. A thread reply names its group by its thread."""
    group_of_ts: dict[str, int] = {}
    counts: Counter[tuple[int, str]] = Counter()
    for message in messages:
        if message.get("slack") == "chat.update":
            continue
        text = str(message.get("text", ""))
        kind = next((k for prefix, k in OUTPUT_KINDS.items() if text.startswith(prefix)), "other")
        found = _GROUP_IN_SUMMARY.search(text)
        group = int(found.group(1)) if found else None
        if group is None and (found := _GROUP_IN_FINGERPRINT.search(text)):
            group = int(found.group(1), 16)
        if group is None:
            group = group_of_ts.get(str(message.get("thread_ts")), -1)
        if message.get("ts"):
            group_of_ts[str(message["ts"])] = group
        counts[(group, kind)] += 1
    return counts


def console_messages(stdout_path: Path) -> tuple[list[dict[str, Any]], int]:
    """The messages console mode printed (one indented JSON document each), and how many
    documents were cut short (a kill in the middle of a write)."""
    text = stdout_path.read_text(errors="replace") if stdout_path.exists() else ""
    decoder = json.JSONDecoder()
    messages: list[dict[str, Any]] = []
    torn = 0
    for chunk in re.split(r"(?m)^(?=\{$)", text):
        if not chunk.strip():
            continue
        try:
            doc, _ = decoder.raw_decode(chunk.strip())
        except ValueError:
            torn += 1
            continue
        if isinstance(doc, dict) and "slack" in doc:
            messages.append(doc)
    return messages, torn


def webhook_messages(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The bodies the fake Slack's incoming webhook took (from its recorded calls)."""
    return [dict(c["body"]) for c in calls if c["method"] == "webhook.incoming" and c["ok"]]


def done_jobs(log_path: Path) -> list[dict[str, Any]]:
    """The enricher's `job.done` events, in order."""
    done: list[dict[str, Any]] = []
    for line in log_path.read_text(errors="replace").splitlines():
        if '"job.done"' in line:
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "job.done":
                    done.append(event)
    return done


def log_events(log_path: Path) -> Counter[str]:
    """Counts of the enricher's JSON log events, with job outcomes and reasons spelled out."""
    counts: Counter[str] = Counter()
    for line in log_path.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            name = str(event.get("event", ""))
            counts[name] += 1
            if name == "job.done":
                counts[f"outcome.{event.get('outcome')}"] += 1
            elif name in ("job.retry_later", "job.dead_letter"):
                counts[f"{name}.{event.get('reason')}"] += 1
    return counts


def group_outcomes(log_path: Path) -> dict[str, Counter[str]]:
    """Per alert group, the outcomes of its finished jobs (posted, superseded, ...)."""
    outcomes: dict[str, Counter[str]] = {}
    for event in done_jobs(log_path):
        group = str(event.get("group"))
        outcomes.setdefault(group, Counter())[str(event.get("outcome"))] += 1
    return outcomes


def unfinished_jobs(redis_url: str) -> int:
    """Jobs in the stream plus jobs parked in the delayed set, read in one transaction.

    Not `rbe_queue_depth`: /metrics reads the two keys one after the other, so a job that
    moves from the delayed set into the stream between the reads is missed (seen as 0)."""
    with redis.Redis.from_url(redis_url) as client:
        pipe = client.pipeline(transaction=True)
        pipe.xlen("rbe:jobs")
        pipe.zcard("rbe:delayed")
        stream, delayed = pipe.execute()
    return int(stream) + int(delayed)


def drain(
    redis_url: str, progress: Callable[[], int], cap_s: float, quiet_s: float
) -> float:
    """Wait until no job is left and `progress()` (what the enricher has sent: Slack calls,
    bytes of console output) has not moved for `quiet_s`; returns the monotonic time it
    last moved."""
    deadline = time.monotonic() + cap_s
    last_count, last_call, last_busy = -1, time.monotonic(), time.monotonic()
    while time.monotonic() < deadline:
        count = progress()
        now = time.monotonic()
        if count != last_count:
            last_count, last_call = count, now
        if unfinished_jobs(redis_url):
            last_busy = now
        if now - max(last_call, last_busy) >= quiet_s:
            return last_call
        time.sleep(2)
    raise TimeoutError(f"the queue did not drain within {cap_s:.0f}s")
