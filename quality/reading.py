"""A reader applied to searches already collected: `quality.transfer --readers DIR`.

Collecting a corpus's searches (quality.calibrate.collect) keeps, for every search the
decision weighs, each scored candidate's features and the reader's (alert, passage) pair
(`calibrate.Read`). The searcher's order is applied afterwards, here (`read_run`): the
scored candidates most probable first under a given decision, then a reader's logits for
the first `top_k` of them become their `reader` and `reader_margin` features, exactly as
the searcher computes them (enricher.search.evidence.reader_features), and the search's
example for the decision is its (possibly re-read) first candidate. So one collection
serves every reader, and a corpus a reader was trained on is never scored by it:

- golden, synthetic and the two real dev slices are read by the `all` reader, which was
  trained on the training collection only;
- a corpus of the training collection is read by the fold reader that left its project
  out (its `reader.json` names the corpora it never saw), in every fit and every score.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from enricher.search.confidence import Model
from enricher.search.decide import most_probable_first
from enricher.search.evidence import FEATURES, reader_features
from enricher.search.reader import Reader, reading_order
from quality.calibrate import Example, Read, Run
from quality.metrics import Outcome

#: The reader trained on every corpus of the collection.
ALL = "all"
#: Keys of `reader.json` that may list the corpora a fold reader never saw.
HELD_OUT_KEYS = ("excluded", "held_out", "left_out")

Logits = tuple[tuple[float, ...] | None, ...]


def unseen(folder: Path) -> frozenset[str]:
    """The collection corpora the reader in `folder` was not trained on."""
    provenance = json.loads((folder / "reader.json").read_text(encoding="utf-8"))
    for key in HELD_OUT_KEYS:
        if isinstance(provenance.get(key), list):
            return frozenset(str(c) for c in provenance[key])
    return frozenset()


def reader_for(corpus: str, readers: Path, collection: frozenset[str]) -> Path | None:
    """The reader that may score `corpus`: `all` for a corpus outside the collection, else
    the fold reader that never saw it (None: no such reader, so it is not read)."""
    if corpus not in collection:
        return readers / ALL if (readers / ALL / "model.onnx").is_file() else None
    for folder in sorted(p for p in readers.iterdir() if p.name != ALL):
        if (folder / "model.onnx").is_file() and corpus in unseen(folder):
            return folder
    return None


def readable(corpora: dict[str, bool], readers: Path) -> frozenset[str]:
    """The corpora (name: in the collection) that a reader of `readers` may read. A folder
    with one fold reader (as `all` too) reads only golden, synthetic, the dev slices and its
    fold's corpora; the others then take no part, rather than enter every fit unread."""
    collection = frozenset(name for name, inside in corpora.items() if inside)
    return frozenset(c for c in corpora if reader_for(c, readers, collection) is not None)


def logits(corpus: str, run: Run, folder: Path, cache: Path, top_k: int) -> Logits:
    """The reader's logit for the first `top_k` pairs of every read search, in `run.reads`
    order (None for a search decided by identity). Cached by the model file's digest, the
    corpus and `top_k`."""
    digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()[:16]
    stored = cache / f"reader-{corpus}-{digest}-{top_k}.pickle"
    if stored.is_file():
        with stored.open("rb") as fh:
            found: Logits = pickle.load(fh)
        return found
    reader = Reader(folder)
    out: list[tuple[float, ...] | None] = []
    print(f"reading {corpus} with {folder.name}", file=sys.stderr)
    for read in run.reads:
        out.append(None if read is None else tuple(reader.score(list(read.pairs[:top_k]))))
    cache.mkdir(parents=True, exist_ok=True)
    with stored.open("wb") as fh:
        pickle.dump(tuple(out), fh)
    return tuple(out)


def penalty(folder: Path, rerank_cos: float | None) -> float:
    """The reordering penalty the reader in `folder` serves with (its config's
    `rerank_penalty`), or `rerank_cos` in its logit's units (a bi-encoder's logit is
    `scale` times its cosine; a cross-encoder's is its own)."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if rerank_cos is None:
        return float(config.get("rerank_penalty") or 0.0)
    return rerank_cos * float(config.get("scale") or 1.0)


def read_run(
    run: Run, model: Model, read_logits: Logits | None = None, top_k: int = 0, penalty: float = 0.0
) -> Run:
    """`run` as the searcher decides it (Searcher._decided): each search's scored
    candidates ordered by `model`'s probability, then, with `read_logits`, the first
    `top_k` of that order read and ordered as the reader orders them
    (enricher.search.reader.reading_order; a penalty of 0 keeps their order).
    `read_logits` holds the reader's logit for every scored candidate, in fused order.

    Every read search is reordered here, whatever the decision. The searcher skips the
    reader when no candidate it would read reaches a bar (Searcher._worth_reading), so
    on those pages it keeps the probability order; either way such a page names none of
    them, and only the probability of its unnamed first candidate (which ECE counts)
    differs."""
    per_search = read_logits if read_logits is not None else (None,) * len(run.reads)
    scored: list[tuple[Outcome, tuple[float, ...] | None]] = []
    examples: list[Example] = []
    for (outcome, features), read, values in zip(run.scored, run.reads, per_search, strict=True):
        if read is None or features is None or not read.features:
            scored.append((outcome, features))
            continue
        outcome, top = _read_one(outcome, read, model, values, top_k, penalty)
        scored.append((outcome, top))
        right = outcome.expected is not None and outcome.docs[:1] == (outcome.expected,)
        examples.append(Example(run.corpus, top, right))
    return replace(run, scored=tuple(scored), examples=tuple(examples))


def _read_one(
    outcome: Outcome,
    read: Read,
    model: Model,
    values: Sequence[float] | None,
    top_k: int,
    penalty: float,
) -> tuple[Outcome, tuple[float, ...]]:
    rows = [dict(zip(FEATURES, f, strict=True)) for f in read.features]
    probs = [model.probability(row) for row in rows]
    order = most_probable_first(range(len(rows)), probs)
    if values is not None:
        read_first = order[: min(top_k, len(values))]
        said = [values[i] for i in read_first]
        for i, extra in zip(read_first, reader_features(said), strict=True):
            rows[i].update(extra)
        order[: len(read_first)] = [read_first[j] for j in reading_order(said, penalty)]
    docs = tuple(outcome.docs[i] for i in order) + outcome.docs[len(rows) :]
    scores = tuple(outcome.scores[i] for i in order) + outcome.scores[len(rows) :]
    top = tuple(rows[order[0]][f] for f in FEATURES)
    return replace(outcome, docs=docs, scores=scores), top


__all__ = ["ALL", "logits", "penalty", "read_run", "reader_for", "unseen"]
