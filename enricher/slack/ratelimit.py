"""Slack's Retry-After, kept for every later call it covers.

Slack limits each Web API method per workspace, and chat.postMessage also per channel;
a 429 says how long to wait. Until then every other call of that method to that channel
would be refused as well, and each refused call still counts against the app. So after a
429, the calls it covers are not sent: they fail at once with the time left, and the job
queue brings their jobs back then. Nothing here sleeps, as nothing in delivery does.

The pause is per process: another replica of the service learns it from its own first 429.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from enricher.errors import DeliveryFailed

log = structlog.get_logger(__name__)

#: The failure of a call held back by a pause (Slack's own 429 is "ratelimited").
PAUSED = "ratelimit_pause"


class Pauses:
    """What Slack told us to wait for, by (method, target): a channel, or a webhook URL."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[tuple[str, str], float] = {}

    def check(self, method: str, target: str) -> None:
        """Raise DeliveryFailed (not permanent, `retry_after` the time left) while a 429
        given for this method and target holds."""
        key = (method, target)
        until = self._until.get(key)
        if until is None:
            return
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return
        raise DeliveryFailed(PAUSED, permanent=False, retry_after=left)

    def note(self, method: str, target: str, failure: DeliveryFailed) -> DeliveryFailed:
        """Remember a 429's Retry-After for the calls after it; returns `failure`."""
        if str(failure) == "ratelimited" and failure.retry_after is not None:
            key = (method, target)
            until = self._clock() + failure.retry_after
            if until > self._until.get(key, 0.0):
                self._until[key] = until
                log.warning(
                    "slack.rate_limited",
                    method=method,
                    target=target,
                    retry_after_s=failure.retry_after,
                    detail="calls of this method to this target wait until then; pages "
                    "queue meanwhile and none is lost. If it recurs, spread alerts over "
                    "more channels or group them harder in Alertmanager",
                )
        return failure
