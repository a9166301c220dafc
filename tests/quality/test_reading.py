"""A reader applied to collected searches (quality.reading), pure parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enricher.search.confidence import Model
from enricher.search.evidence import FEATURES, reader_features
from quality.calibrate import Example, Read, Run
from quality.metrics import Outcome
from quality.reading import read_run, readable, reader_for


def _outcome(docs: tuple[str, ...], expected: str | None) -> Outcome:
    return Outcome(
        id="c1", kind="paraphrase", split="dev", expected=expected, status="no_match",
        tier="global", docs=docs, scores=tuple(0.5 for _ in docs),
    )


def _features(cosine: float) -> tuple[float, ...]:
    return tuple(cosine if f == "cosine" else 0.0 for f in FEATURES)


#: A decision whose probability grows with the cosine: it orders by the cosine.
BY_COSINE = Model(("cosine",), (0.0,), (1.0,), (1.0,), 0.0, lead_floor=0.0)


def _run(expected: str | None, cosines: tuple[float, ...] = (0.9, 0.8, 0.7)) -> Run:
    """One search of three scored candidates (a, b, c) and one decided by its name."""
    read = Read(
        tuple(_features(c) for c in cosines),
        (("alert", "a"), ("alert", "b"), ("alert", "c")),
    )
    named = _outcome(("n",), "n")
    first = _outcome(("a", "b", "c", "d"), expected)
    return Run(
        "corpus",
        (Example("corpus", _features(0.9), expected == "a"),),
        ((first, _features(0.9)), (named, None)),
        (read, None),
    )


class TestReadRun:
    @pytest.mark.parametrize(
        ("top_k", "penalty", "docs", "read"),
        [
            (2, 0.0, ("a", "b", "c", "d"), 2),
            (3, 0.0, ("a", "b", "c", "d"), 3),
            (2, 0.1, ("b", "a", "c", "d"), 2),
            (3, 0.1, ("c", "b", "a", "d"), 3),
            # Each lead of 1.5 is worth more than a place at 1.0, less than one at 2.0.
            (3, 1.0, ("c", "b", "a", "d"), 3),
            (3, 2.0, ("a", "b", "c", "d"), 3),
            (2, 2.0, ("a", "b", "c", "d"), 2),
        ],
    )
    def test_reads_the_first_k(
        self, top_k: int, penalty: float, docs: tuple[str, ...], read: int
    ) -> None:
        """The first `top_k` candidates get the reader's features; with a penalty the reader
        orders them, each candidate's logit less the penalty for each place it stood below
        the first, and the example is the new first candidate, right or not."""
        logits = ((-1.0, 0.5, 2.0), None)
        out = read_run(_run("b"), BY_COSINE, logits, top_k, penalty)
        (outcome, top), named = out.scored
        assert top is not None
        assert named == _run("b").scored[1]
        assert outcome.docs == docs
        first = "abc".index(docs[0])
        values = dict(zip(FEATURES, top, strict=True))
        assert values["cosine"] == (0.9, 0.8, 0.7)[first]
        assert (values["reader"], values["reader_margin"]) == tuple(
            reader_features(logits[0][:read])[first].values()
        )
        assert [e.right for e in out.examples] == [docs[0] == "b"]


    def test_most_probable_first(self) -> None:
        """Without a reader the scored candidates go most probable first, the unscored
        after them, and the example is the new first candidate."""
        out = read_run(_run("b", (0.7, 0.9, 0.8)), BY_COSINE)
        (outcome, top), _ = out.scored
        assert outcome.docs == ("b", "c", "a", "d")
        assert top is not None and dict(zip(FEATURES, top, strict=True))["cosine"] == 0.9
        assert [e.right for e in out.examples] == [True]

    def test_the_reader_reads_the_most_probable(self) -> None:
        """The reader reads the first `top_k` of the probability order, whatever their
        fused places: its logits are given in fused order (a, b, c)."""
        logits = ((5.0, 0.0, 1.0), None)
        out = read_run(_run("b", (0.7, 0.9, 0.8)), BY_COSINE, logits, 2, 0.1)
        (outcome, top), _ = out.scored
        assert outcome.docs == ("c", "b", "a", "d")
        assert top is not None
        values = dict(zip(FEATURES, top, strict=True))
        assert values["cosine"] == 0.8
        assert (values["reader"], values["reader_margin"]) == tuple(
            reader_features([0.0, 1.0])[1].values()
        )


class TestReaderFor:
    def _readers(self, root: Path) -> Path:
        for name, held in (("all", []), ("fold-a", ["gitlab"]), ("fold-b", ["tempo", "pingcap"])):
            (root / name).mkdir()
            (root / name / "model.onnx").write_bytes(b"")
            (root / name / "reader.json").write_text(json.dumps({"held_out": held}))
        return root

    @pytest.mark.parametrize(
        ("corpus", "reader"),
        [("golden", "all"), ("prom-runbooks", "all"), ("gitlab", "fold-a"),
         ("pingcap", "fold-b"), ("sourcegraph", None)],
    )
    def test_never_a_reader_that_saw_it(self, tmp_path: Path, corpus: str, reader: str) -> None:
        """Corpora outside the collection get `all`; a collection corpus the fold reader
        that left it out, or none."""
        collection = frozenset({"gitlab", "tempo", "pingcap", "sourcegraph"})
        found = reader_for(corpus, self._readers(tmp_path), collection)
        assert (found.name if found else None) == reader

    def test_a_folder_of_one_fold_reads_only_what_that_fold_never_saw(self, tmp_path: Path) -> None:
        """With fold-a alone (and as `all`), the corpora outside the collection and
        fold-a's own are readable; the other fold's corpora are left out, not read by a
        reader that saw them nor fitted on unread."""
        for name in ("all", "fold-a"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "model.onnx").write_bytes(b"")
            (tmp_path / name / "reader.json").write_text(json.dumps({"excluded": ["gitlab"]}))
        corpora = {"golden": False, "prom-runbooks": False, "gitlab": True, "tempo": True}
        assert readable(corpora, tmp_path) == {"golden", "prom-runbooks", "gitlab"}
