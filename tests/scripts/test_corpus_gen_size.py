"""How far the synthetic corpus grows (scripts/corpus_gen/generate.py): the benchmarks' 100k
chunks need about 14,600 runbooks, and growing it must not change a smaller corpus, whose
index the benchmarks cache."""

from __future__ import annotations

from collections import Counter

from scripts.corpus_gen import capacity, runbooks
from scripts.corpus_gen.generate import _combos

#: What `scripts.bench_enrich --sizes 100000` asks of the generator (its corpus_for).
RUNBOOKS_FOR_100K_CHUNKS = 14_608


def test_the_generator_writes_enough_runbooks_for_100k_chunks() -> None:
    assert capacity(7) >= RUNBOOKS_FOR_100K_CHUNKS
    assert capacity(7) == len(_combos(7))


def test_every_runbook_has_its_own_path() -> None:
    paths = Counter(f"{service}/{name}.md" for service, _, _, name in _combos(7))
    assert paths.most_common(1)[0][1] == 1


def test_the_regions_added_for_100k_keep_the_older_corpus_as_its_prefix() -> None:
    """Runbook 6,203 was the last one before the regions beyond EU, US and APAC: it and
    everything before it are where they were, so the cached 1k and 10k indexes stay valid."""
    combos = _combos(7)
    assert combos[6203][3].endswith("APAC")
    assert combos[6204][3].endswith("LATAM")
    assert runbooks(6204)[6203].path == "analytics/AnalyticsLoaderImagePullBackOffAPAC.md"
    assert not any(name.endswith(("LATAM", "MEA", "ANZ")) for *_, name in combos[:6204])
