"""Pages that arrive while the service builds its index for the first time.

A service started on an empty index (a new deployment, a wiped data folder) syncs its
runbooks before it can answer from them. A page searched meanwhile finds few runbooks or
none and says "no confident match", which is wrong: nothing was looked at. So the workers
hold their jobs, queued and durable, until the first sync is done, for at most
FIRST_SYNC_WAIT_S; a page that waits longer goes out saying that the runbooks are still
being indexed (the "search unavailable" page), never "no match". A service restarted on an
index that holds every configured source's runbooks holds nothing.

The same goes for one source that has never loaded (a git remote whose first clone was
refused, a misspelt RUNBOOK_ROOTS entry): its runbooks are not in the index, so a page that
finds no confident match goes out as "runbook search unavailable: runbooks from <source> are
not loaded (<reason>)", never "no match" with a suggestion to write a runbook that exists.
A confident match from the sources that did load goes out as usual.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from enricher.result import SearchResult

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
    #: The configured sources that have never loaded, each with why.
    unloaded: Callable[[], Mapping[str, str]] = field(default=lambda: {})

    @property
    def pending(self) -> bool:
        return not self.built.is_set()

    def settle(self, result: SearchResult) -> SearchResult:
        """`result`, unless it found no confident match while a source has never loaded:
        then search was not over all the runbooks, and the page says so."""
        missing = self.unloaded() if result.status == "no_match" else {}
        if not missing:
            return result
        reason = "; ".join(
            f"runbooks from {name} are not loaded ({why})" for name, why in missing.items()
        )
        return SearchResult(status="unavailable", tier=None, reason=reason)

    async def wait(self, stopping: asyncio.Event) -> None:
        """Return once the index is built, `wait_s` has passed, or the service stops."""
        deadline = time.monotonic() + self.wait_s
        while self.pending and not stopping.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)


__all__ = ["STILL_INDEXING", "FirstIndex"]
