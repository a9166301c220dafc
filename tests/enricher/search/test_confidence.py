"""The confidence model: reading, scoring, and refusing a model that does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enricher.errors import ConfigError
from enricher.search.confidence import MODEL_PATH, SEVERITY_SIBLING_CAP, Model, load_model
from enricher.search.evidence import FEATURES


def model(**changes: object) -> Model:
    values: dict[str, object] = {
        "features": ("cosine", "content_coverage"),
        "mean": (0.5, 0.5),
        "scale": (0.1, 0.2),
        "weights": (1.0, 2.0),
        "bias": 0.0,
        "lead_floor": 0.05,
    }
    values.update(changes)
    return Model(**values)  # type: ignore[arg-type]


class TestProbability:
    def test_more_evidence_more_confidence(self) -> None:
        m = model()
        assert m.probability({"cosine": 0.5, "content_coverage": 0.5}) == pytest.approx(0.5)
        low = m.probability({"cosine": 0.4, "content_coverage": 0.3})
        high = m.probability({"cosine": 0.7, "content_coverage": 0.9})
        assert 0 < low < 0.5 < high < 1

    def test_extreme_values_stay_probabilities(self) -> None:
        """Saturates instead of overflowing on absurd inputs."""
        m = model()
        assert m.probability({"cosine": 1e9, "content_coverage": 1e9}) <= 1.0
        assert m.probability({"cosine": -1e9, "content_coverage": -1e9}) >= 0.0

    def test_missing_features_are_read_as_zero(self) -> None:
        assert 0 < model().probability({}) < 0.5

    def test_an_alert_the_corpus_barely_knows_gets_no_probability(self) -> None:
        """Full coverage of an alert's two familiar words is not evidence when the corpus
        knows a twentieth of what the alert says."""
        m = model(known_floor=0.12)
        strong = {"cosine": 0.9, "content_coverage": 1.0}
        assert m.probability({**strong, "known_share": 0.05}) == 0.0
        assert m.probability({**strong, "known_share": 0.3}) > 0.99
        assert model().probability({**strong, "known_share": 0.05}) > 0.99

    def test_the_rule_at_another_severity_is_at_most_a_lead(self) -> None:
        """However strong the rest, the runbook of the alert's rule at another severity
        stays under the cap; a low probability is left as it is."""
        m = model()
        strong = {"cosine": 0.9, "content_coverage": 1.0}
        assert m.probability({**strong, "severity_sibling": 1.0}) == SEVERITY_SIBLING_CAP
        assert m.probability({**strong, "severity_sibling": 0.0}) > 0.99
        weak = {"cosine": 0.1, "content_coverage": 0.0, "severity_sibling": 1.0}
        assert m.probability(weak) < SEVERITY_SIBLING_CAP


class TestFile:
    def test_the_shipped_model_loads_and_says_what_it_was_fitted_on(self) -> None:
        shipped = load_model()
        assert set(shipped.features) <= set(FEATURES)
        assert shipped.provenance.get("fitted_on")
        assert all(w >= 0 for w in shipped.weights)
        assert 0 <= shipped.lead_floor < 1
        assert 0 < shipped.known_floor < 0.25

    def test_roundtrip(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(json.dumps(model(known_floor=0.1).to_json()))
        assert load_model(path) == model(known_floor=0.1)

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            ({"features": ["cosine", "no_such_feature"]}, "unknown features"),
            ({"weights": [1.0]}, "inconsistent"),
        ],
    )
    def test_a_broken_model_is_a_config_error(
        self, tmp_path: Path, edit: dict[str, object], message: str
    ) -> None:
        data = {**model().to_json(), **edit}
        path = tmp_path / "m.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ConfigError, match=message):
            load_model(path)

    def test_an_unreadable_model_says_how_to_restore_it(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match="restore it from git"):
            load_model(tmp_path / "missing.json")
        assert MODEL_PATH.name == "confidence.json"


class TestWithoutReader:
    READING = model(
        features=("cosine", "reader"),
        without_reader=model(features=("cosine", "content_coverage"), bias=-1.0),
    )

    @pytest.mark.parametrize(
        ("decision", "present", "expected"),
        [
            (READING, True, READING),
            (READING, False, READING.without_reader),
            (model(), False, model()),
            (model(), True, model()),
        ],
    )
    def test_the_model_for_the_service(
        self, decision: Model, present: bool, expected: Model
    ) -> None:
        """A model that weighs the reader decides with its `without_reader` fit when the
        service runs without a reader; one that does not weigh it decides either way."""
        assert decision.reads(present) == expected

    def test_reading_without_a_fallback_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="READER_ENABLED"):
            model(features=("reader",), mean=(0.5,), scale=(1.0,), weights=(1.0,)).reads(False)

    def test_roundtrip(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(json.dumps(self.READING.to_json()))
        assert load_model(path) == self.READING
