"""The confidence of a match: the probability that a candidate is *the* runbook for the alert.

A logistic model over the features of enricher.search.evidence. Its weights are data
(`confidence.json` beside this module), fitted offline by `python -m quality.transfer
--fit` on labelled cases of four corpora (golden, synthetic, and the two real dev slices
of ../shared), each case also searched with its runbook left out so that the model sees
the near misses a real alert of an unwritten runbook makes. Which features it reads was
chosen leave-one-corpus-out: the set whose worst held-out corpus is best
(docs/RETRIEVAL.md). The file says what it was fitted on. The probability is the readable
score a page shows ("match 83%"): 0.5 means as likely right as wrong.

The inputs carry the corpus: coverages are weighted by the served corpus's own idf
(index.stats, recomputed at every sync) and every other feature is a margin, a share or an
agreement within this search, so the same weights read a corpus nobody fitted them on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from enricher.errors import ConfigError
from enricher.search.evidence import FEATURES, READER_FEATURES

MODEL_PATH = Path(__file__).with_name("confidence.json")
#: The most a runbook of the alert's rule at another severity may be shown at
#: (evidence.severity_sibling): below the bar and the "likely" line, still a lead. None of
#: the twenty such runbooks ranked first across sixteen corpora was the right one.
SEVERITY_SIBLING_CAP = 0.1


@dataclass(frozen=True)
class Model:
    features: tuple[str, ...]
    #: Standardization applied before the weights (from the fit set).
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    #: Below this probability a runbook is not worth naming even as a lead.
    lead_floor: float
    #: Below this `known_share` the corpus speaks too little of what the alert says to
    #: vouch for any of its runbooks (see `probability`).
    known_floor: float = 0.0
    #: What the model was fitted on, for the record (docs/RETRIEVAL.md).
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: The decision fitted the same way without the reader's features, for a service that
    #: runs without the reader (READER_ENABLED=false, or no model folder).
    without_reader: Model | None = None

    @property
    def weighs_reader(self) -> bool:
        """Whether the decision weighs what the reader says (`READER_FEATURES`)."""
        return bool(set(self.features) & set(READER_FEATURES))

    def reads(self, present: bool) -> Model:
        """The model to decide with when the reader is `present` or not: without it, a
        model that weighs the reader would read its features as 0, the lowest evidence
        there is, and show every probability too low."""
        if present or not self.weighs_reader:
            return self
        if self.without_reader is None:
            raise ConfigError(
                "the confidence model weighs the reader's features but has no "
                "`without_reader` model: enable the reader (READER_ENABLED) or refit with "
                "`python -m quality.transfer --fit`"
            )
        return self.without_reader

    def probability(self, values: Mapping[str, float]) -> float:
        """0 when the alert's wording is mostly words no runbook of the corpus uses: its
        coverages are then shares of a few common words (`low`, `warning`), and a small
        corpus, one long page of sections, would match a printer's toner alert on them.
        At most `SEVERITY_SIBLING_CAP` for the runbook of the alert's rule at another
        severity: every other reading finds it as close as a runbook gets (same metric,
        same words), and only the name says it is the other alert's."""
        if values.get("known_share", 1.0) < self.known_floor:
            return 0.0
        z = self.bias
        for name, mean, scale, weight in zip(
            self.features, self.mean, self.scale, self.weights, strict=True
        ):
            z += weight * (values.get(name, 0.0) - mean) / scale
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        return min(p, SEVERITY_SIBLING_CAP) if values.get("severity_sibling") else p

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "weights": list(self.weights),
            "bias": self.bias,
            "lead_floor": self.lead_floor,
            "known_floor": self.known_floor,
            "provenance": dict(self.provenance),
            **({"without_reader": self.without_reader.to_json()} if self.without_reader else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Model:
        names = tuple(str(f) for f in data["features"])
        unknown = sorted(set(names) - set(FEATURES))
        if unknown:
            raise ConfigError(
                f"confidence model names unknown features {unknown}: refit it with "
                "`python -m quality.calibrate --fit`"
            )
        return cls(
            features=names,
            mean=_floats(data["mean"], len(names)),
            scale=tuple(s or 1.0 for s in _floats(data["scale"], len(names))),
            weights=_floats(data["weights"], len(names)),
            bias=float(data["bias"]),
            lead_floor=float(data["lead_floor"]),
            known_floor=float(data["known_floor"]),
            provenance=dict(data.get("provenance", {})),
            without_reader=(
                cls.from_json(data["without_reader"]) if "without_reader" in data else None
            ),
        )


def _floats(values: Sequence[Any], size: int) -> tuple[float, ...]:
    if len(values) != size:
        raise ConfigError("confidence model is inconsistent: refit it with --fit")
    return tuple(float(v) for v in values)


def load_model(path: Path = MODEL_PATH) -> Model:
    try:
        return Model.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(
            f"cannot read the confidence model {path}: {exc}; restore it from git or refit "
            "it with `python -m quality.calibrate --fit`"
        ) from exc


__all__ = ["MODEL_PATH", "SEVERITY_SIBLING_CAP", "Model", "load_model"]
