"""A corpus indexed for an evaluation: a throwaway embedded Qdrant, and what the scoring
reads from it (which runbooks exist, which say what to do, which section holds each anchor).

The corpus is indexed with the real embedders and `Syncer` under a temp dir, never the
configured data dir; closing the index deletes it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING
from enricher.search.confidence import Model
from enricher.search.decide import SearchConfig
from enricher.search.searcher import Searcher, build_searcher
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.sync import Syncer, SyncOptions, SyncReport
from quality.cases import unit_key

COLLECTION = "eval"


class EvalIndex:
    """The corpus in a throwaway embedded Qdrant; closing it deletes everything."""

    def __init__(self, corpus: Path, settings: Settings, embedder: Embedder | None = None) -> None:
        if not corpus.is_dir():
            raise ConfigError(f"corpus {corpus} is not a directory of runbooks")
        self._tmp = tempfile.TemporaryDirectory(prefix="enricher-eval-")
        self.settings = settings.model_copy(
            update={
                "qdrant_url": None,
                "qdrant_path": Path(self._tmp.name),
                "qdrant_collection": COLLECTION,
            }
        )
        self.embedder = embedder or Embedder(settings)
        self.index = open_index(self.settings)
        cache = EmbeddingCache(connect(settings.redis_url), self.embedder.identity.dense)
        options = SyncOptions.from_settings(settings, [corpus], use_git=False, prune=False)
        try:
            self.sync: SyncReport = Syncer(self.index, self.embedder, cache).run(options)
            points, _ = self.index.scroll(
                EVERYTHING,
                1_000_000,
                fields=[
                    schema.F_PATH,
                    schema.F_DOC_ID,
                    schema.F_ACTIONABLE,
                    schema.F_UNIT_ANCHOR,
                    schema.F_ANCHOR,
                ],
            )
        except BaseException:
            self.close()
            raise
        payloads = [p.payload for p in points]
        self.paths = frozenset(str(p[schema.F_PATH]) for p in payloads)
        #: Runbooks with a section that says what to do: by path, and by unit key.
        self.actionable = frozenset(
            key
            for p in payloads
            if p.get(schema.F_ACTIONABLE) == schema.Actionable.HEADING
            for key in (str(p[schema.F_PATH]), payload_key(p))
        )
        #: Doc id by unit key (the path for a whole-file runbook), to leave a case's runbook
        #: out of its own search.
        self.doc_ids = {payload_key(p): str(p[schema.F_DOC_ID]) for p in payloads}
        #: (path, heading anchor) -> the alert section it lies in ("" outside any): where a
        #: page's actionable part came from, read from the index, not from the search.
        self.unit_of = {
            (str(p[schema.F_PATH]), str(p.get(schema.F_ANCHOR, ""))): str(
                p.get(schema.F_UNIT_ANCHOR, "")
            )
            for p in payloads
        }

    def searcher(self, config: SearchConfig | None = None, model: Model | None = None) -> Searcher:
        """The webhook's searcher as settings build it: its decision and its reader, with
        `config` in place of the settings' recipe when given (the eval's ablations).
        With `model`, that decision and no reader: features collected for a fit
        (quality.calibrate) and lists mined for the reader to train on (quality.train.mine)
        come before any reader, which is applied afterwards (quality.reading)."""
        if model is None:
            return build_searcher(self.settings, self.index, self.embedder, config)
        config = config or SearchConfig.from_settings(self.settings)
        return Searcher(self.index, self.embedder, config, model)

    def close(self) -> None:
        self.index.close()
        self._tmp.cleanup()

    def __enter__(self) -> EvalIndex:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def payload_key(payload: dict[str, Any]) -> str:
    """What a case names a chunk's runbook by: its path, with the alert section's anchor
    when it is one (quality.cases.unit_key)."""
    return unit_key(str(payload[schema.F_PATH]), str(payload.get(schema.F_UNIT_ANCHOR, "")))
