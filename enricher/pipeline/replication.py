"""Writes that must survive the loss of the primary: Redis WAIT after the write, bounded.

Redis replicates asynchronously: a primary answers a write before any replica has it, and a
replica promoted by Sentinel after the primary died lacks whatever had not reached it. The
intake must not answer 202 for a job that a failover can take back, so with
REDIS_MIN_REPLICAS_ACK=N it sends `WAIT N timeout` on the connection of the write, in the
same pipeline, and refuses (`NotReplicated`, a 503 for the sender) when fewer than N replicas
confirmed in time. The write itself stays on the primary: when the sender retries, the
dedup mark answers "duplicate", and that answer waits for the replicas too (`witness`).

WAIT covers every write the connection made before it: a replica that acknowledged an
offset holds the whole replication stream up to it, so one WAIT after the last write of a
step is enough.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from enricher.errors import NotReplicated


@dataclass(frozen=True)
class ReplicaAck:
    """Wait for `replicas` replicas, at most `timeout_ms` (keep it under the client's socket
    timeout, or the wait reads as a dead connection)."""

    replicas: int
    timeout_ms: int

    async def run(
        self,
        client: aioredis.Redis,
        script: AsyncScript,
        *,
        keys: Sequence[str],
        args: Sequence[Any],
        witness: str,
    ) -> Any:
        """`script(keys, args)`'s reply once its effect is on the replicas; NotReplicated
        when it is not within the timeout.

        `witness`: a key the script sets or found set (the dedup mark). When the script
        wrote nothing (a repeat), the write it found may be an earlier call's that never
        reached a replica (that call was answered 503); rewriting the key unchanged (SET XX
        KEEPTTL) puts a write after it in the stream, so the WAIT covers it too."""
        reply, acked = await self.attempt(client, script, keys=keys, args=args, witness=witness)
        if acked < self.replicas:
            raise NotReplicated(self.replicas, acked, self.timeout_ms)
        return reply

    async def attempt(
        self,
        client: aioredis.Redis,
        script: AsyncScript,
        *,
        keys: Sequence[str],
        args: Sequence[Any],
        witness: str | None = None,
    ) -> tuple[Any, int]:
        """`script(keys, args)`'s reply and how many replicas confirmed it within the
        timeout, for a write whose caller goes on either way (a post claim: a page late
        for want of a replica is worse than the rare duplicate the WAIT guards against).
        A script that wrote nothing waits only for the connection's earlier writes, unless
        `witness` is rewritten after it (`run`)."""
        async with client.pipeline(transaction=False) as pipe:
            await script(keys=keys, args=args, client=pipe)
            if witness is not None:
                pipe.set(witness, "1", xx=True, keepttl=True)
            pipe.wait(self.replicas, self.timeout_ms)
            replies = await pipe.execute()
        return replies[0], int(replies[-1])


__all__ = ["ReplicaAck"]
