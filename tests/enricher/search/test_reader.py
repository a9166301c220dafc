"""The reader: its two texts (pure) and loading and scoring a real ONNX model folder.

The model here is a tiny graph built with onnx's helper that honours the folder's
contract: its logit is the number of the passage's tokens (token type 1) the attention
mask keeps, so batching, padding, pair order and truncation are all visible in it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from enricher.alert import Alert
from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.search.confidence import Model
from enricher.search.decide import SearchConfig
from enricher.search.evidence import reader_features
from enricher.search.query import build_query
from enricher.search.reader import (
    ALERT_CHARS,
    INPUTS,
    PASSAGE_CHARS,
    Reader,
    passage_text,
    texts,
)
from enricher.search.searcher import Searcher, load_reader
from enricher.settings import Settings
from scripts.index_copy import copy_index
from tests.conftest import MODELS_DIR, open_engine

TOKENIZER = MODELS_DIR / "all-MiniLM-L6-v2-int8" / "tokenizer.json"


def _alert(name: str, summary: str = "", description: str = "", **labels: str) -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name=name,
        service=labels.pop("service", None),
        severity="warning",
        summary=summary,
        description=description,
        labels={"alertname": name, **labels},
    )


def _payload(**fields: Any) -> dict[str, Any]:
    return {schema.F_TITLE: "", schema.F_SECTION: "", schema.F_TEXT: "", **fields}


class TestTexts:
    @pytest.mark.parametrize(
        ("alert", "starts", "holds", "lacks"),
        [
            (
                _alert("KubePodCrashLooping", "Pod is restarting", "Check the logs."),
                "Kube Pod Crash Looping",
                ["Pod is restarting", "Check the logs."],
                [],
            ),
            (
                _alert(
                    "PaymentsPayoutLag",
                    "Payout lag on payout-worker-45bd7",
                    service="payments",
                    pod="payout-worker-45bd7",
                ),
                "Payments Payout Lag",
                ["payments", "Payout lag on"],
                ["payout-worker-45bd7"],
            ),
            (
                _alert("Disk almost full on db-1", "Disk almost full on db-1"),
                "Disk almost full on db-1",
                [],
                [],
            ),
        ],
    )
    def test_alert_side(
        self, alert: Alert, starts: str, holds: list[str], lacks: list[str]
    ) -> None:
        """The alert's name comes first in words, then what it says; where-labels are out."""
        text, _ = texts(build_query(alert), _payload())
        assert text.startswith(starts)
        assert all(h in text for h in holds)
        assert not any(lack in text for lack in lacks)

    @pytest.mark.parametrize(
        ("payload", "expected"),
        [
            (
                _payload(
                    **{
                        schema.F_TITLE: "etcdNoLeader",
                        schema.F_SECTION: "Mitigation",
                        schema.F_TEXT: "Restart the member.",
                        schema.F_ALERT_NAMES: ["etcdNoLeader", "EtcdMemberLeaderless"],
                    }
                ),
                "etcd No Leader. Etcd Member Leaderless. Mitigation. Restart the member.",
            ),
            (
                _payload(**{schema.F_TITLE: "Disk usage", schema.F_TEXT: "Free space."}),
                "Disk usage. Free space.",
            ),
            (_payload(), ""),
        ],
    )
    def test_passage_side(self, payload: dict[str, Any], expected: str) -> None:
        """The runbook's names in words, its heading, then its chunk, repeats dropped."""
        assert passage_text(payload) == expected

    def test_bounded(self) -> None:
        """A sender's or a runbook writer's megabyte is cut before it is tokenized, and the
        runbook's name survives the cut."""
        huge = "a " * 500_000
        query = build_query(_alert("HugeAlert", huge, huge))
        alert, passage = texts(
            query, _payload(**{schema.F_TITLE: "HugeRunbook", schema.F_TEXT: huge})
        )
        assert len(alert) <= ALERT_CHARS
        assert len(passage) <= PASSAGE_CHARS
        assert passage.startswith("Huge Runbook. a a")


def _graph(inputs: tuple[str, ...] = INPUTS) -> onnx.ModelProto:
    """logits[b, 0] = sum over the sequence of attention_mask * token_type_ids."""
    declared = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in inputs
    ]
    nodes = [
        helper.make_node("Mul", ["attention_mask", "token_type_ids"], ["kept"]),
        helper.make_node("Cast", ["kept"], ["kept_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["kept_f", "axis"], ["logits"], keepdims=1),
    ]
    axis = helper.make_tensor("axis", TensorProto.INT64, [1], [1])
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "tiny_reader", declared, [output], initializer=[axis])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _folder(
    root: Path,
    max_length: int = 64,
    model: onnx.ModelProto | None = None,
    alert_chars: int | None = None,
) -> Path:
    folder = root / "reader"
    folder.mkdir(parents=True)
    onnx.save(model or _graph(), str(folder / "model.onnx"))
    shutil.copy(TOKENIZER, folder / "tokenizer.json")
    config = {"max_length": max_length, "alert_chars": alert_chars}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "reader.json").write_text(json.dumps({"data_manifest": "test"}))
    return folder


class TestReader:
    def test_scores_the_passage_side(self, tmp_path: Path) -> None:
        """Each pair's logit reads its own pair: the passage's tokens and only those, the
        same in a padded batch as alone."""
        reader = Reader(_folder(tmp_path))
        pairs = [("disk full", "free some space"), ("disk full", "free some space on the node now")]
        batch = reader.score(pairs)
        alone = [reader.score([pair])[0] for pair in pairs]
        assert batch == alone
        assert batch[0] == 4.0  # free, some, space, [SEP]
        assert batch[1] > batch[0]
        assert reader.provenance == {"data_manifest": "test"}

    def test_truncates_to_max_length(self, tmp_path: Path) -> None:
        """A pair never exceeds the model's max_length in tokens."""
        reader = Reader(_folder(tmp_path, max_length=16))
        (logit,) = reader.score([("alert " * 50, "runbook " * 50)])
        assert 0 < logit < 16

    def test_alert_chars_gives_the_rest_to_the_passage(self, tmp_path: Path) -> None:
        """With `alert_chars`, the alert is cut before tokenizing and the passage keeps
        the tokens the alert no longer takes (the graph counts the passage's tokens)."""
        pair = ("alert " * 50, "runbook " * 50)
        (whole,) = Reader(_folder(tmp_path / "a", max_length=32)).score([pair])
        (cut,) = Reader(_folder(tmp_path / "b", max_length=32, alert_chars=12)).score([pair])
        assert whole == 16.0  # longest first: 14 alert and 15 passage tokens, and [SEP]
        assert cut == 28.0  # "alert alert " is two tokens: 32 - [CLS] - 2 - [SEP]

    def test_no_pairs(self, tmp_path: Path) -> None:
        assert Reader(_folder(tmp_path)).score([]) == []

    def test_without_token_types(self, tmp_path: Path) -> None:
        """A graph that does not take token_type_ids (an export that pruned it) is fed
        only what it takes."""
        model = _graph(("input_ids", "attention_mask"))
        model.graph.node[0].input[1] = "attention_mask"
        reader = Reader(_folder(tmp_path, model=model))
        assert reader.score([("a", "b")]) == [5.0]  # [CLS] a [SEP] b [SEP]

    @pytest.mark.parametrize(
        ("breakage", "named"),
        [
            (lambda f: (f / "model.onnx").unlink(), "model.onnx"),
            (lambda f: (f / "model.onnx").write_bytes(b"not a model"), "reader"),
            (lambda f: (f / "tokenizer.json").write_text("{"), "reader"),
            (lambda f: (f / "config.json").write_text("{}"), "max_length"),
            (lambda f: (f / "reader.json").unlink(), "reader.json"),
        ],
    )
    def test_broken_folder(self, tmp_path: Path, breakage: Any, named: str) -> None:
        """A missing or corrupt model is a configuration error that says what to do."""
        folder = _folder(tmp_path)
        breakage(folder)
        with pytest.raises(ConfigError, match="READER_ENABLED=false") as caught:
            Reader(folder)
        assert named in str(caught.value)

    def test_wrong_contract(self, tmp_path: Path) -> None:
        """A graph with other inputs is refused at load, not at the first page."""
        model = _graph()
        model.graph.input[0].name = "ids"
        model.graph.node.insert(0, helper.make_node("Identity", ["ids"], ["input_ids"]))
        with pytest.raises(ConfigError, match="export it again"):
            Reader(_folder(tmp_path, model=model))


@pytest.fixture(scope="module")
def searcher(
    golden_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Searcher]:
    """The golden index with the tiny reader reading the first two candidates."""
    root = tmp_path_factory.mktemp("reader")
    copy_index(golden_index, root / "qdrant")
    index = open_engine("edge", root / "qdrant")
    config = SearchConfig.from_settings(Settings(reader_top_k=2))
    yield Searcher(index, embedder, config, reader=Reader(_folder(root)))
    index.close()


class TestInSearch:
    def test_reads_the_first_candidates(self, searcher: Searcher) -> None:
        """The reader reads the first READER_TOP_K scored candidates with the alert, and its
        features are those of `reader_features` over what it said of them."""
        alert = _alert("PaymentsPayoutsSlow", "Payouts to the bank are delayed", "Queue backs up")
        ranking = searcher.rank(alert)
        scored = [c for c in ranking.candidates if c.features]
        assert ranking.tier in ("global", "service") and len(scored) > 2
        assert searcher.reader is not None
        query = build_query(alert)
        logits = searcher.reader.score([texts(query, c.payload) for c in scored[:2]])
        for candidate, expected in zip(scored, reader_features(logits), strict=False):
            assert {k: candidate.features[k] for k in expected} == expected
        assert not any("reader" in c.features for c in scored[2:])
        assert [c.score for c in scored] == [searcher.model.probability(c.features) for c in scored]

    def test_names_decide_unread(self, searcher: Searcher) -> None:
        """An alert its runbook names is decided by identity: nothing to read."""
        ranking = searcher.rank(_alert("KafkaConsumerLagHigh", "Consumer group lag is high"))
        assert ranking.tier in ("alert_name", "alert_name+service")
        assert not any(c.features for c in ranking.candidates)


#: A decision that weighs the reader, and one that does not.
WEIGHS = Model(("cosine", "reader"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 0.0, lead_floor=0.0)
IGNORES = Model(("cosine",), (0.0,), (1.0,), (1.0,), 0.0, lead_floor=0.0)


class TestLoadReader:
    @pytest.mark.parametrize(
        ("enabled", "present", "decision", "loads"),
        [
            (None, True, WEIGHS, True),
            (None, True, IGNORES, False),
            (None, False, WEIGHS, False),
            (False, True, WEIGHS, False),
            (True, True, IGNORES, True),
        ],
    )
    def test_by_settings(
        self, tmp_path: Path, enabled: bool | None, present: bool, decision: Model, loads: bool
    ) -> None:
        """Unset, the reader is on when its model folder is there and the decision weighs
        it; true turns it on, false off."""
        folder = _folder(tmp_path) if present else tmp_path / "absent"
        reader = load_reader(Settings(reader_enabled=enabled, reader_dir=folder), decision)
        assert (reader is not None) == loads

    @pytest.mark.parametrize("enabled", [None, True])
    def test_a_broken_model_stops_the_start(self, tmp_path: Path, enabled: bool | None) -> None:
        """Asked for, a missing model is an error; present, a corrupt one is too."""
        folder = _folder(tmp_path)
        (folder / ("tokenizer.json" if enabled is None else "model.onnx")).unlink()
        with pytest.raises(ConfigError, match=str(folder)):
            load_reader(Settings(reader_enabled=enabled, reader_dir=folder), WEIGHS)
