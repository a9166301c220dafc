"""Durable intake queue: accepted webhooks wait in Redis until a worker has delivered them.

Redis layout (every key is in the `rbe:` namespace):

    rbe:jobs      stream + consumer group "enrichers". Holds only unfinished work: an entry
                  is XACKed *and* XDELed together once its job is done, so XLEN is the backlog.
                  Fields: format ("2"), alert (the normalized `Alert` as JSON), fingerprints
                  (JSON list), dedup_key, received_at (epoch s), prior_attempts (deliveries
                  spent on earlier copies), and retry_of (the entry id it was re-queued from,
                  only on re-queued copies).
    rbe:delayed   sorted set of jobs waiting out a delay (Slack 429, resolve before its
                  firing post). Score = due time in epoch ms by the Redis clock; member = the
                  same fields as a stream entry, netstring-encoded (`<len>:<bytes>,` for each
                  name and value) so a Lua script can move it back into the stream whole.
    rbe:dead      stream of jobs given up on: the job fields plus reason, dead_at, entry_id.

The fields are written and read by `enricher.pipeline.entry`: the queue carries the
normalized `Alert`, parsed once at the HTTP edge.

Why no MAXLEN on rbe:jobs: XADD MAXLEN trims from the head whether or not an entry was
acknowledged, so a cap silently drops unfinished pages. The stream only holds unfinished work,
so its length is bounded by how far the workers are behind; alert on `depth()` instead.
rbe:dead is capped (approximately `dead_maxlen`) because its entries need no more work.

One consumer per worker. Each worker reads as its own consumer of the group
(`JobQueue.worker`: "<WORKER_ID>-<worker index>"), stable across restarts, and holds one
job at a time. So a pending entry belongs to exactly one worker: when that worker reads, it
holds nothing, and whatever its consumer still has pending is a leftover of a try that was
cut short (a kill, or Redis failing before the ack). While it works on a job it keeps the
entry fresh (`touch`, every third of `claim_idle_ms`), so no other consumer takes it over.

Delivery is at least once. A job comes back after a crash in three ways, all in `read()`:
- a restarted worker first re-reads its own consumer's pending entries;
- entries idle for at least `claim_idle_ms` are taken over (XAUTOCLAIM): a dead replica's
  work, or a worker's that is gone (WORKERS lowered, or the consumer name of a release
  before per-worker consumers);
- delayed jobs that are due are moved back into the stream (`promote_due`).
Duplicates are therefore possible and the ledger (`enricher.pipeline.ledger`) makes Slack posting
idempotent. A worker that has to wait (429, missing firing post) calls `retry_later` instead
of holding the job.

Attempts. `Job.attempts` is the entry's delivery count (plus `prior_attempts` of re-queued
copies): one per time a worker was handed the job to work on it, the try a kill cut short
included (a job that kills its process is then not retried for ever). Touching an entry does
not count (XCLAIM JUSTID), and since no two workers are handed one entry, nothing else does.

The queue does not order jobs per alert group: several workers read concurrently and
retries move jobs back. Ordering is enforced at delivery time by the ledger (a resolve whose
firing post is not stored yet is retried later).

Every method raises `redis.exceptions.ConnectionError` (or `TimeoutError`) when Redis is
unreachable. The queue does not hide that: the intake falls back to in-process delivery and
the worker loop backs off, both logging it (DESIGN.md §7). Once Redis is back the same
client reconnects on its own; a lost consumer group (Redis restarted without persistence)
is re-created by `read()`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from enricher.pipeline.entry import Fields, Job, decode, encode, from_netstrings, netstrings
from enricher.pipeline.replication import ReplicaAck
from enricher.sources import Parsed

_PROMOTE_BATCH = 100

# Moves due members of the delayed set back into the stream. One script, so a job is in
# exactly one of the two places at any moment: never lost, never duplicated.
_PROMOTE_DUE = """
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms, 'LIMIT', 0, ARGV[1])
for _, member in ipairs(due) do
  local fields = {}
  local pos = 1
  while pos <= #member do
    local colon = string.find(member, ':', pos, true)
    local n = tonumber(string.sub(member, pos, colon - 1))
    fields[#fields + 1] = string.sub(member, colon + 1, colon + n)
    pos = colon + n + 2
  end
  redis.call('XADD', KEYS[2], '*', unpack(fields))
  redis.call('ZREM', KEYS[1], member)
end
return #due
"""

# Acknowledges an entry and parks a copy in the delayed set. If the entry is no longer
# pending (someone else finished it), nothing is parked, so a retry never resurrects it.
_RETRY_LATER = """
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now_ms + tonumber(ARGV[4]), ARGV[3])
return 1
"""

# Copies an entry to the dead-letter stream and acknowledges it, guarded like _RETRY_LATER.
_DEAD_LETTER = """
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local fields = {'dead_at', t[1] .. '.' .. string.format('%06d', tonumber(t[2]))}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', unpack(fields))
return 1
"""


# Keeps an entry this consumer holds from looking idle (XAUTOCLAIM takes idle entries). JUSTID
# leaves the delivery count alone. Does nothing when another consumer has it (or it is done).
_TOUCH = """
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2]) == 0 then
  return 0
end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
"""


# Marks the dedup key and appends the job in one step: a crash can never leave a key marked
# "seen" whose job is missing (the sender's redelivery would be swallowed as a duplicate).
# For a firing job it also marks the group's post as owed ("pending") unless the group
# already has a record, so a resolve processed first waits for its firing page.
_ENQUEUE_ONCE = """
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return false end
if ARGV[2] ~= '' and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('HSET', KEYS[3], 'state', 'pending', 'owner', '', 'check_marker', '0')
  redis.call('EXPIRE', KEYS[3], ARGV[2])
end
return redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
"""


class JobQueue:
    """The `rbe:jobs` stream seen by one consumer of the group.

    `consumer` must be stable across restarts so that a restarted worker finds its own
    unfinished entries, and used by one worker at a time: a process passes its WORKER_ID and
    gives each worker its own view (`worker`). Anything left by a consumer that never comes
    back is taken over by the others after `claim_idle_ms`.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        consumer: str,
        stream: str = "rbe:jobs",
        group: str = "enrichers",
        delayed: str = "rbe:delayed",
        dead: str = "rbe:dead",
        claim_idle_ms: int,
        dead_maxlen: int = 10_000,
        replica_ack: ReplicaAck | None = None,
    ) -> None:
        options = client.connection_pool.connection_kwargs
        if options.get("decode_responses") or options.get("legacy_responses") is False:
            raise ValueError(
                "JobQueue needs a Redis client with decode_responses=False (job bodies are raw "
                "bytes) and legacy_responses=True (the default; replies are read in that shape)"
            )
        self._redis = client
        self.consumer = consumer
        self.stream = stream
        self.group = group
        self.delayed = delayed
        self.dead = dead
        self.claim_idle_ms = claim_idle_ms
        self.dead_maxlen = dead_maxlen
        #: Intake waits for this many replicas to hold a job (enricher.pipeline.replication).
        self.replica_ack = replica_ack
        self._promote = client.register_script(_PROMOTE_DUE)
        self._retry = client.register_script(_RETRY_LATER)
        self._bury = client.register_script(_DEAD_LETTER)
        self._enqueue_once = client.register_script(_ENQUEUE_ONCE)
        self._touch = client.register_script(_TOUCH)
        # Own pending entries are re-read from here until none are left, then only new ones.
        self._backlog_from: str | None = "0"
        self._autoclaim_from = "0-0"

    def worker(self, number: int) -> JobQueue:
        """The same queue as worker `number` of this process reads it: its own consumer,
        "<consumer>-<number>", the same after a restart."""
        return JobQueue(
            self._redis,
            consumer=f"{self.consumer}-{number}",
            stream=self.stream,
            group=self.group,
            delayed=self.delayed,
            dead=self.dead,
            claim_idle_ms=self.claim_idle_ms,
            dead_maxlen=self.dead_maxlen,
        )

    def rewind(self) -> None:
        """Read this consumer's pending entries again first: after Redis came back, a job
        whose ack was lost with the connection is still pending here."""
        self._backlog_from = "0"
        self._autoclaim_from = "0-0"

    async def ensure_group(self) -> None:
        """Create the stream and group if missing. Starts at "0" so nothing already queued
        is skipped, e.g. jobs accepted after a Redis restart but before the workers noticed."""
        try:
            await self._redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self.rewind()

    async def enqueue_once(
        self,
        job: Job,
        seen_key: str,
        ttl_ms: int,
        *,
        owed_post: tuple[str, int] | None = None,
    ) -> str | None:
        """Append the job unless `seen_key` is already set; set it (for `ttl_ms`) atomically
        with the append. Returns the entry id, or None for a repeat.

        `owed_post`: (post record key, TTL s) of the ledger, for a firing job: the group's
        post is marked "pending" in the same step unless the group has a record already.
        With `replica_ack`, the answer (a new entry or a repeat) waits until the replicas
        hold the job; NotReplicated when they do not in time.
        """
        post_key, post_ttl = owed_post if owed_post is not None else (seen_key, None)
        args: list[bytes | int | str] = [ttl_ms, "" if post_ttl is None else post_ttl]
        for name, value in encode(job).items():
            args += [name, value]
        keys = [self.stream, seen_key, post_key]
        if self.replica_ack is None:
            entry = await self._enqueue_once(keys=keys, args=args)
        else:
            entry = await self.replica_ack.run(
                self._redis, self._enqueue_once, keys=keys, args=args, witness=seen_key
            )
        return _text(entry) if entry else None

    async def read(self, count: int = 10, block_ms: int = 0) -> list[Job]:
        """Up to `count` jobs: own leftovers first, then stale work of dead consumers, then
        new entries. Blocks up to `block_ms` only when nothing else is available; 0 returns
        at once (unlike Redis, where 0 blocks forever, which would stall a shutdown).
        Keep `block_ms` short (about a second) and below the client's socket_timeout: a delayed
        job that falls due while this call blocks is only moved on the next call."""
        try:
            return await self._read(count, block_ms)
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.ensure_group()
            return await self._read(count, block_ms)

    async def _read(self, count: int, block_ms: int) -> list[Job]:
        await self.promote_due()
        jobs: list[Job] = []
        if self._backlog_from is not None:
            jobs += await self._read_backlog(count)
        if len(jobs) < count:
            jobs += await self._autoclaim(count - len(jobs))
        if len(jobs) < count:
            blocked = block_ms > 0 and not jobs
            reply = await self._redis.xreadgroup(
                self.group,
                self.consumer,
                {self.stream: ">"},
                count=count - len(jobs),
                block=block_ms if blocked else None,
            )
            if blocked and reply:
                # Most often an intake's XADD woke this read, and Redis (7.0) answers the
                # woken reader before the intake: step aside once, so that webhook's 202
                # goes out before the job it queued takes the event loop (PERFORMANCE.md).
                await asyncio.sleep(0)
            jobs += await self._accept(_entries(reply), fresh=True)
        return jobs

    async def _read_backlog(self, count: int) -> list[Job]:
        assert self._backlog_from is not None
        reply = await self._redis.xreadgroup(
            self.group, self.consumer, {self.stream: self._backlog_from}, count=count
        )
        entries = _entries(reply)
        if not entries:
            self._backlog_from = None
            return []
        self._backlog_from = entries[-1][0]
        return await self._accept(entries, fresh=False)

    async def _autoclaim(self, count: int) -> list[Job]:
        reply = await self._redis.xautoclaim(
            self.stream,
            self.group,
            self.consumer,
            min_idle_time=self.claim_idle_ms,
            start_id=self._autoclaim_from,
            count=count,
        )
        cursor, claimed = reply[0], reply[1]
        self._autoclaim_from = _text(cursor)
        return await self._accept([(_text(i), f) for i, f in claimed], fresh=False)

    async def _accept(self, entries: list[tuple[str, Fields]], *, fresh: bool) -> list[Job]:
        """Turn entries into jobs. Entries deleted under us are acknowledged away; entries
        that do not decode go to the dead-letter stream instead of being retried forever."""
        live = [(i, f) for i, f in entries if f]
        gone = [i for i, f in entries if not f]
        if gone:
            await self._redis.xack(self.stream, self.group, *gone)
        deliveries = [1] * len(live) if fresh else await self._deliveries([i for i, _ in live])
        jobs: list[Job] = []
        for (entry_id, fields), delivered in zip(live, deliveries, strict=True):
            job = decode(entry_id, fields, delivered)
            if job is None:
                await self._bury_entry(entry_id, fields, "malformed entry")
            else:
                jobs.append(job)
        return jobs

    async def _deliveries(self, entry_ids: list[str]) -> list[int]:
        if not entry_ids:
            return []
        pipe = self._redis.pipeline(transaction=False)
        for entry_id in entry_ids:
            pipe.xpending_range(self.stream, self.group, min=entry_id, max=entry_id, count=1)
        replies = await pipe.execute()
        return [int(r[0]["times_delivered"]) if r else 1 for r in replies]

    async def touch(self, job: Job) -> bool:
        """Mark the job's entry as being worked on, so no consumer takes it over as idle;
        False when this consumer no longer holds it (taken over, or finished)."""
        _require_id(job)
        done = await self._touch(keys=[self.stream], args=[self.group, self.consumer, job.id])
        return bool(done)

    async def ack(self, job: Job) -> None:
        """The job is done: acknowledge and delete it in one transaction."""
        _require_id(job)
        pipe = self._redis.pipeline(transaction=True)
        pipe.xack(self.stream, self.group, job.id)
        pipe.xdel(self.stream, job.id)
        await pipe.execute()

    async def retry_later(self, job: Job, delay_s: float, *, count: bool = True) -> bool:
        """Finish this delivery and run the job again after `delay_s` (by the Redis clock).
        Other jobs are not held up meanwhile. `count`: this delivery counts in `attempts`
        (a failure); False for a job that only had to wait, so waiting does not inflate the
        backoff of later failures. Returns False, doing nothing, when the entry was already
        finished elsewhere."""
        _require_id(job)
        copy = job if count else replace(job, attempts=max(0, job.attempts - 1))
        member = netstrings(encode(copy, retry_of=job.id))
        done = await self._retry(
            keys=[self.stream, self.delayed],
            args=[self.group, job.id, member, max(0, round(delay_s * 1000))],
        )
        return bool(done)

    async def promote_due(self) -> int:
        """Move delayed jobs that are due back into the stream; returns how many moved."""
        moved = 0
        while True:
            batch = int(
                await self._promote(keys=[self.delayed, self.stream], args=[_PROMOTE_BATCH])
            )
            moved += batch
            if batch < _PROMOTE_BATCH:
                return moved

    async def dead_letter(self, job: Job, reason: str) -> bool:
        """Give up on the job: copy it to the dead-letter stream with `reason` and finish it.
        Returns False, doing nothing, when the entry was already finished elsewhere."""
        _require_id(job)
        return await self._bury_entry(job.id, encode(job), reason)

    async def _bury_entry(self, entry_id: str, fields: Fields, reason: str) -> bool:
        done = await self._bury(
            keys=[self.stream, self.dead],
            args=[
                self.group,
                entry_id,
                self.dead_maxlen,
                b"reason",
                reason.encode(),
                b"entry_id",
                entry_id.encode(),
                *(p for pair in fields.items() for p in pair),
            ],
        )
        return bool(done)

    async def backlog(self) -> int:
        """Every unfinished job, in the stream or waiting out a delay, read in one
        transaction: a job moving between the two is never missed or counted twice."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.xlen(self.stream)
        pipe.zcard(self.delayed)
        in_stream, delayed = await pipe.execute()
        return int(in_stream) + int(delayed)

    async def dead_count(self) -> int:
        """Entries in the dead-letter stream (saturates near `dead_maxlen`)."""
        return int(await self._redis.xlen(self.dead))

    async def pending_age_s(self, sample: int = 100) -> float:
        """Seconds since the oldest unfinished job was *accepted*, in the stream or delayed;
        0 when none. Uses each job's `received_at`, so a job re-queued by retries keeps its
        age (an alert on this fires during a long Slack outage). Looks at the `sample`
        oldest entries of each place, which bounds the cost."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.time()
        pipe.xrange(self.stream, count=sample)
        pipe.zrange(self.delayed, 0, sample - 1)
        (secs, micros), entries, delayed = await pipe.execute()
        received = [float(f[b"received_at"]) for _, f in entries if f and b"received_at" in f]
        for member in delayed:
            fields = from_netstrings(member)
            if b"received_at" in fields:
                received.append(float(fields[b"received_at"]))
        if not received:
            return 0.0
        now = int(secs) + int(micros) / 1_000_000
        return max(0.0, now - min(received))


def _require_id(job: Job) -> None:
    if not job.id:
        raise ValueError(
            "job has no entry id: only jobs returned by JobQueue.read() can be "
            "acknowledged, retried or dead-lettered"
        )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _entries(reply: Any) -> list[tuple[str, Fields]]:
    """(id, fields) pairs of a one-stream XREADGROUP reply; a deleted entry has no fields."""
    return [(_text(i), f or {}) for _, batch in reply or [] for i, f in batch]


def new_job(parsed: Parsed, *, received_at: float | None = None) -> Job:
    """A job ready for `JobQueue.enqueue_once` (no id yet, no attempts spent)."""
    return Job(
        id="",
        alert=parsed.alert,
        dedup_key=parsed.dedup_key,
        fingerprints=parsed.fingerprints,
        received_at=time.time() if received_at is None else received_at,
        attempts=0,
    )


__all__ = ["Job", "JobQueue", "new_job"]
