"""PagerDuty incident notes, each added once, through the page's own ledger record.

The note rides on the group's post record (enricher.pipeline.ledger, `rbe:post:<group>`):

    note          the note's text, rendered with the page from the same search
    note_ref      the `ref` its last line carries (enricher.notes.content)
    note_state    owed | sending | unsure | done | failed | gone
    note_owner, note_at, note_lease   who is sending it, since when (Redis clock)

`owe` writes it while the page's post claim is held, before Slack is called: a process that
dies after the page went out (whether or not the page was recorded) leaves the note owed on
the record, and the job's re-run (the worker re-reads its entry after a restart) finds the
page posted and sends the note. So the page always goes first, and a note failure never
holds it back: the note is only sent once the record says "posted".

`deliver` runs after every PagerDuty job of the group. A Lua step claims the note
(owed → sending, with a lease like the post's); a job that finds it sending under another
live worker comes back later (RetryLater), so a sender that died on another replica is
taken over once its lease runs out, not forgotten. A claim that takes over a dead sender's, or
follows a failure after which PagerDuty may have stored the note (5xx, a timeout), first
lists the incident's notes and looks for the ref: found, it is done and not sent again.
So a kill -9 anywhere, a restart or a redelivered webhook never adds a second note.

Failures: 429 waits for PagerDuty's `Retry-After` / `ratelimit-reset`; 5xx and timeouts
back off; each retries the job (RetryLater, the page already out) up to MAX_TRIES. 401 and
403 mean the key: the note is dropped, /readyz states it (`NotesHealth`, a warning that
leaves the service ready) and it is logged once. 404: the incident is gone, dropped with a
log line. Redis failing here is logged and the note skipped: the page is what matters.
"""

from __future__ import annotations

import hashlib
from typing import Any

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from enricher.notes.client import NoteFailed, NotesClient
from enricher.notes.content import NotesMode, render_note
from enricher.pipeline.ledger import Ledger
from enricher.pipeline.queue import Job
from enricher.pipeline.retry import RetryLater, backoff_s
from enricher.result import SearchResult

log = structlog.get_logger(__name__)

#: Tries of one note (429s and 5xx, each a retry of its job) before it is given up.
MAX_TRIES = 20

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

_OWE = """
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'note_owner', 'note_at', 'note_lease', 'note_tries', 'note_id')
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'note', 'note_ref', 'note_state')
else
  redis.call('HSET', KEYS[1], 'note', ARGV[2], 'note_ref', ARGV[3], 'note_state', 'owed')
end
return 1
"""

# A sender of an earlier process of the same worker id (`<worker>:<nonce>`) is dead.
_CLAIM = (
    _NOW
    + """
local rec = redis.call('HMGET', KEYS[1], 'state', 'note_state', 'note_owner', 'note_at',
                       'note_lease', 'note', 'note_ref', 'note_tries')
if rec[1] ~= 'posted' or not rec[2] then return {'none'} end
local check = '0'
if rec[2] == 'sending' then
  local me = string.match(ARGV[1], '^(.*):[^:]*$')
  local dead = rec[3] ~= ARGV[1] and me ~= nil and string.match(rec[3], '^(.*):[^:]*$') == me
  local left = tonumber(rec[5]) - (now - tonumber(rec[4]))
  if left >= 0 and not dead then return {'inflight', string.format('%.3f', left)} end
  check = '1'
elseif rec[2] == 'unsure' then
  check = '1'
elseif rec[2] ~= 'owed' then
  return {'none'}
end
local tries = tonumber(rec[8] or '0') + 1
redis.call('HSET', KEYS[1], 'note_state', 'sending', 'note_owner', ARGV[1],
           'note_at', string.format('%.6f', now), 'note_lease', ARGV[2], 'note_tries', tries)
return {'claimed', check, rec[6], rec[7], tostring(tries)}
"""
)

_SETTLE = """
if redis.call('HGET', KEYS[1], 'note_owner') ~= ARGV[1]
   or redis.call('HGET', KEYS[1], 'note_state') ~= 'sending' then return 0 end
redis.call('HSET', KEYS[1], 'note_state', ARGV[2], 'note_id', ARGV[3])
redis.call('HDEL', KEYS[1], 'note_owner')
return 1
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NotesHealth:
    """The /readyz entry: a warning once PagerDuty refused the key (401/403), until a note
    is added again. Still ready: the pages go out, and a replica taken out of its load
    balancer over a bad PagerDuty key would stop them."""

    def __init__(self) -> None:
        self.refused = ""

    def check(self) -> dict[str, Any]:
        if not self.refused:
            return {"ok": True}
        return {"ok": True, "warning": self.refused}


class IncidentNotes:
    def __init__(
        self,
        redis: aioredis.Redis,
        ledger: Ledger,
        client: NotesClient,
        *,
        mode: NotesMode,
        base_url: str | None,
        lease_s: float,
    ) -> None:
        self.ledger = ledger
        self.client = client
        self.mode = mode
        self.base_url = base_url
        self.lease_s = lease_s
        self.health = NotesHealth()
        self._owe = redis.register_script(_OWE)
        self._claim = redis.register_script(_CLAIM)
        self._settle = redis.register_script(_SETTLE)

    def _key(self, group_key: str) -> str:
        return self.ledger.owed_post(group_key)[0]

    async def owe(self, job: Job, result: SearchResult, owner: str) -> None:
        """Under the post claim, before the page is sent: the note this page owes (or
        none, clearing an earlier page's). Only for PagerDuty incidents."""
        if job.source != "pagerduty":
            return
        ref = hashlib.sha256(f"{job.group_key}\n{job.dedup_key}".encode()).hexdigest()[:12]
        note = render_note(result, mode=self.mode, base_url=self.base_url, ref=ref) or ""
        await self._owe(keys=[self._key(job.group_key)], args=[owner, note, ref])

    async def deliver(self, job: Job, owner: str) -> None:
        """Send the group's owed note, once. RetryLater when PagerDuty asks to wait."""
        if job.source != "pagerduty":
            return
        group = job.group_key
        try:
            reply = await self._claim(
                keys=[self._key(group)], args=[owner, repr(float(self.lease_s))]
            )
        except RedisError as exc:
            log.warning("pagerduty.note_skipped", incident=group, error=type(exc).__name__,
                        fix="check Redis; the note is sent when the incident's next event runs")
            return
        if _text(reply[0]) == "inflight":
            # Another worker is sending it; if that one died, its lease runs out and this
            # job, back then, takes the note over (with the lookup).
            raise RetryLater("pagerduty note in flight", delay_s=min(30.0, float(reply[1]) + 1))
        if _text(reply[0]) != "claimed":
            return
        check, content, ref = _text(reply[1]) == "1", _text(reply[2]), _text(reply[3])
        tries = int(_text(reply[4]))
        try:
            if check and await self.client.find(group, ref):
                await self._settled(group, owner, "done", "")
                log.info("pagerduty.note_found", incident=group, ref=ref)
                return
            note_id = await self.client.create(group, content)
        except NoteFailed as exc:
            await self._failed(job, owner, exc, tries)
            return
        await self._settled(group, owner, "done", note_id)
        if self.health.refused:
            log.info("pagerduty.notes_recovered")
        self.health.refused = ""
        log.info("pagerduty.note_added", incident=group, note=note_id, chars=len(content))

    async def _settled(self, group: str, owner: str, state: str, note_id: str) -> None:
        await self._settle(keys=[self._key(group)], args=[owner, state, note_id])

    async def _failed(self, job: Job, owner: str, exc: NoteFailed, tries: int) -> None:
        group = job.group_key
        if exc.permanent:
            await self._settled(group, owner, "failed", "")
            if exc.status in (401, 403):
                if not self.health.refused:
                    log.error("pagerduty.notes_refused", status=exc.status, error=exc.reason)
                self.health.refused = exc.reason
            else:
                log.error("pagerduty.note_rejected", incident=group, error=exc.reason)
            return
        if exc.gone:
            await self._settled(group, owner, "gone", "")
            log.warning("pagerduty.note_dropped", incident=group, reason=exc.reason)
            return
        if tries >= MAX_TRIES:
            await self._settled(group, owner, "failed", "")
            log.error("pagerduty.note_given_up", incident=group, tries=tries, error=exc.reason,
                      fix="PagerDuty kept failing; add the runbook to the incident by hand")
            return
        # Back to owed (or unsure: PagerDuty may have stored it, so look before resending).
        await self._settled(group, owner, "unsure" if exc.maybe_sent else "owed", "")
        delay = backoff_s(tries, exc.retry_after)
        log.warning("pagerduty.note_retry", incident=group, error=exc.reason, tries=tries,
                    delay_s=round(delay, 2))
        raise RetryLater(f"pagerduty note: {exc.reason}", delay_s=delay)
