"""Pages that arrive while the service builds its index for the first time.

A service started on an empty index (a new deployment, a wiped data folder) syncs its
runbooks before it can answer from them. A page searched meanwhile finds few runbooks or
none and says "no confident match", which is wrong: nothing was looked at. So the workers
hold their jobs, queued and durable, until the first sync is done, for at most
FIRST_SYNC_WAIT_S; a page that waits longer goes out saying that the runbooks are still
being indexed (the "search unavailable" page), never "no match". A service restarted on an
index it already has holds nothing.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

#: How often a held worker looks at the sync again.
POLL_S = 0.1
#: The reason the page gives while the first sync is still running.
STILL_INDEXING = (
    "the runbooks are still being indexed for the first time; the next page will have them"
)


@dataclass(frozen=True)
class FirstIndex:
    """The first sync of an empty index: `built` is set when it has finished."""

    built: threading.Event
    wait_s: float

    @property
    def pending(self) -> bool:
        return not self.built.is_set()

    async def wait(self, stopping: asyncio.Event) -> None:
        """Return once the index is built, `wait_s` has passed, or the service stops."""
        deadline = time.monotonic() + self.wait_s
        while self.pending and not stopping.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)


__all__ = ["STILL_INDEXING", "FirstIndex"]
