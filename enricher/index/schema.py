"""The index contract: collection schema, vector names, payload fields and point ids.

`ingest` writes what `enricher` reads, so this module is the only place that knows how a
chunk is stored. The model identity is kept in the collection's metadata and checked before
anything is read or written: vectors from two models must never share a collection.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qdrant_client import QdrantClient, models

from enricher.errors import ConfigError
from enricher.index.embedding import ModelIdentity
from enricher.index.stats import CorpusStats
from enricher.settings import Settings

DENSE = "dense"
SPARSE = "bm25"
SCHEMA_VERSION = 1

# Payload fields, written by ingest and read by search.
F_DOC_ID = "doc_id"
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
#: On the first chunk of each document only: the term ids of the whole document, and of its
#: name (title and alert names). The decision measures coverage with them (index.stats).
F_DOC_TERMS = "doc_terms"
F_NAME_TERMS = "name_terms"

KEYWORD_INDEXES = (
    F_ALERT_NAMES,
    F_SERVICES,
    F_DOC_ID,
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


def open_client(settings: Settings) -> QdrantClient:
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantClient(
            url=settings.qdrant_url, api_key=api_key, timeout=int(settings.qdrant_timeout_s)
        )
    settings.qdrant_path.mkdir(parents=True, exist_ok=True)
    try:
        return QdrantClient(path=str(settings.qdrant_path))
    except RuntimeError as exc:  # portalocker: another process holds the embedded store
        raise ConfigError(
            f"embedded Qdrant at {settings.qdrant_path} is locked by another process "
            "(only one process may open it: stop the server before running ingest, or set "
            "QDRANT_URL to use a Qdrant server)"
        ) from exc


def _metadata(identity: ModelIdentity) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "embed_model": identity.dense,
        "dense_dim": identity.dense_dim,
        "sparse_model": identity.sparse,
    }


@dataclass(frozen=True)
class CollectionState:
    created: bool


def ensure_collection(client: QdrantClient, name: str, identity: ModelIdentity) -> CollectionState:
    """Create the collection if missing, else verify it was built with the same models."""
    if not client.collection_exists(name):
        client.create_collection(
            collection_name=name,
            vectors_config={
                DENSE: models.VectorParams(size=identity.dense_dim, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={
                # IDF is computed by Qdrant; without the modifier the scores are not BM25.
                SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
            metadata=_metadata(identity),
        )
        _ensure_payload_indexes(client, name, KEYWORD_INDEXES)
        return CollectionState(created=True)
    verify_collection(client, name, identity)
    # A collection from an older release may lack the index of a field added since.
    schema = client.get_collection(name).payload_schema
    _ensure_payload_indexes(client, name, [f for f in KEYWORD_INDEXES if f not in schema])
    return CollectionState(created=False)


def _ensure_payload_indexes(client: QdrantClient, name: str, fields: Sequence[str]) -> None:
    with warnings.catch_warnings():
        # Embedded mode ignores payload indexes and says so; the server needs them.
        warnings.filterwarnings("ignore", message="Payload indexes have no effect")
        for field in fields:
            client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)


def write_stats(client: QdrantClient, name: str, stats: CorpusStats) -> None:
    """Store the corpus statistics with the collection (metadata keys merge)."""
    client.update_collection(name, metadata={META_STATS: stats.to_json()})


def read_stats(client: QdrantClient, name: str) -> CorpusStats | None:
    """The statistics the last sync stored; None before the first sync of this release."""
    data = (client.get_collection(name).config.metadata or {}).get(META_STATS)
    return CorpusStats.from_json(data) if isinstance(data, dict) else None


def verify_collection(client: QdrantClient, name: str, identity: ModelIdentity) -> None:
    """Fail with instructions when the collection does not match the configured models."""
    if not client.collection_exists(name):
        raise ConfigError(
            f"Qdrant collection '{name}' does not exist: index the runbooks first with "
            "`make ingest` (python -m ingest --root DIR)"
        )
    info = client.get_collection(name)
    vectors = info.config.params.vectors
    dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
    sparse = info.config.params.sparse_vectors or {}
    reindex = (
        f"re-index into a fresh collection: set QDRANT_COLLECTION to a new name and run "
        f"`make ingest`, or drop '{name}' and run `make ingest`"
    )
    if dense is None or SPARSE not in sparse:
        raise ConfigError(
            f"Qdrant collection '{name}' lacks the named vectors '{DENSE}' and '{SPARSE}': "
            f"it was not created by this tool; {reindex}"
        )
    if dense.size != identity.dense_dim:
        raise ConfigError(
            f"Qdrant collection '{name}' holds {dense.size}-dim vectors but the configured model "
            f"makes {identity.dense_dim}: {reindex}"
        )
    meta = info.config.metadata or {}
    stored = (meta.get("embed_model"), meta.get("sparse_model"))
    if stored != (identity.dense, identity.sparse):
        raise ConfigError(
            f"Qdrant collection '{name}' was built with {stored[0]} + {stored[1]} but the "
            f"configured models are {identity.dense} + {identity.sparse}; vectors from "
            f"different models must not mix: {reindex}"
        )
