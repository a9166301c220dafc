"""When a job runs again: a job that cannot be done yet, and the backoff between tries."""

from __future__ import annotations

import random


class RetryLater(Exception):
    """The job cannot be done yet (a claim in flight); put it back for `delay_s`."""

    def __init__(self, reason: str, delay_s: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay_s = delay_s


#: Longest wait between delivery attempts: after a Slack outage ends, every page is out
#: within about this long.
MAX_BACKOFF_S = 60.0


def backoff_s(attempts: int, retry_after: float | None = None) -> float:
    """Slack's Retry-After when given, else exponential with jitter up to MAX_BACKOFF_S."""
    if retry_after is not None:
        return max(0.5, retry_after)
    return float(min(MAX_BACKOFF_S, 2.0 ** min(attempts, 9)) * (0.5 + random.random() / 2))
