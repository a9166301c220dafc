"""Corpus statistics: document frequencies, name postings, the stored form."""

from __future__ import annotations

import pytest

from enricher.index.stats import STATS_VERSION, CorpusStats


def stats() -> CorpusStats:
    return CorpusStats.from_documents(
        [("a", [1, 2, 2, 3], [1, 2]), ("b", [2, 4], [2, 5]), ("c", [], [])]
    )


class TestCorpusStats:
    def test_document_frequencies_count_documents_not_occurrences(self) -> None:
        s = stats()
        assert s.documents == 3
        assert s.term_df == {1: 1, 2: 2, 3: 1, 4: 1}
        assert s.name_df == {1: 1, 2: 2, 5: 1}
        assert s.names["a"] == (1, 2)

    def test_rare_terms_have_higher_idf(self) -> None:
        s = stats()
        assert s.idf(1) > s.idf(2) > 0
        assert s.idf(999) > s.idf(1)  # in no document: the highest
        assert s.name_idf(5) > s.name_idf(2)

    def test_known_keeps_corpus_words_in_order_without_repeats(self) -> None:
        assert stats().known([3, 99, 1, 3]) == [3, 1]

    def test_name_postings_and_mass(self) -> None:
        s = stats()
        assert set(s.name_postings[2]) == {"a", "b"}
        assert s.name_mass["a"] == pytest.approx(s.name_idf(1) + s.name_idf(2))

    def test_json_roundtrip_and_version_guard(self) -> None:
        s = stats()
        data = s.to_json()
        assert data["version"] == STATS_VERSION
        back = CorpusStats.from_json(data)
        assert back is not None
        assert (back.term_df, back.name_df, back.names) == (s.term_df, s.name_df, s.names)
        assert CorpusStats.from_json({**data, "version": STATS_VERSION + 1}) is None
