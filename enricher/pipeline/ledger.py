"""Idempotency records in Redis: which webhooks were seen, and which alert groups have a Slack post.

Keys (user-supplied keys are hashed so their length and bytes never matter):

    rbe:seen:<sha256(dedup_key)>   "1", expires after `dedup_ttl_s`
    rbe:post:<sha256(group_key)>   hash: state ("claimed" | "posted"), owner, claimed_at,
                                   lease_s, channel, ts, fingerprints (sorted JSON list),
                                   status, severity (as the message shows it), group_key,
                                   out:<kind> (an output sent but not stored, see below),
                                   try:<kind> (one about to be sent);
                                   expires `post_ttl_s` after the last write
    rbe:resolving:<sha256(group_key)>  owner of the group's resolve in progress; expires
                                   after `lease_s`

Dedup window. `dedup_ttl_s` defaults to 6 h: Alertmanager re-sends an unchanged group every
`repeat_interval` (4 h by default) and HA peers send copies within seconds, so 6 h swallows
both. PagerDuty retries for up to 48 h, so its event ids are kept at least that long plus an
hour (`dedup_ttl_ms_for`); an event older than that is refused at intake as a replay
(`enricher.sources.pagerduty.RETRY_HORIZON_S`).

Intake sets the seen mark and appends the job in one Redis script (`JobQueue.enqueue_once`
with `seen_key` and `dedup_ttl_ms`), so a redelivery by the sender is never swallowed by a
mark whose job did not reach the queue.

Exactly one post per group. A worker calls `claim_post` before calling Slack:

- `Claimed`: post inside `posting()`, then `record_post`; a failed post gives the claim up
  (`release_claim`) so a retry can claim.
- `AlreadyPosted`: update that message instead of posting a new one.
- `InFlight`: another worker holds a live lease; retry the job later.

Owners are `<worker id>:<process nonce>` (enricher.service): the worker id is WORKER_ID,
stable across restarts and unique among live processes, the nonce new in every process.
A claim (or resolve hold) under the caller's worker id but another nonce therefore belongs
to a process that is gone: the restarted one takes it over at once, as if its lease had
run out, instead of waiting `lease_s`. That is what makes a page in flight at a kill -9
go out seconds after the restart.

The crash window: a worker dies after Slack accepted the message but before `record_post`.
Its lease expires (`lease_s`, default 120 s; at once for its own restarted process) and
the next claimer gets `Claimed(takeover=True)`; it should look for its marker in the
channel's recent history before posting. Worst case, when that lookup is unavailable or
misses: one duplicate post per crash inside that window. A worker whose lease was taken
over and which then records gets False from `record_post`: it has just made such a
duplicate and should count it.

The lease must outlast the longest time between claim and record (Slack timeout times
retries); a worker that must wait longer (a 429) releases the claim and retries the job.
Lease times come from the Redis clock (TIME inside the scripts), so clock skew between
replicas does not shorten or stretch a lease. Claim records also live `post_ttl_s`: if one
expired early, a takeover would look like a fresh claim and skip the marker lookup.

Deliveries without lookups (incoming webhook, console) have no marker to look for. Each
of their outputs is noted twice: just before it is sent (`note_attempt`), and the moment
it has left the process (`note_output`; kind "post", "resolve" or one per escalation). The
write storing its effect clears both (`record_post`, `update_post(output=...)`). An attempt
that finds the second note (`output_notes`) follows a crash after the output left and does
not send again. A failure Slack answered clears them (`forget_output`), so the retry sends;
`reopen` clears them all.

What is left of the crash window is the time from the output leaving the process to the
second note reaching Redis. With a synchronous connection (`notes`) nothing else on the
event loop runs in between: the note is written before `note_output` first yields (it
blocks the loop for one Redis round trip per output, a few a second at most). But the
process can still lose its core to the other processes on the machine, or its GIL to its
own search threads, right after the request's last byte went out: on a loaded 2-core
machine that is milliseconds, and a kill -9 there repeats the output (docs/RELIABILITY.md,
"The open duplicate, found"). No ordering closes it: noting first would turn the repeat
into a loss. What the first note buys is knowing it: an attempt that finds it without the
second sends again and says so (`slack.output_maybe_repeated`), so every repeat is counted.

One resolve per group at a time. Two different resolve notifications of one group (HA peers
with different views) pass intake as two jobs. A worker calls `hold_resolve` before it
edits the message and replies in the thread, and `release_resolve` after, so the second
worker waits, then finds the group resolved. A crashed holder's hold expires after its
lease; the next worker's thread lookup (the resolve marker) keeps the reply single.

Every method raises `redis.exceptions.ConnectionError` when Redis is down; callers degrade
(no dedup, post anyway) as DESIGN.md §7 says.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis
import structlog
from redis.commands.core import AsyncScript

from enricher.alert import Source
from enricher.errors import DeliveryFailed
from enricher.pipeline import ledger_scripts as scripts
from enricher.pipeline.replication import ReplicaAck
from enricher.sources.pagerduty import RETRY_HORIZON_S

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Claimed:
    """Post now, then `record_post`. `takeover`: an earlier attempt may have reached Slack
    (its holder died, or its post failed ambiguously): look for the marker before posting."""

    takeover: bool = False
    previous_owner: str | None = None


@dataclass(frozen=True)
class AlreadyPosted:
    channel: str
    ts: str
    fingerprints: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class InFlight:
    owner: str
    age_s: float


ClaimResult = Claimed | AlreadyPosted | InFlight


@dataclass(frozen=True)
class PostRecord:
    group_key: str
    owner: str
    channel: str
    ts: str
    fingerprints: tuple[str, ...]
    status: str
    #: The rendered message as JSON ("" when not stored).
    message: str = ""
    #: When the webhook behind the stored state arrived (epoch s; 0 when unknown).
    received_at: float = 0.0
    #: The severity the message shows ("" when none, or not stored).
    severity: str = ""
    #: The acknowledgement the message shows: its delivery's dedup key ("" when none), and
    #: when it was made (epoch s), so an older one arriving late changes nothing.
    acknowledged: str = ""
    acknowledged_at: float = 0.0


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _ms(seconds: float) -> int:
    """Whole milliseconds for a Redis expiry, at least 1 (PX 0 is an error)."""
    return max(1, math.ceil(seconds * 1000))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _fingerprints_json(fingerprints: Iterable[str]) -> str:
    return json.dumps(sorted(set(fingerprints)))


def _fingerprints(raw: Any) -> tuple[str, ...]:
    return tuple(json.loads(_text(raw))) if raw else ()


class Ledger:
    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = "rbe:",
        dedup_ttl_s: float,
        post_ttl_s: int = 7 * 86400,
        notes: redis.Redis | None = None,
        replica_ack: ReplicaAck | None = None,
    ) -> None:
        """`notes`: a synchronous connection to the same Redis for `note_output` (see the
        module docstring); without one the note goes through `client`. `replica_ack`
        (REDIS_MIN_REPLICAS_ACK): a claim is on the replicas before its post is made."""
        self._redis = client
        self._replica_ack = replica_ack
        self.prefix = prefix
        self.dedup_ttl_s = dedup_ttl_s
        self.post_ttl_s = post_ttl_s
        self._claim = client.register_script(scripts.CLAIM)
        self._record = client.register_script(scripts.RECORD)
        self._release = client.register_script(scripts.RELEASE)
        self._cut_off = client.register_script(scripts.CUT_OFF)
        self._update = client.register_script(scripts.UPDATE)
        self._reopen = client.register_script(scripts.REOPEN)
        self._abandon = client.register_script(scripts.ABANDON)
        self._release_resolve = client.register_script(scripts.RELEASE_RESOLVE)
        self._hold_resolve = client.register_script(scripts.HOLD_RESOLVE)
        self._note_output = client.register_script(scripts.NOTE_OUTPUT)
        self._notes = notes
        self._note_output_now = notes.register_script(scripts.NOTE_OUTPUT) if notes else None

    def close(self) -> None:
        """Close the `notes` connection (the asyncio client is the caller's)."""
        if self._notes is not None:
            self._notes.close()

    async def ping(self) -> None:
        """Raises when Redis cannot be reached."""
        await self._redis.ping()

    @property
    def dedup_ttl_ms(self) -> int:
        return _ms(self.dedup_ttl_s)

    def dedup_ttl_ms_for(self, source: Source) -> int:
        """How long a delivery from `source` is recognised: PagerDuty's event ids outlive its
        48 h of retries (plus an hour of clock slack), whatever DEDUP_TTL_S says."""
        if source == "pagerduty":
            return _ms(max(self.dedup_ttl_s, RETRY_HORIZON_S + 3600))
        return self.dedup_ttl_ms

    def seen_key(self, dedup_key: str) -> str:
        """The key that marks a delivery as seen (set atomically with the enqueue)."""
        return f"{self.prefix}seen:{_digest(dedup_key)}"

    def owed_post(self, group_key: str) -> tuple[str, int]:
        """What `JobQueue.enqueue_once` needs to mark a firing job's post as owed."""
        return self._post_key(group_key), self.post_ttl_s

    def _post_key(self, group_key: str) -> str:
        return f"{self.prefix}post:{_digest(group_key)}"

    def _resolve_key(self, group_key: str) -> str:
        return f"{self.prefix}resolving:{_digest(group_key)}"

    async def claim_post(
        self, group_key: str, owner: str, lease_s: float, *, sole: bool = False
    ) -> ClaimResult:
        """Decide, atomically across workers and replicas, who posts this group to Slack.

        `sole`: no other worker of `owner`'s process is on this group now, so a live claim
        under `owner` is a leftover, not a post in flight: its job's record and ack were
        lost with a primary that died after they were written, or its job was cut off. It
        is taken over with the marker lookup at once instead of waiting out its lease."""
        reply = await self._claimed(
            self._claim,
            group_key,
            [owner, repr(float(lease_s)), self.post_ttl_s, group_key, "1" if sole else "0"],
        )
        kind = _text(reply[0])
        if kind == "posted":
            channel, ts, fingerprints, status = reply[1:5]
            return AlreadyPosted(
                _text(channel), _text(ts), _fingerprints(fingerprints), _text(status)
            )
        if kind == "inflight":
            return InFlight(owner=_text(reply[1]), age_s=float(reply[2]))
        previous = _text(reply[1])
        return Claimed(takeover=_text(reply[2]) == "1", previous_owner=previous or None)

    async def reopen(self, group_key: str, owner: str, lease_s: float) -> bool:
        """Turn a resolved group's record back into a claim for `owner`: the group fired
        again and gets a new message. False when the record is not a resolved post."""
        done = await self._claimed(
            self._reopen, group_key, [owner, repr(float(lease_s)), self.post_ttl_s]
        )
        return bool(done)

    async def _claimed(self, script: AsyncScript, group_key: str, args: list[Any]) -> Any:
        """Run a claiming script; with a replica ack, return once the replicas hold its
        effect. A claim only on the primary is lost with it, and with it the sign that the
        post may have gone out: the job's re-run on the promoted replica would post again
        without looking for the marker. A claim no replica confirmed in time is used all
        the same (a replica down must not stop pages), and logged."""
        keys = [self._post_key(group_key)]
        if self._replica_ack is None:
            return await script(keys=keys, args=args)
        reply, acked = await self._replica_ack.attempt(self._redis, script, keys=keys, args=args)
        if acked < self._replica_ack.replicas:
            log.warning(
                "ledger.claim_not_replicated",
                group=group_key,
                replicas=acked,
                wanted=self._replica_ack.replicas,
                risk="if the primary dies before a replica has this claim, the page may be "
                "posted twice; check the replicas' link (INFO replication)",
            )
        return reply

    async def record_post(
        self,
        group_key: str,
        owner: str,
        *,
        channel: str,
        ts: str,
        fingerprints: Iterable[str],
        status: str,
        received_at: float,
        message: str,
        severity: str = "",
        acknowledged: str = "",
        acknowledged_at: float = 0.0,
    ) -> bool:
        """Store the posted message. False when `owner` no longer holds the claim (its lease
        was taken over): the caller's message is a duplicate and the stored one stays.

        `received_at`: when the webhook behind the post arrived; `message`: the message as
        JSON ("" when not known, e.g. a post found by its marker)."""
        done = await self._record(
            keys=[self._post_key(group_key)],
            args=[
                owner,
                channel,
                ts,
                _fingerprints_json(fingerprints),
                status,
                self.post_ttl_s,
                group_key,
                repr(received_at),
                message,
                severity,
                acknowledged,
                repr(acknowledged_at),
            ],
        )
        return bool(done)

    async def release_claim(
        self, group_key: str, owner: str, *, owed: bool = False, check_marker: bool = False
    ) -> bool:
        """Give up the claim after a failed post; only the owner can.

        `owed`: the post is still to be made (the job will be retried). The record stays as
        "pending", so a resolve for the group waits instead of overtaking its firing page.
        `check_marker`: the failure was ambiguous (5xx, timeout): Slack may have stored the
        message, so the next claimer looks for it first. Without `owed` the record goes.
        """
        args = [owner, "1" if owed else "0", "1" if check_marker else "0"]
        return bool(await self._release(keys=[self._post_key(group_key)], args=args))

    async def release_cut_off(self, group_key: str, owner: str) -> bool:
        """A job of the group lost Redis mid-way (a failover): give back `owner`'s claim as
        "pending" with a marker lookup owed, or flag a "pending" group for the lookup (the
        claim may have died with the old primary after the post went out). A posted
        group, or another owner's claim, is left alone."""
        return bool(await self._cut_off(keys=[self._post_key(group_key)], args=[owner]))

    @contextlib.asynccontextmanager
    async def posting(
        self, group_key: str, owner: str, *, unverified: bool = False
    ) -> AsyncIterator[None]:
        """Hold a claim across a Slack call; if the call fails, give the claim up the way the
        failure says. A permanent error: for good (the job is dead). Any other: as "pending",
        the post still owed (the job retries, a resolve waits), flagged for a marker lookup
        when Slack may have stored the message anyway. `unverified`: an earlier attempt may
        already have posted, so the flag stays set whatever this call's failure was."""
        try:
            yield
        except DeliveryFailed as exc:
            check = unverified or exc.maybe_delivered
            await self.release_claim(
                group_key, owner, owed=not exc.permanent, check_marker=check
            )
            raise
        except BaseException:
            await self.release_claim(group_key, owner, owed=True, check_marker=True)
            raise

    async def output_notes(self, group_key: str, kind: str) -> tuple[bool, bool]:
        """What an earlier attempt that died before storing its effect left of this output
        of the group (`kind`: "post", "resolve", "escalated:<marker>"): whether it had
        sent it, and whether it had begun to. Begun but not sent: it died in the crash
        window, before or after the output left (module docstring)."""
        sent, begun = await self._redis.hmget(
            self._post_key(group_key), f"out:{kind}", f"try:{kind}"
        )
        return sent is not None, begun is not None

    async def note_attempt(self, group_key: str, kind: str) -> None:
        """The output is about to be sent (noted before it can leave the process)."""
        await self._note(group_key, f"try:{kind}")

    async def note_output(self, group_key: str, kind: str) -> None:
        """The output has left the process (a request written, a document printed). With
        `notes`, the note is in Redis before this coroutine first yields."""
        await self._note(group_key, f"out:{kind}")

    async def _note(self, group_key: str, field: str) -> None:
        keys, args = [self._post_key(group_key)], [field]
        if self._note_output_now is not None:
            self._note_output_now(keys=keys, args=args)
            return
        await self._note_output(keys=keys, args=args)

    async def forget_output(self, group_key: str, kind: str) -> None:
        """Clear the notes of an output that Slack answered with a failure: it is sent again."""
        await self._redis.hdel(self._post_key(group_key), f"out:{kind}", f"try:{kind}")

    async def abandon(self, group_key: str) -> bool:
        """Forget a pending post for good (its job was dead-lettered), so the group's
        resolve is not kept waiting for a firing page that will never come."""
        return bool(await self._abandon(keys=[self._post_key(group_key)]))

    async def hold_resolve(self, group_key: str, owner: str, lease_s: float) -> float | None:
        """Take the group's resolve for `owner`. None when taken (also from a dead earlier
        process of the same worker id); else the seconds left on another worker's hold."""
        keys = [self._resolve_key(group_key)]
        left = int(await self._hold_resolve(keys=keys, args=[owner, _ms(lease_s)]))
        return None if left == -1 else max(0, left) / 1000

    async def release_resolve(self, group_key: str, owner: str) -> bool:
        """Give the hold back; only its owner can (a hold that expired and was taken by
        another worker stays with that worker)."""
        keys = [self._resolve_key(group_key)]
        return bool(await self._release_resolve(keys=keys, args=[owner]))

    async def state(self, group_key: str) -> str | None:
        """ "claimed", "pending" or "posted"; None when the group has no record."""
        raw = await self._redis.hget(self._post_key(group_key), "state")
        return _text(raw) if raw else None

    async def get_post(self, group_key: str) -> PostRecord | None:
        """The stored message of a posted group; None if nothing was posted (or only claimed)."""
        raw = await self._redis.hgetall(self._post_key(group_key))
        record = {_text(k): v for k, v in raw.items()}
        if _text(record.get("state", b"")) != "posted":
            return None
        return PostRecord(
            group_key=_text(record.get("group_key", group_key)),
            owner=_text(record["owner"]),
            channel=_text(record["channel"]),
            ts=_text(record["ts"]),
            fingerprints=_fingerprints(record.get("fingerprints")),
            status=_text(record["status"]),
            message=_text(record.get("message", b"")),
            received_at=float(_text(record.get("received_at", b"0"))),
            severity=_text(record.get("severity", b"")),
            acknowledged=_text(record.get("acknowledged", b"")),
            acknowledged_at=float(_text(record.get("acknowledged_at", b"0"))),
        )

    async def update_post(
        self,
        group_key: str,
        *,
        fingerprints: Iterable[str] | None = None,
        status: str | None = None,
        message: str | None = None,
        received_at: float | None = None,
        severity: str | None = None,
        acknowledged: tuple[str, float] | None = None,
        output: str | None = None,
    ) -> bool:
        """Store what the posted or updated message now shows. False when the group has no post.

        `message` is the rendered message as JSON (for the resolve update); `received_at` is
        when the webhook behind the current state arrived, so an older job can be recognised
        as superseded; `acknowledged`: the acknowledgement shown (its dedup key and when it
        was made); `output`: the kind of the output this write completes (its note is
        cleared with it).
        """
        fields: list[str] = []
        if fingerprints is not None:
            fields += ["fingerprints", _fingerprints_json(fingerprints)]
        if status is not None:
            fields += ["status", status]
        if message is not None:
            fields += ["message", message]
        if received_at is not None:
            fields += ["received_at", repr(received_at)]
        if severity is not None:
            fields += ["severity", severity]
        if acknowledged is not None:
            fields += ["acknowledged", acknowledged[0], "acknowledged_at", repr(acknowledged[1])]
        note = output or ""
        done = await self._update(
            keys=[self._post_key(group_key)], args=[self.post_ttl_s, note, *fields]
        )
        return bool(done)
