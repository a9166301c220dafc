"""Synthetic runbooks for the benchmarks: deterministic, varied, and shaped like real ones.

Each runbook is `<service>/<AlertName>.md` with Symptoms, Impact, Diagnosis (fenced
commands), Mitigation (sub-sections), Escalation and a tail of past incidents, 300-1000
words, and YAML front matter on most of them. The text is filled from per-alert-kind
templates plus combinatorial pools, so neighbouring runbooks share vocabulary the way real
ones do (hard negatives for search) without being copies of each other.

Runbook `i` depends only on the seed and `i`: `runbooks(2000)` starts with `runbooks(1000)`,
so a larger corpus contains every smaller one and the benchmarks can reuse cached indexes.
"""

from scripts.corpus_gen.generate import (
    GENERATOR_VERSION,
    Runbook,
    capacity,
    runbooks,
    write_corpus,
)

__all__ = ["GENERATOR_VERSION", "Runbook", "capacity", "runbooks", "write_corpus"]
