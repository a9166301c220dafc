"""Leave-one-out self-probes of a corpus: `python -m quality.selfprobe --corpus DIR`.

For every runbook, an alert is made of its own description (the first paragraph of its
first section: the summary is the first sentence, the description the next two) and sent
through the webhook's search twice: with the runbook indexed (a positive: the runbook
should come first) and with it left out (a near miss: its siblings answer). This needs no
labels, so a product could run it on any team's corpus at sync time and fit its bar on the
two distributions of confidence.

It is kept as a diagnostic, not as the calibration, because it measured biased
(docs/RETRIEVAL.md): a probe quotes its runbook verbatim, so positives are near certain,
and runbook prose resembles sibling runbooks more than an alert's annotations do, so near
misses score higher than real ones. On the prom-runbooks corpus a bar fitted on these
distributions lands far above where real renamed alerts score. What it does tell reliably:
how crowded a corpus is, i.e. how often a sibling would clear the configured bars.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from enricher.alert import Alert
from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.engine import EVERYTHING
from enricher.settings import Settings
from quality.evalindex import EvalIndex

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: Shorter first paragraphs say too little to stand in for an alert's annotations.
MIN_DESCRIPTION = 40


@dataclass(frozen=True)
class SelfProbes:
    #: Confidence of the runbook itself, when it came first (a self-match).
    positives: tuple[float, ...]
    #: Confidence of the best sibling, with the runbook left out.
    negatives: tuple[float, ...]
    #: Probes whose own runbook did not come first.
    misses: int


def probe_alert(text: str) -> Alert:
    """An alert whose annotations are a runbook's own description, under a name no
    runbook lists (a renamed alert)."""
    sentences = _SENTENCE.split(" ".join(text.split()))
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name="SelfProbe",
        service=None,
        severity=None,
        summary=sentences[0][:200],
        description=" ".join(sentences[1:3])[:300],
    )


def descriptions(index: EvalIndex) -> dict[str, str]:
    """Doc id -> the first paragraph of its first section with enough text."""
    points, _ = index.index.scroll(EVERYTHING, 1_000_000)
    chunks = sorted((p.payload for p in points), key=lambda p: p[schema.F_CHUNK_INDEX])
    found: dict[str, str] = {}
    for payload in chunks:
        doc = str(payload[schema.F_DOC_ID])
        text = str(payload[schema.F_TEXT]).strip().split("\n\n")[0]
        if doc not in found and payload[schema.F_SECTION] and len(text) > MIN_DESCRIPTION:
            found[doc] = text
    return found


def self_probes(corpus: Path, settings: Settings) -> SelfProbes:
    positives: list[float] = []
    negatives: list[float] = []
    misses = 0
    with EvalIndex(corpus, settings) as index:
        searcher = index.searcher()
        for doc, text in descriptions(index).items():
            alert = probe_alert(text)
            mine = searcher.rank(alert)
            if mine.candidates and mine.candidates[0].doc_id == doc:
                positives.append(mine.candidates[0].score)
            else:
                misses += 1
            siblings = searcher.rank(alert, exclude=doc)
            if siblings.candidates:
                negatives.append(siblings.candidates[0].score)
    return SelfProbes(tuple(positives), tuple(negatives), misses)


def report(probes: SelfProbes, bars: Sequence[float]) -> str:
    q = (0.1, 0.25, 0.5, 0.75, 0.9)

    def quantiles(values: Sequence[float]) -> str:
        if not values:
            return "–"
        return " ".join(f"{v:.3f}" for v in np.quantile(np.array(values), q))

    lines = [
        f"confidence quantiles {' / '.join(f'{x:.0%}' for x in q)}:",
        f"  self-matches  ({len(probes.positives)}): {quantiles(probes.positives)}",
        f"  siblings      ({len(probes.negatives)}): {quantiles(probes.negatives)}",
        f"  probes whose own runbook was not first: {probes.misses}",
    ]
    for bar in bars:
        over = sum(v >= bar for v in probes.negatives) / max(len(probes.negatives), 1)
        lines.append(f"  siblings at or over {bar:.2f}: {over:.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quality.selfprobe",
        description="Leave-one-out self-probes: how often a sibling runbook answers a "
        "runbook's own description confidently.",
    )
    parser.add_argument("--corpus", type=Path, required=True)
    args = parser.parse_args(argv)
    settings = Settings()
    try:
        probes = self_probes(args.corpus, settings)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report(probes, (settings.global_score_threshold, settings.score_threshold)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
