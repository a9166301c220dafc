"""What a chaos run left behind, as a reader would see it: per alert group, the posts, updates
and thread replies the fake Slack received; the enricher's log events; the jobs still in
Redis, and the wait until everything is quiet."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections import Counter
from collections.abc import Mapping
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
        found = by_marker.get(_marker_of(message))
        if found is not None:
            ts_group[str(message["ts"])] = found[0]
    for call in calls:
        if not call["ok"]:
            continue
        body = call["body"]
        if call["method"] == "chat.postMessage" and not body.get("thread_ts"):
            found = by_marker.get(_marker_of(body))
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


def _marker_of(message: Mapping[str, Any]) -> str:
    meta = message.get("metadata")
    if not isinstance(meta, dict):
        return ""
    payload = meta.get("event_payload")
    return str(payload.get("key", "")) if isinstance(payload, dict) else ""


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
    for line in log_path.read_text(errors="replace").splitlines():
        if '"job.done"' in line:
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "job.done":
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


def drain(redis_url: str, slack_url: str, cap_s: float, quiet_s: float) -> float:
    """Wait until no job is left and Slack got no call for `quiet_s`; returns the monotonic
    time of the last Slack call seen."""
    deadline = time.monotonic() + cap_s
    last_count, last_call, last_busy = -1, time.monotonic(), time.monotonic()
    while time.monotonic() < deadline:
        count = len(slack_calls(slack_url))
        now = time.monotonic()
        if count != last_count:
            last_count, last_call = count, now
        if unfinished_jobs(redis_url):
            last_busy = now
        if now - max(last_call, last_busy) >= quiet_s:
            return last_call
        time.sleep(2)
    raise TimeoutError(f"the queue did not drain within {cap_s:.0f}s")
