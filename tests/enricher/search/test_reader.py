"""The reader: its two texts (pure) and loading and scoring a real ONNX model folder.

The models here are tiny graphs built with onnx's helper that honour the folder's
contract. The cross-encoder's logit is the number of the passage's tokens (token type 1)
the attention mask keeps, so batching, padding, pair order and truncation are all visible
in it. The bi-encoder embeds a text of n tokens as (n, 1) at unit length, so the cosine of
two texts says how many tokens each kept.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
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
    BI,
    BI_OUTPUT,
    INPUTS,
    PASSAGE_CHARS,
    READER_DIR,
    Reader,
    pack,
    passage_text,
    reading_order,
    texts,
    unpack,
)
from enricher.search.searcher import Searcher, load_reader
from enricher.settings import Settings
from scripts.index_copy import copy_index
from tests.conftest import MODELS_DIR, open_engine
from tests.tiny_reader import bi_folder

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


def _cos(a: int, b: int) -> float:
    """The tiny bi-encoder's cosine of texts of `a` and `b` tokens."""
    return float((a * b + 1) / math.sqrt((a * a + 1) * (b * b + 1)))


class TestBiReader:
    def test_logit_is_the_scaled_cosine(self, tmp_path: Path) -> None:
        """Each side is embedded apart, with its own [CLS] and [SEP], and the logit is
        `scale * (cosine - shift)`; an alert read with several passages reads the same."""
        reader = Reader(bi_folder(tmp_path))
        pairs = [("disk full", "free space"), ("disk full", "free some space now"), ("x", "y")]
        got = reader.score(pairs)
        expected = [10.0 * (_cos(a, b) - 0.9) for a, b in ((4, 4), (4, 6), (3, 3))]
        assert got == pytest.approx(expected, abs=1e-5)
        assert reader.score(pairs[1:2]) == pytest.approx(got[1:2], abs=1e-6)
        assert not reader.reorders

    def test_each_side_has_its_length(self, tmp_path: Path) -> None:
        """The alert is cut at `alert_tokens` and the passage at `passage_tokens`."""
        reader = Reader(bi_folder(tmp_path, scale=1.0, shift=0.0))
        (logit,) = reader.score([("alert " * 50, "runbook " * 50)])
        assert logit == pytest.approx(_cos(8, 16), abs=1e-6)

    def test_reads_stored_passage_vectors(self, tmp_path: Path) -> None:
        """A passage's stored vector is read instead of embedding its text; a missing one,
        or one of another length, is embedded."""
        reader = Reader(bi_folder(tmp_path, scale=1.0, shift=0.0))
        (other,) = reader.passage_vectors(["free some space on the node now"])
        pairs = [("disk full", "free space")] * 3
        got = reader.score(pairs, [other, None, other[:1]])
        assert got[0] == pytest.approx(_cos(4, 9), abs=1e-6)
        assert got[1:] == pytest.approx([_cos(4, 4)] * 2, abs=1e-6)

    def test_a_packed_vector_round_trips(self, tmp_path: Path) -> None:
        """What ingest stores is what search reads, to float16's precision."""
        reader = Reader(bi_folder(tmp_path))
        (vector,) = reader.passage_vectors(["free some space"])
        back = unpack(pack(vector))
        assert back is not None and back.shape == vector.shape
        assert float(np.abs(back - vector).max()) < 1e-3
        for junk in (None, "", "not base64!", 7, base64.b64encode(b"abc").decode()):
            assert unpack(junk) is None

    def test_a_cross_encoder_embeds_no_passage(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="bi-encoder"):
            Reader(_folder(tmp_path)).passage_vectors(["x"])

    def test_digest_names_the_graph(self, tmp_path: Path) -> None:
        """Two folders with the same graph share a digest; another graph has another."""
        one, two = Reader(bi_folder(tmp_path / "a")), Reader(bi_folder(tmp_path / "b"))
        assert one.digest == two.digest and len(one.digest) == 16
        assert Reader(_folder(tmp_path / "c")).digest != one.digest

    def test_reorders_with_a_penalty(self, tmp_path: Path) -> None:
        reader = Reader(bi_folder(tmp_path, rerank_penalty=0.5))
        assert reader.reorders and reader.rerank_penalty == 0.5

    @pytest.mark.parametrize(
        ("config", "named"),
        [
            ({"kind": "poly"}, "kind"),
            ({"scale": None}, "scale"),
            ({"alert_tokens": "64"}, "alert_tokens"),
        ],
    )
    def test_broken_config(self, tmp_path: Path, config: dict[str, Any], named: str) -> None:
        """An unknown kind or a bi-encoder without its scale or lengths stops the start."""
        folder = bi_folder(tmp_path, **config)
        with pytest.raises(ConfigError, match="READER_ENABLED=false") as caught:
            Reader(folder)
        assert named in str(caught.value)

    def test_a_cross_graph_is_not_a_bi_encoder(self, tmp_path: Path) -> None:
        """A folder that says bi but holds a cross-encoder's graph is refused at load."""
        folder = bi_folder(tmp_path)
        onnx.save(_graph(), str(folder / "model.onnx"))
        with pytest.raises(ConfigError, match=BI_OUTPUT):
            Reader(folder)


class TestReadingOrder:
    @pytest.mark.parametrize(
        ("logits", "penalty", "order"),
        [
            ((0.0, 3.0, 1.0), 0.0, [0, 1, 2]),
            ((0.0, 3.0, 1.0), 1.0, [1, 0, 2]),
            ((0.0, 3.0, 1.0), 3.0, [0, 1, 2]),  # a tie keeps the fused order
            ((0.0, 0.5, 4.0), 1.0, [2, 0, 1]),
            ((), 1.0, []),
        ],
    )
    def test_order(self, logits: tuple[float, ...], penalty: float, order: list[int]) -> None:
        """By the logit less the penalty for each place below the first; none: fused."""
        assert reading_order(logits, penalty) == order


#: A decision that shows every candidate (each at sigmoid(cosine) >= 0.5), so every page
#: is worth reading; one that shows none (Searcher._worth_reading).
SHOWS = Model(("cosine",), (0.0,), (1.0,), (1.0,), 0.0, lead_floor=0.0)
QUIET = Model(("cosine",), (0.0,), (1.0,), (1.0,), -50.0, lead_floor=0.05)


@pytest.fixture(scope="module")
def searcher(
    golden_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Searcher]:
    """The golden index with the tiny reader reading the first two candidates."""
    root = tmp_path_factory.mktemp("reader")
    copy_index(golden_index, root / "qdrant")
    index = open_engine("edge", root / "qdrant")
    config = SearchConfig.from_settings(Settings(reader_top_k=2))
    yield Searcher(index, embedder, config, SHOWS, Reader(_folder(root)))
    index.close()


@pytest.fixture(scope="module")
def reordering(
    golden_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Searcher, Searcher]]:
    """The golden index searched without a reader, and with the tiny bi-encoder reading
    the first three candidates and ordering them with a small penalty."""
    root = tmp_path_factory.mktemp("bi")
    copy_index(golden_index, root / "qdrant")
    index = open_engine("edge", root / "qdrant")
    config = SearchConfig.from_settings(Settings(reader_top_k=3))
    # Long sides, so the passages' lengths tell them apart, and a scale that makes those
    # small differences in cosine logits worth more than a place.
    reader = Reader(
        bi_folder(
            root, alert_tokens=64, passage_tokens=256, scale=1e4, shift=0.99, rerank_penalty=0.1
        )
    )
    yield Searcher(index, embedder, config, SHOWS), Searcher(index, embedder, config, SHOWS, reader)
    index.close()



#: A decision that finds every candidate equally probable: it leaves the fused order.
FLAT = Model(("cosine",), (0.0,), (1.0,), (0.0,), 0.0, lead_floor=0.0)


class TestMostProbableFirst:
    def test_scored_candidates_go_most_probable_first(
        self, reordering: tuple[Searcher, Searcher]
    ) -> None:
        """Without a reader, the scored candidates are put most probable first (here the
        probability grows with the cosine), ties in fused order; the unscored follow in
        fused order."""
        plain, _ = reordering
        alert = _alert("PaymentsPayoutsSlow", "Payouts to the bank are delayed", "Queue backs up")
        fused = Searcher(plain.index, plain.embedder, plain.config, FLAT).rank(alert).candidates
        ranked = plain.rank(alert).candidates
        scored = [c for c in fused if c.features]
        assert len(scored) == plain.config.scored and len(fused) > len(scored)
        by_cosine = sorted(scored, key=lambda c: -c.features["cosine"])
        assert [c.payload for c in by_cosine] != [c.payload for c in scored]
        assert [c.payload for c in ranked[: len(scored)]] == [c.payload for c in by_cosine]
        assert [c.payload for c in ranked[len(scored) :]] == [
            c.payload for c in fused[len(scored) :]
        ]
        assert [c.score for c in ranked[: len(scored)]] == sorted(
            (c.score for c in ranked[: len(scored)]), reverse=True
        )


class TestReorderInSearch:
    def test_the_read_candidates_take_the_readers_order(
        self, reordering: tuple[Searcher, Searcher]
    ) -> None:
        """The candidates read are put in the reader's order (reading_order of its logits
        over them, most probable first); the others keep their places."""
        plain, reading = reordering
        alert = _alert("PaymentsPayoutsSlow", "Payouts to the bank are delayed", "Queue backs up")
        fused = plain.rank(alert).candidates
        read = reading.rank(alert).candidates
        assert reading.reader is not None and len(fused) > 4
        query = build_query(alert)
        logits = reading.reader.score([texts(query, c.payload) for c in fused[:3]])
        order = reading_order(logits, reading.reader.rerank_penalty)
        assert order != [0, 1, 2]  # the tiny reader's lengths do reorder these three
        assert [c.payload for c in read[:3]] == [fused[i].payload for i in order]
        assert [c.payload for c in read[3:]] == [c.payload for c in fused[3:]]

    def test_a_page_that_names_none_of_them_is_not_read(
        self, reordering: tuple[Searcher, Searcher]
    ) -> None:
        """With a decision that shows none of the candidates the reader would read (each
        below the lead floor and the match bars), the page names none of them in any order:
        the fused order stands and the reader is not asked (no candidate has its features).
        The same alert is reordered under a decision that shows them (the test above)."""
        plain, reading = reordering
        alert = _alert("PaymentsPayoutsSlow", "Payouts to the bank are delayed", "Queue backs up")
        fused = Searcher(plain.index, plain.embedder, plain.config, QUIET).rank(alert)
        unread = Searcher(reading.index, reading.embedder, reading.config, QUIET, reading.reader)
        candidates = unread.rank(alert).candidates
        assert len(candidates) > 3 and all(c.score < 0.05 for c in candidates)
        assert [c.payload for c in candidates] == [c.payload for c in fused.candidates]
        assert not any("reader" in c.features for c in candidates)


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

    @pytest.mark.parametrize(
        ("penalty", "decision", "loads"),
        [(0.5, IGNORES, True), (0.0, IGNORES, False), (0.0, WEIGHS, True)],
    )
    def test_a_reordering_reader_loads_unweighed(
        self, tmp_path: Path, penalty: float, decision: Model, loads: bool
    ) -> None:
        """Unset, a reader that orders what it reads is loaded even for a decision that
        does not weigh its features; one that neither orders nor is weighed is not."""
        folder = bi_folder(tmp_path, rerank_penalty=penalty)
        reader = load_reader(Settings(reader_dir=folder), decision)
        assert (reader is not None) == loads

    def test_an_unreadable_config_is_said(self, tmp_path: Path) -> None:
        """A present model whose config cannot be read stops the start, weighed or not."""
        folder = bi_folder(tmp_path)
        (folder / "config.json").write_text("{")
        with pytest.raises(ConfigError, match="config"):
            load_reader(Settings(reader_dir=folder), IGNORES)

    @pytest.mark.parametrize("enabled", [None, True])
    def test_a_broken_model_stops_the_start(self, tmp_path: Path, enabled: bool | None) -> None:
        """Asked for, a missing model is an error; present, a corrupt one is too."""
        folder = _folder(tmp_path)
        (folder / ("tokenizer.json" if enabled is None else "model.onnx")).unlink()
        with pytest.raises(ConfigError, match=str(folder)):
            load_reader(Settings(reader_enabled=enabled, reader_dir=folder), WEIGHS)


@pytest.fixture(scope="module")
def shipped() -> Reader:
    """The model folder that ships (enricher/search/reader/), as the service loads it."""
    return Reader(READER_DIR)


class TestShippedReader:
    def test_the_folder_keeps_its_contract(self, shipped: Reader) -> None:
        """A bi-encoder that orders what it reads, small enough to commit, trained without
        the corpora its provenance says it never saw."""
        assert shipped.kind == BI and shipped.reorders
        assert (READER_DIR / "model.onnx").stat().st_size <= 25 * 1024 * 1024
        assert shipped.provenance["kind"] == "bi"
        assert shipped.provenance["int8"]["vs_fp32"]["correlation"] > 0.99
        assert set(shipped.provenance["calibration"]["fitted_on"]) == {
            "prom-runbooks",
            "openshift-runbooks",
        }

    def test_reads_a_renamed_alert_as_its_runbooks(self, shipped: Reader) -> None:
        """A renamed alert reads closer to its own runbook than to its sibling's."""
        query = build_query(
            _alert(
                "PgStandbyFallingBehind",
                "Standby is replaying WAL slowly",
                "The standby database is 300 seconds behind the primary",
            )
        )
        lag = _payload(
            **{
                schema.F_TITLE: "PostgresReplicationLag",
                schema.F_SECTION: "Diagnosis",
                schema.F_TEXT: "The replica falls behind the primary. Compare the replay LSN "
                "of the replica with the primary's and check the WAL receiver.",
            }
        )
        disk = _payload(
            **{
                schema.F_TITLE: "PostgresDiskFull",
                schema.F_SECTION: "Mitigation",
                schema.F_TEXT: "The data volume is above 90 percent. Remove shipped WAL "
                "archives and grow the volume.",
            }
        )
        right, sibling = shipped.score([texts(query, lag), texts(query, disk)])
        assert right > sibling

    def test_a_passage_reads_the_same_whatever_is_embedded_beside_it(
        self, shipped: Reader
    ) -> None:
        """The int8 graph quantizes activations over the whole batch, so a chunk's stored
        vector must not come from a batch: alone, it depends on its own text only. Batched
        with a long neighbour, the shipped graph gives this passage another vector."""
        short = "Disk Full. Mitigation. Grow the volume."
        long = " ".join(["The replica falls behind the primary and the WAL receiver stalls."] * 12)
        alone = shipped.passage_vectors([short])[0]
        assert np.array_equal(shipped.passage_vectors([long, short, long])[1], alone)
        batched = shipped._run(shipped._tokenizer.encode_batch([long, short]))[1]
        assert not np.array_equal(batched, alone)
