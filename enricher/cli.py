"""What the Redis-reading CLIs share (enricher.feedback, enricher.gaps): settings, one client,
and errors that say what to do."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from enricher import logs, redis_connect
from enricher.errors import ConfigError
from enricher.settings import Settings, load_settings


def run_with_redis(work: Callable[[Settings, aioredis.Redis], Awaitable[str]]) -> int:
    """Print what `work` returns, run against REDIS_URL; exit status 2 with the fix when the
    settings are bad or Redis cannot be reached."""
    logs.configure(json=False, level="WARNING")

    async def run(settings: Settings) -> str:
        client = redis_connect.async_client(settings, socket_timeout=5)
        try:
            return await work(settings, client)
        finally:
            await redis_connect.aclose(client)

    try:
        out = asyncio.run(run(load_settings()))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RedisError as exc:
        print(
            f"error: Redis at REDIS_URL (or REDIS_SENTINELS) is unreachable "
            f"({type(exc).__name__}): start it, or point the settings at the service's Redis",
            file=sys.stderr,
        )
        return 2
    if out:
        print(out)
    return 0


__all__ = ["run_with_redis"]
