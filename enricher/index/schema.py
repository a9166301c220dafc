"""The index contract: collection schema, vector names, payload fields and point ids.

`ingest` writes what `enricher` reads, so this module is the only place that knows how a
chunk is stored. The model identity is kept in the collection's metadata (enricher.index.
engine.Index.metadata) and checked before anything is read or written: vectors from two
models must never share a collection.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from enricher.errors import ConfigError
from enricher.index.embedding import ModelIdentity
from enricher.index.engine import Index
from enricher.index.stats import CorpusStats

DENSE = "dense"
SPARSE = "bm25"
SCHEMA_VERSION = 1

# Payload fields, written by ingest and read by search.
#: The runbook unit search keys on: the file's doc id ("<source>:<path>"), or for an alert's
#: section of a page with a section per alert, "<source>:<path>#<anchor>" (ingest.units).
F_DOC_ID = "doc_id"
#: The file (page) the unit is read from: what sync skips, refreshes and prunes as a whole.
F_PAGE_ID = "page_id"
#: The anchor of the unit's alert heading on its page; "" for a runbook that is a whole file.
F_UNIT_ANCHOR = "unit_anchor"
F_SOURCE = "source"
F_PATH = "path"
F_TITLE = "title"
F_SECTION = "section"
F_ANCHOR = "anchor"
F_TEXT = "text"
F_ALERT_NAMES = "alert_names"
F_ALERT_KEYS = "alert_keys"
F_SERVICES = "services"
F_SERVICE_KEYS = "service_keys"
F_REVISION = "revision"
F_DOC_HASH = "doc_hash"
F_LAST_UPDATED = "last_updated"
F_CHUNK_INDEX = "chunk_index"
F_EMBED_MODEL = "embed_model"
#: Identifiers in the chunk shaped like metric names (enricher.sources.promql.quoted_names).
F_METRICS = "metrics"
#: The document's path lower-cased without ".md" ("kubernetes/kubepodcrashlooping"): what an
#: alert's `runbook_url` is matched against.
F_PATH_KEY = "path_key"
#: How much the chunk says what to do (an `Actionable` level): the section a page shows
#: beside the best-matching one (ingest.chunking.actionable).
F_ACTIONABLE = "actionable"
#: Where a person reads the runbook (a git host's blob URL), when ingest could tell.
F_URL = "url"
#: On the first chunk of each runbook unit only: the term ids of the whole unit, and of its
#: name (title and alert names). The decision measures coverage with them (index.stats).
F_DOC_TERMS = "doc_terms"
F_NAME_TERMS = "name_terms"
#: A bi-encoder reader's embedding of the chunk as the reader reads it (enricher.search.
#: reader.pack), and which model made it (Reader.digest): a page then embeds only its alert.
F_READER_VECTOR = "reader_vector"
F_READER_MODEL = "reader_model"

KEYWORD_INDEXES = (
    F_ALERT_NAMES,
    F_SERVICES,
    F_DOC_ID,
    F_PAGE_ID,
    F_UNIT_ANCHOR,
    F_ALERT_KEYS,
    F_SERVICE_KEYS,
    F_METRICS,
    F_PATH_KEY,
)


class Actionable:
    """Levels of `F_ACTIONABLE`; a page shows the strongest a runbook has, first found."""

    NONE = 0
    #: It holds commands (a code block, a list of `commands`) under another heading.
    COMMANDS = 1
    #: Its heading says it is about what to do (Diagnosis, Mitigation, Steps...).
    HEADING = 2


#: Collection metadata key of the corpus statistics (index.stats).
META_STATS = "corpus_stats"

_POINT_NAMESPACE = uuid.UUID("6f1c1d8e-5b0a-4c55-9d7e-2b1f0c3a9e41")


def point_id(doc_id: str, chunk_index: int) -> str:
    """Deterministic id: re-ingesting a chunk overwrites it instead of adding a twin."""
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{doc_id}#{chunk_index}"))


def identity_metadata(identity: ModelIdentity) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "embed_model": identity.dense,
        "dense_dim": identity.dense_dim,
        "sparse_model": identity.sparse,
    }


@dataclass(frozen=True)
class CollectionState:
    created: bool


def ensure_collection(index: Index, identity: ModelIdentity) -> CollectionState:
    """Create the collection if missing, else verify it was built with the same models."""
    if not index.exists():
        index.create(identity.dense_dim)
        for field in KEYWORD_INDEXES:
            index.create_keyword_index(field)
        index.update_metadata(identity_metadata(identity))
        return CollectionState(created=True)
    verify_collection(index, identity)
    # A collection from an older release may lack the index of a field added since.
    indexed = index.shape().indexed_fields
    for field in KEYWORD_INDEXES:
        if field not in indexed:
            index.create_keyword_index(field)
    return CollectionState(created=False)


def write_stats(index: Index, stats: CorpusStats) -> None:
    """Store the corpus statistics with the collection (metadata keys merge)."""
    index.update_metadata({META_STATS: stats.to_json()})


def read_stats(index: Index) -> CorpusStats | None:
    """The statistics the last sync stored; None before the first sync of this release."""
    data = index.metadata().get(META_STATS)
    return CorpusStats.from_json(data) if isinstance(data, dict) else None


def verify_collection(index: Index, identity: ModelIdentity) -> None:
    """Fail with instructions when the collection does not match the configured models."""
    name = index.name
    if not index.exists():
        raise ConfigError(
            f"Qdrant collection '{name}' does not exist ({index.engine}): index the runbooks "
            "first with `make ingest` (python -m ingest --root DIR), or set RUNBOOK_ROOTS so "
            "the service syncs them itself"
        )
    shape = index.shape()
    reindex = (
        f"re-index into a fresh collection: set QDRANT_COLLECTION to a new name and run "
        f"`make ingest`, or drop '{name}' and run `make ingest`"
    )
    if shape.dense_size is None or not shape.has_sparse:
        raise ConfigError(
            f"Qdrant collection '{name}' lacks the named vectors '{DENSE}' and '{SPARSE}' "
            f"(with IDF): it was not created by this tool; {reindex}"
        )
    if shape.dense_size != identity.dense_dim:
        raise ConfigError(
            f"Qdrant collection '{name}' holds {shape.dense_size}-dim vectors but the "
            f"configured model makes {identity.dense_dim}: {reindex}"
        )
    meta = index.metadata()
    stored = (meta.get("embed_model"), meta.get("sparse_model"))
    if stored != (identity.dense, identity.sparse):
        raise ConfigError(
            f"Qdrant collection '{name}' was built with {stored[0]} + {stored[1]} but the "
            f"configured models are {identity.dense} + {identity.sparse}; vectors from "
            f"different models must not mix: {reindex}"
        )
