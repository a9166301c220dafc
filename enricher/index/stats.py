"""What the indexed corpus says about its own words: computed at sync, stored with the index.

The match decision compares an alert with runbooks through ratios that only mean something
against the corpus they come from: how much of an alert's wording (weighted by how rare a
word is in *this* corpus) a runbook covers, and how much of a runbook's own name the
alert's rule metrics spell out. Both need document frequencies, and those are a property
of the indexed runbooks, not of any corpus we tested on. `ingest` computes them after every
sync from the first chunk of each document (which carries the document's term and name
sets, `schema.F_DOC_TERMS` and `schema.F_NAME_TERMS`), and stores them in the index
metadata; the searcher reads them from there. Pure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

#: Bump when the stored layout changes; a searcher refuses stats of another version.
STATS_VERSION = 1


@dataclass(frozen=True)
class CorpusStats:
    documents: int
    #: Term id -> number of documents whose text holds it.
    term_df: Mapping[int, int] = field(default_factory=dict)
    #: Term id -> number of documents whose name (title, alert names) holds it.
    name_df: Mapping[int, int] = field(default_factory=dict)
    #: Doc id -> the term ids of its name.
    names: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_documents(
        cls, documents: Iterable[tuple[str, Iterable[int], Iterable[int]]]
    ) -> CorpusStats:
        """From (doc id, text terms, name terms) of every indexed document."""
        term_df: Counter[int] = Counter()
        name_df: Counter[int] = Counter()
        names: dict[str, tuple[int, ...]] = {}
        for doc_id, terms, name_terms in documents:
            term_df.update(set(terms))
            unique = tuple(sorted(set(name_terms)))
            name_df.update(unique)
            names[doc_id] = unique
        return cls(len(names), dict(term_df), dict(name_df), names)

    def idf(self, term: int) -> float:
        """BM25's idf over documents; a term no document holds gets the highest value."""
        return _idf(self.documents, self.term_df.get(term, 0))

    def name_idf(self, term: int) -> float:
        return _idf(self.documents, self.name_df.get(term, 0))

    @cached_property
    def name_postings(self) -> dict[int, tuple[str, ...]]:
        """Name term -> the documents whose name holds it."""
        postings: dict[int, list[str]] = {}
        for doc, terms in self.names.items():
            for term in terms:
                postings.setdefault(term, []).append(doc)
        return {term: tuple(docs) for term, docs in postings.items()}

    @cached_property
    def name_mass(self) -> dict[str, float]:
        """Doc id -> the summed name idf of its name terms."""
        return {doc: sum(self.name_idf(t) for t in terms) for doc, terms in self.names.items()}

    def known(self, terms: Iterable[int]) -> list[int]:
        """The terms some runbook uses: a team's own words (a product name, a host) are
        evidence for no runbook, so they weigh in no coverage."""
        return [t for t in dict.fromkeys(terms) if t in self.term_df]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATS_VERSION,
            "documents": self.documents,
            "term_df": {str(k): v for k, v in self.term_df.items()},
            "name_df": {str(k): v for k, v in self.name_df.items()},
            "names": {k: list(v) for k, v in self.names.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorpusStats | None:
        """None for stats of another version (the next sync writes current ones)."""
        if data.get("version") != STATS_VERSION:
            return None
        return cls(
            documents=int(data["documents"]),
            term_df={int(k): int(v) for k, v in data["term_df"].items()},
            name_df={int(k): int(v) for k, v in data["name_df"].items()},
            names={k: tuple(int(t) for t in v) for k, v in data["names"].items()},
        )


def _idf(documents: int, df: int) -> float:
    return math.log((documents - df + 0.5) / (df + 0.5) + 1.0)


EMPTY = CorpusStats(0)

__all__ = ["EMPTY", "STATS_VERSION", "CorpusStats"]
