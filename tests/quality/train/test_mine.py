"""Mining the reader's lists (quality.train.mine) on golden/: real models, embedded Qdrant,
the webhook's search."""

from __future__ import annotations

import json

import pytest

from enricher.search import searcher as searcher_module
from enricher.search.confidence import Model
from enricher.search.decide import SearchConfig
from enricher.settings import Settings
from quality.calibrate import neutral_model
from quality.train.mine import Source, Unranked, mine
from tests.conftest import MODELS_DIR, REPO

GOLDEN = REPO / "golden"
SETTINGS = Settings(models_dir=MODELS_DIR, redis_url="redis://127.0.0.1:1/0")


def _by_cosine(weight: float) -> Model:
    """A decision whose probability follows the cosine (or, negative, runs against it)."""
    return Model(("cosine",), (0.0,), (1.0,), (weight,), 0.0, lead_floor=0.0)


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Source:
    """Golden's first dozen renamed alerts, with golden's runbooks."""
    lines = (GOLDEN / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    picked = [line for line in lines if line and json.loads(line)["kind"] == "renamed"][:12]
    cases = tmp_path_factory.mktemp("mine") / "cases.jsonl"
    cases.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return Source("golden", GOLDEN / "runbooks", cases)


def test_the_lists_do_not_follow_the_shipped_decision(
    renamed: Source, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two decisions that order the scored candidates oppositely give the same lists: the
    siblings a reader trains against are the fused order's, whatever confidence.json says.

    Only the scored head is compared: each mine builds its own index, and the last of
    eight candidates, unscored, can differ between two builds (seen once in four).
    """
    head = SearchConfig.from_settings(SETTINGS).scored
    mined: list[list[tuple[str, ...]]] = []
    for weight in (1.0, -1.0):
        monkeypatch.setattr(searcher_module, "load_model", lambda w=weight: _by_cosine(w))
        mined.append([item.keys[:head] for item in mine(renamed, SETTINGS)])
    assert len(mined[0]) >= 12  # each case, and its left-out twin where it has a runbook
    assert any(len(keys) == head for keys in mined[0])
    assert mined[0] == mined[1]


def test_each_list_labels_its_runbook(renamed: Source) -> None:
    """A case's own search labels its runbook 1 wherever it is listed; its left-out twin
    lists that runbook nowhere."""
    items = list(mine(renamed, SETTINGS))
    for item in items:
        assert sum(item.labels) <= 1
        if item.left_out:
            assert not any(item.labels)
    assert any(sum(item.labels) == 1 for item in items if not item.left_out)


def test_mining_ranks_no_candidate_below_another() -> None:
    """Not even the runbook of the alert's rule at another severity, which every decision
    caps (confidence.Model.probability): mining lists it where the fusion put it."""
    unranked = Unranked.of(neutral_model())
    sibling = {"cosine": 0.9, "severity_sibling": 1.0}
    assert neutral_model().probability(sibling) < neutral_model().probability({"cosine": 0.9})
    assert unranked.probability(sibling) == unranked.probability({"cosine": 0.1})
