"""What the reader is trained and measured on, without torch or the product (the GPU
machine imports it with neither): the mined lists (quality.train.mine), the folds, and the
reader-alone metrics.

Folds: a reader that scores a corpus in the decision's leave-one-corpus-out fit must never
have seen that corpus, nor its project's other corpora (`srerun-hosts` and
`srerun-network` come from one repository and one author's style). Corpora are grouped by
project (the name before its first hyphen) and the projects dealt, largest first, to the
fold that holds fewer lists; each fold reader is trained without its fold's projects.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FOLDS = ("fold-a", "fold-b")
ALL = "all"


@dataclass(frozen=True)
class Listing:
    """One decided search: the alert and its candidates as the reader reads them."""

    corpus: str
    case: str
    kind: str
    left_out: bool
    alert: str
    passages: tuple[str, ...]
    keys: tuple[str, ...]
    labels: tuple[int, ...]


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def mined(folder: Path) -> list[Path]:
    """The mined files in `folder` (quality.train.mine), plain or gzipped."""
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*.jsonl.gz"))


def corpus_of(path: Path) -> str:
    """A mined file's corpus: its name without `.jsonl` or `.jsonl.gz`."""
    return path.name.split(".jsonl", 1)[0]


def read(path: Path) -> list[Listing]:
    """The lists of one mined file (`.jsonl`, or `.jsonl.gz` as carried to a GPU machine)."""
    rows = [json.loads(line) for line in _text(path).splitlines() if line]
    return [
        Listing(
            r["corpus"],
            r["case"],
            r["kind"],
            bool(r["left_out"]),
            r["alert"],
            tuple(r["passages"]),
            tuple(r["keys"]),
            tuple(int(v) for v in r["labels"]),
        )
        for r in rows
    ]


def manifest_hash(files: Sequence[Path]) -> str:
    """One digest of the mined lists (by corpus and text, compressed or not): what a reader
    was trained on."""
    h = hashlib.sha256()
    for f in sorted(files, key=corpus_of):
        h.update(corpus_of(f).encode() + b"\0" + hashlib.sha256(_text(f).encode()).digest())
    return h.hexdigest()


def project(corpus: str) -> str:
    return corpus.split("-", 1)[0]


def folds(counts: dict[str, int], names: Sequence[str] = FOLDS) -> dict[str, list[str]]:
    """The corpora each fold reader leaves out, from the lists per corpus (deterministic:
    ties go by project name)."""
    by_project: dict[str, list[str]] = {}
    for corpus in sorted(counts):
        by_project.setdefault(project(corpus), []).append(corpus)
    size = {p: sum(counts[c] for c in cs) for p, cs in by_project.items()}
    held: dict[str, list[str]] = {n: [] for n in names}
    load = dict.fromkeys(names, 0)
    for p in sorted(size, key=lambda p: (-size[p], p)):
        fold = min(names, key=lambda n: (load[n], names.index(n)))
        held[fold].extend(by_project[p])
        load[fold] += size[p]
    return {n: sorted(cs) for n, cs in held.items()}


@dataclass(frozen=True)
class Pair:
    """One (alert, passage) pair of a list, with its label and the list it belongs to."""

    alert: str
    passage: str
    label: int
    group: int


def pairs(listings: Iterable[Listing], negatives: int = 0, alert_chars: int = 0) -> list[Pair]:
    """The candidates of every list as pairs; `group` numbers the lists in order. With
    `negatives`, a list keeps its positives and only its first `negatives` negatives (in
    fused order, the siblings the search confuses most); with `alert_chars`, the alert's
    side is cut to that many characters, as the serving side cuts it."""
    out = []
    for group, item in enumerate(listings):
        alert, kept = item.alert[: alert_chars or None], 0
        for passage, label in zip(item.passages, item.labels, strict=True):
            if not label:
                kept += 1
                if negatives and kept > negatives:
                    continue
            out.append(Pair(alert, passage, label, group))
    return out


def batches(groups: int, per_batch: int, seed: int, epoch: int) -> list[list[int]]:
    """The lists of one epoch, shuffled by (seed, epoch) and cut into batches of lists, so
    that the listwise loss sees each list whole."""
    order = np.random.default_rng([seed, epoch]).permutation(groups)
    return [[int(g) for g in order[i : i + per_batch]] for i in range(0, groups, per_batch)]


@dataclass(frozen=True)
class Scores:
    """The reader alone on mined lists: how often its best candidate is the expected one,
    against the search's first rank, over the lists that hold the expected runbook; and
    the AUC of label against logit over every pair."""

    lists: int
    with_positive: int
    reader_r1: float
    first_rank_r1: float
    auc: float
    pairs: int


def measure(listings: Sequence[Listing], logits: Sequence[Sequence[float]]) -> Scores:
    positives = [(item, lg) for item, lg in zip(listings, logits, strict=True) if any(item.labels)]
    reader_right = sum(item.labels[int(np.argmax(lg))] for item, lg in positives)
    first_right = sum(item.labels[0] for item, _ in positives)
    labels = [v for item in listings for v in item.labels]
    flat = [float(v) for lg in logits for v in lg]
    n = max(len(positives), 1)
    return Scores(
        lists=len(listings),
        with_positive=len(positives),
        reader_r1=round(reader_right / n, 4),
        first_rank_r1=round(first_right / n, 4),
        auc=round(auc(labels, flat), 4),
        pairs=len(flat),
    )


def margin_auc(listings: Sequence[Listing], scores: Sequence[Sequence[float]]) -> float:
    """How well the first candidate's lead over the best other (in the reader's scores)
    tells a list whose first candidate is the expected one from a list whose first is not:
    the AUC the decision would see, were the lead one of its features. Lists of one
    candidate say nothing and are left out."""
    kept = [(item, s) for item, s in zip(listings, scores, strict=True) if len(s) > 1]
    return auc([item.labels[0] for item, _ in kept], [s[0] - max(s[1:]) for _, s in kept])


def decision_aucs(
    listings: Sequence[Listing], scores: Sequence[Sequence[float]], top: int = 3
) -> dict[str, float]:
    """Over every list, those without the expected runbook too (near misses, left-out twins,
    noise): how well the reader's score of one candidate tells a page whose candidate is
    the expected one from a page whose candidate is not. `first_auc` scores the search's
    first candidate, `top_auc` the reader's best of the first `top`. This is the question
    the decision asks of a page, which `margin_auc` (lists with a positive, a lead within
    one list) does not: a runbook that is not indexed must read low in absolute terms."""
    best = [int(np.argmax(s[:top])) for s in scores]
    return {
        "lists": len(listings),
        "first_auc": round(auc([i.labels[0] for i in listings], [s[0] for s in scores]), 4),
        "top_auc": round(
            auc(
                [i.labels[b] for i, b in zip(listings, best, strict=True)],
                [s[b] for s, b in zip(scores, best, strict=True)],
            ),
            4,
        ),
    }


def fit_logit(values: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """(scale, shift) of the logistic fit P(label) = sigmoid(scale * (value - shift)), by
    Newton's method on the log loss with a little ridge (one feature, so it converges in
    a few steps)."""
    x = np.asarray(values, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    design = np.stack([x, np.ones_like(x)], axis=1)
    w = np.zeros(2)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        grad = design.T @ (p - y) + 1e-3 * w
        hess = design.T @ (design * (p * (1 - p))[:, None]) + 1e-3 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return float(w[0]), float(-w[1] / w[0])


def auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """The chance a positive outscores a negative (ties count half); 0.5 without both."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    pos, neg = int(y.sum()), int((~y).sum())
    if not pos or not neg:
        return 0.5
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = ((ends - counts + 1 + ends) / 2.0)[inverse]
    return float((ranks[y].sum() - pos * (pos + 1) / 2) / (pos * neg))
