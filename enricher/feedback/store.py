"""Votes in Redis: one per user per page, with running tallies per alert name.

Keys (user-supplied parts are hashed, so their length and bytes never matter):

    rbe:page:<page>            the page's alert (JSON), written when the page
                               is posted; expires after FEEDBACK_PAGE_TTL_S (then a click
                               on the page is stale and ignored)
    rbe:fb:votes:<page>        hash: v:<user> -> the vote (JSON), f:<user> -> its tally field
    rbe:fb:pages               zset: page -> time of its last vote (what the export reads)
    rbe:fb:tally:<alert>       hash: R:<doc id> / W:<doc id> -> votes for the alert name
    rbe:fb:alerts              hash: <alert> -> the alert name key it stands for

`<page>` is a digest of the message's channel and ts, `<alert>` one of the alert name's
`name_key`. A vote is one Lua script: the user's previous vote on the page (if any) leaves
its tally, the new one enters, so a second click changes the vote and the tallies always
equal the stored votes. Votes never expire: they are the team's record, and the export's.
`reset` removes votes (all of an alert name's, or one runbook's for it) and rebuilds the
tallies from the votes left.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from enricher.alert import Alert
from enricher.search.feedback import Tallies, Tally
from enricher.search.names import name_key
from enricher.slack.buttons import Verdict
from enricher.slack.delivery import PostRef
from enricher.slack.votes import PageVote

VoteOutcome = Literal["new", "changed", "same"]

_PAGES = "rbe:fb:pages"
_ALERTS = "rbe:fb:alerts"
_FIELD = {"right": "R:", "wrong": "W:"}

_VOTE = """
local old = redis.call('HGET', KEYS[1], 'f:' .. ARGV[1])
redis.call('HSET', KEYS[1], 'v:' .. ARGV[1], ARGV[2], 'f:' .. ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
if old == ARGV[3] then return 'same' end
if old then redis.call('HINCRBY', KEYS[3], old, -1) end
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
if old then return 'changed' end
return 'new'
"""


def text(value: Any) -> str:
    """A Redis reply value as text (the clients here do not decode replies)."""
    return value.decode() if isinstance(value, bytes) else str(value)


async def read_hash(redis: aioredis.Redis, key: str) -> dict[str, str]:
    raw: Any = await redis.hgetall(key)
    return {text(k): text(v) for k, v in raw.items()}


async def read_members(redis: aioredis.Redis, key: str) -> list[str]:
    raw: Any = await redis.zrange(key, 0, -1)
    return [text(m) for m in raw]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def page_id(ref: PostRef) -> str:
    return _digest(f"{ref.channel}|{ref.ts}")


def alert_key(alert_name: str) -> str:
    """The key votes are counted under: the alert name, case and separators ignored."""
    return name_key(alert_name)


class PageRecord(BaseModel):
    """What a click needs to know about the page it was made on."""

    model_config = ConfigDict(frozen=True)

    alert: Alert


class Vote(BaseModel):
    """One user's vote on one page, as stored: who, when, the alert, the runbook, the verdict."""

    model_config = ConfigDict(frozen=True)

    user: str
    #: Epoch seconds.
    at: float
    verdict: Verdict
    alert_name: str
    service: str | None
    doc_id: str
    path: str
    revision: str
    channel: str
    ts: str
    #: The page's alert, so an exported case can replay the search (enricher.feedback.export).
    alert: Alert

    @property
    def page(self) -> str:
        return page_id(PostRef(self.channel, self.ts))

    @property
    def alert_key(self) -> str:
        return alert_key(self.alert_name)


_RECORD: TypeAdapter[PageRecord] = TypeAdapter(PageRecord)


@dataclass(frozen=True)
class Reset:
    votes: int
    alert_key: str


class FeedbackStore:
    """Every method raises `redis.exceptions.RedisError` when Redis is down; the callers
    degrade (a page without feedback evidence) or answer 503 (a click not recorded)."""

    def __init__(self, redis: aioredis.Redis, *, page_ttl_s: int) -> None:
        self.redis = redis
        self.page_ttl_s = page_ttl_s
        self._vote = redis.register_script(_VOTE)

    # --- pages ---

    async def remember_page(self, ref: PostRef, alert: Alert) -> None:
        record = PageRecord(alert=alert)
        await self.redis.set(
            f"rbe:page:{page_id(ref)}", _RECORD.dump_json(record), ex=self.page_ttl_s
        )

    async def page(self, ref: PostRef) -> PageRecord | None:
        raw = await self.redis.get(f"rbe:page:{page_id(ref)}")
        if raw is None:
            return None
        try:
            return _RECORD.validate_json(raw)
        except ValidationError:
            return None

    # --- votes ---

    async def vote(self, vote: Vote) -> VoteOutcome:
        key = vote.alert_key
        outcome = await self._vote(
            keys=[f"rbe:fb:votes:{vote.page}", _PAGES, _tally_key(key), _ALERTS],
            args=[
                vote.user,
                vote.model_dump_json(),
                _FIELD[vote.verdict] + vote.doc_id,
                vote.at,
                vote.page,
                _digest(key),
                key,
            ],
        )
        said = text(outcome)
        return "same" if said == "same" else "changed" if said == "changed" else "new"

    async def page_votes(self, ref: PostRef) -> list[PageVote]:
        return [PageVote(v.user, v.doc_id, v.verdict) for v in await self._votes_of(page_id(ref))]

    async def tallies(self, alert_name: str) -> Tallies:
        """Doc id -> votes for the alert name ({} for an alert without a name)."""
        key = alert_key(alert_name)
        if not key:
            return {}
        right: dict[str, int] = {}
        wrong: dict[str, int] = {}
        for field, count in (await read_hash(self.redis, _tally_key(key))).items():
            into = right if field.startswith("R:") else wrong
            into[field[2:]] = int(count)
        return {
            doc: Tally(right.get(doc, 0), wrong.get(doc, 0))
            for doc in sorted(right.keys() | wrong.keys())
            if right.get(doc, 0) or wrong.get(doc, 0)
        }

    async def all_votes(self) -> list[Vote]:
        """Every stored vote, pages in the order of their last vote."""
        votes: list[Vote] = []
        for page in await read_members(self.redis, _PAGES):
            votes += await self._votes_of(page)
        return votes

    async def alert_keys(self) -> list[str]:
        return sorted((await read_hash(self.redis, _ALERTS)).values())

    async def reset(self, alert_name: str, doc_id: str | None = None) -> Reset:
        """Forget the votes for `alert_name` (only those on `doc_id`, when given): they no
        longer move its pages, and the export no longer holds them."""
        key = alert_key(alert_name)
        removed = 0
        for page in await read_members(self.redis, _PAGES):
            page_key = f"rbe:fb:votes:{page}"
            for vote in await self._votes_of(page):
                if vote.alert_key == key and doc_id in (None, vote.doc_id):
                    await self.redis.hdel(page_key, f"v:{vote.user}", f"f:{vote.user}")
                    removed += 1
            if not await self.redis.exists(page_key):
                await self.redis.zrem(_PAGES, page)
        await self._rebuild(key)
        return Reset(removed, key)

    async def _rebuild(self, key: str) -> None:
        counts: dict[str, int] = {}
        for vote in await self.all_votes():
            if vote.alert_key == key:
                field = _FIELD[vote.verdict] + vote.doc_id
                counts[field] = counts.get(field, 0) + 1
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(_tally_key(key))
            if counts:
                pipe.hset(_tally_key(key), mapping=counts)  # type: ignore[arg-type]
            else:
                pipe.hdel(_ALERTS, _digest(key))
            await pipe.execute()

    async def _votes_of(self, page: str) -> list[Vote]:
        fields = await read_hash(self.redis, f"rbe:fb:votes:{page}")
        votes: list[Vote] = []
        for field, raw in sorted(fields.items()):
            if field.startswith("v:"):
                try:
                    votes.append(Vote.model_validate_json(raw))
                except ValidationError:
                    continue  # written by another version: not ours to read
        return votes


def _tally_key(key: str) -> str:
    return f"rbe:fb:tally:{_digest(key)}"


def votes_by_page(votes: Sequence[Vote]) -> dict[str, list[Vote]]:
    pages: dict[str, list[Vote]] = {}
    for vote in votes:
        pages.setdefault(vote.page, []).append(vote)
    return pages


__all__ = [
    "FeedbackStore",
    "PageRecord",
    "Reset",
    "Vote",
    "VoteOutcome",
    "alert_key",
    "page_id",
    "read_hash",
    "read_members",
    "text",
    "votes_by_page",
]
