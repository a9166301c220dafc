"""Thin timing wrappers around the real parts of the service: they delegate every call and
record into the probe of the search running on the current thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import numpy as np

from enricher.alert import Alert
from enricher.index import schema
from enricher.index.embedding import Embedder, SparseVector
from enricher.index.engine import Filter, Hit, Index, Record
from enricher.result import SearchResult
from enricher.search.feedback import NO_FEEDBACK, Tallies
from enricher.search.reader import Reader
from enricher.search.searcher import Searcher
from enricher.slack.delivery import BotDelivery, OnSent, PostRef
from enricher.slack.render import SlackMessage
from tests.fakeslack import FakeSlack


@dataclass
class Probe:
    """What one `Searcher.search` call spent, recorded by the thread that ran it."""

    alert: Alert
    dense_s: float = 0.0
    sparse_s: float = 0.0
    qdrant: list[tuple[str, float]] = field(default_factory=list)
    #: The reader's scoring (enricher.search.reader), 0 when the search did not read.
    reader_s: float = 0.0
    total_s: float = 0.0
    result: SearchResult | None = None


_local = threading.local()


def _probe() -> Probe | None:
    return cast(Probe | None, getattr(_local, "probe", None))


class TimedEmbedder:
    """The real Embedder; query embeddings are timed into the current probe."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.identity = inner.identity

    def dense_query(self, text: str) -> list[float]:
        started = time.perf_counter()
        vector = self.inner.dense_query(text)
        if (probe := _probe()) is not None:
            probe.dense_s += time.perf_counter() - started
        return vector

    def sparse_query(self, text: str) -> SparseVector:
        started = time.perf_counter()
        vector = self.inner.sparse_query(text)
        if (probe := _probe()) is not None:
            probe.sparse_s += time.perf_counter() - started
        return vector

    def dense(self, texts: Sequence[str], batch_size: int = 32) -> list[list[float]]:
        return self.inner.dense(texts, batch_size)

    def sparse(self, texts: Sequence[str]) -> list[SparseVector]:
        return self.inner.sparse(texts)


class TimedReader:
    """The real reader; each scoring is timed into the current probe."""

    def __init__(self, inner: Reader) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        """Everything else the searcher reads of its reader (digest, rerank_penalty)."""
        return getattr(self.inner, name)

    def score(
        self, pairs: Sequence[tuple[str, str]], stored: Sequence[np.ndarray | None] = ()
    ) -> list[float]:
        started = time.perf_counter()
        logits = self.inner.score(pairs, stored)
        if (probe := _probe()) is not None:
            probe.reader_s += time.perf_counter() - started
        return logits


def _hybrid_kind(flt: Filter) -> str:
    """What a hybrid call is for, by its filter: a tier of the search."""
    keys = {c.key for c in flt.must}
    if not keys:
        return "hybrid unfiltered"
    if schema.F_ALERT_KEYS in keys:
        return "hybrid alert_name"
    return "hybrid service" if schema.F_SERVICE_KEYS in keys else "hybrid other"


class TimedIndex:
    """The real index for the reads the searcher makes (hybrid and BM25 queries, scroll,
    retrieve), each timed into the current probe; everything else is passed through."""

    def __init__(self, inner: Index) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def hybrid(self, dense: Sequence[float], sparse: SparseVector, flt: Filter,
               **kwargs: Any) -> list[Hit]:
        return cast(list[Hit], self._timed(_hybrid_kind(flt), self.inner.hybrid, dense, sparse,
                                           flt, **kwargs))

    def sparse_search(self, sparse: SparseVector, flt: Filter, **kwargs: Any) -> list[Hit]:
        return cast(list[Hit], self._timed("bm25 only", self.inner.sparse_search, sparse, flt,
                                           **kwargs))

    def scroll(self, flt: Filter, limit: int, **kwargs: Any) -> tuple[list[Record], str | None]:
        return cast(tuple[list[Record], str | None],
                    self._timed("scroll", self.inner.scroll, flt, limit, **kwargs))

    def retrieve(self, ids: Sequence[str]) -> list[Record]:
        return cast(list[Record], self._timed("retrieve", self.inner.retrieve, ids))

    @staticmethod
    def _timed(kind: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        response = call(*args, **kwargs)
        if (probe := _probe()) is not None:
            probe.qdrant.append((kind, time.perf_counter() - started))
        return response


class TimedSearcher(Searcher):
    """The service's Searcher, recording one Probe per search (in call order)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probes: list[Probe] = []

    def search(
        self, alert: Alert, now: datetime | None = None, *, feedback: Tallies = NO_FEEDBACK
    ) -> SearchResult:
        probe = Probe(alert=alert)
        _local.probe = probe
        started = time.perf_counter()
        try:
            result = super().search(alert, now, feedback=feedback)
        finally:
            _local.probe = None
        probe.total_s = time.perf_counter() - started
        probe.result = result
        self.probes.append(probe)
        return result


class TimedBotDelivery(BotDelivery):
    """The real bot delivery; records when each chat.postMessage call starts."""

    def __init__(self, token: str, base_url: str) -> None:
        super().__init__(token, base_url)
        self.post_started: list[float] = []

    async def post(
        self, channel: str, message: SlackMessage, marker: str, *, on_sent: OnSent | None = None
    ) -> PostRef:
        self.post_started.append(time.perf_counter())
        return await super().post(channel, message, marker, on_sent=on_sent)


class StampedSlack(FakeSlack):
    """The fake Slack API, stamping when each successful chat.postMessage arrives."""

    def __init__(self, token: str) -> None:
        super().__init__(token=token)
        self.received: list[float] = []
        self.arrived = threading.Condition()

    def _handle(self, method: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        at = time.perf_counter()
        reply = super()._handle(method, body, headers)
        if method == "chat.postMessage" and reply.ok:
            with self.arrived:
                self.received.append(at)
                self.arrived.notify_all()
        return reply

    def wait_for_posts(self, count: int, timeout_s: float) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout=timeout_s)
