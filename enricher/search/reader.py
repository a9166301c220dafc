"""The reader: a model trained on the task that reads the alert and each candidate runbook.

Every other piece of evidence (enricher.search.evidence) compares what MiniLM, BM25 and
the names say of the alert and the runbook; the reader is the one part trained on the
task itself, (alert, its runbook section) against (alert, a sibling's), so it can tell a
renamed alert's runbook from its sibling's. Two kinds are served from a model folder:

- a cross-encoder (`kind` "cross", the default): one pass over each (alert, passage)
  pair, output `logits` (batch x 1, a raw logit: higher is the alert's);
- a bi-encoder (`kind` "bi"): the alert and each passage embedded apart, output
  `embedding` (batch x dim, unit length); the logit is `scale * (cosine - shift)`,
  fitted at export on lists the reader never saw.

The folder holds `model.onnx` (int8; inputs `input_ids`, `attention_mask`,
`token_type_ids`, int64, batch x sequence), `tokenizer.json`, `config.json` (the kind,
its lengths in tokens: `max_length` for a pair, `alert_tokens` and `passage_tokens` for
the two sides of a bi-encoder; `alert_chars`, where the alert's side is cut before
tokenizing; `rerank_penalty`, see `Reader.rerank_penalty`) and `reader.json` (where it
came from: data manifest hash, commit, metrics).

How it is collected, trained, exported and measured lives under quality/. This module
builds the two texts from what search has (`texts`, pure: training builds its pairs with
it too) and scores pairs (`Reader`); nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.search.names import split_identifier
from enricher.search.query import Query

#: The alert's side of a pair, in characters: its name in words, service, summary,
#: description and rule. Cut before tokenizing (a sender controls every byte of it).
ALERT_CHARS = 600
#: The runbook's side: its name, the section heading and the best chunk's text.
PASSAGE_CHARS = 1200
#: Names read per runbook (title and listed alert names); a unit rarely has more than two.
PASSAGE_NAMES = 4
#: The shipped model folder (quality/train makes it; docs/RETRIEVAL.md, "The reader").
READER_DIR = Path(__file__).with_name("reader")
#: The ONNX graph's inputs and output, the contract of the model folder.
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "logits"
#: A bi-encoder's output: one unit-length embedding per text.
BI_OUTPUT = "embedding"
CROSS, BI = "cross", "bi"
KINDS = (CROSS, BI)


def _join(parts: Sequence[str]) -> str:
    seen: list[str] = []
    for part in parts:
        text = " ".join(part.split())
        if text and text not in seen:
            seen.append(text)
    return ". ".join(seen)


def _words(name: str) -> str:
    """An identifier in words (`KubePodCrashLooping` -> Kube Pod Crash Looping); prose as is."""
    return name if " " in name.strip() else split_identifier(name)


def alert_text(query: Query) -> str:
    """What the alert says, as the reader reads it: its name in words first, then its
    service, summary, description, descriptive labels and the rule's metrics and states
    in words (the query's `reader_text`), at most ALERT_CHARS."""
    return query.reader_text[:ALERT_CHARS]


def passage_text(payload: Mapping[str, Any]) -> str:
    """A candidate runbook as the reader reads it: its names in words (title, listed alert
    names), the heading of its best chunk, then that chunk's text, at most PASSAGE_CHARS.
    The names come first so that truncation never cuts what the runbook is called."""
    names = [str(payload.get(schema.F_TITLE, "")), *payload.get(schema.F_ALERT_NAMES, [])]
    heading = str(payload.get(schema.F_SECTION, ""))
    text = str(payload.get(schema.F_TEXT, ""))[:PASSAGE_CHARS]
    return _join([*(_words(n) for n in names[:PASSAGE_NAMES]), heading, text])[:PASSAGE_CHARS]


def texts(query: Query, payload: Mapping[str, Any]) -> tuple[str, str]:
    """The reader's pair for one candidate: (alert text, passage text)."""
    return alert_text(query), passage_text(payload)


class Reader:
    """One ONNX session per process, one intra-op thread: the reader scores a handful of
    pairs per page, where more threads cost more in hand-off than they save, and the
    service's workers already use the cores."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            self.kind = str(config.get("kind") or CROSS)
            if self.kind not in KINDS:
                raise ValueError(f"kind {self.kind!r} is none of {list(KINDS)}")
            twin = self.kind == BI
            self.max_length = int(_number(config, "passage_tokens" if twin else "max_length"))
            self.alert_tokens = int(_number(config, "alert_tokens")) if twin else self.max_length
            self.scale = _number(config, "scale") if twin else 1.0
            self.shift = _number(config, "shift") if twin else 0.0
            self.rerank_penalty = float(config.get("rerank_penalty") or 0.0)
            self.alert_chars = int(config.get("alert_chars") or ALERT_CHARS)
            self.provenance: dict[str, Any] = json.loads(
                (folder / "reader.json").read_text(encoding="utf-8")
            )
            self._tokenizer = _tokenizer(folder, self.max_length)
            self._alert_tokenizer = _tokenizer(folder, self.alert_tokens)
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            # No arena: it would keep the largest batch's buffers (ingest's passages) for
            # the life of the serving process.
            options.enable_cpu_mem_arena = False
            graph = (folder / "model.onnx").read_bytes()
            #: Which model made a stored passage vector: a vector of another is not read.
            self.digest = hashlib.sha256(graph).hexdigest()[:16]
            self._session = ort.InferenceSession(
                graph, options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # tokenizers and onnxruntime raise bare Exception subclasses
            raise ConfigError(_unreadable(folder, exc)) from exc
        self._output = BI_OUTPUT if twin else OUTPUT
        names = {i.name for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        if not names <= set(INPUTS) or self._output not in outputs:
            raise ConfigError(
                f"the {self.kind} reader model in {folder} takes {sorted(names)} and gives "
                f"{outputs}, not {list(INPUTS)} -> {self._output!r}: export it again "
                '(docs/RETRIEVAL.md, "The reader"), or set READER_ENABLED=false'
            )
        self._inputs = tuple(n for n in INPUTS if n in names)

    @property
    def reorders(self) -> bool:
        """Whether the reader orders the candidates it read (`rerank_penalty` > 0): by its
        logit less `rerank_penalty` for each place a candidate stood below the first in
        the search's order (most probable first), so the reader overturns the search only
        by a margin."""
        return self.rerank_penalty > 0

    def score(
        self,
        pairs: Sequence[tuple[str, str]],
        stored: Sequence[np.ndarray | None] = (),
    ) -> list[float]:
        """The raw logit of each (alert text, passage text): higher is more likely the
        alert's runbook. A cross-encoder reads the pairs in one batch, padded to its
        longest; a bi-encoder embeds each distinct alert, and each passage it has no
        `stored` vector for, alone (`_each`)."""
        if not pairs:
            return []
        cut = [(a[: self.alert_chars], p) for a, p in pairs]
        if self.kind == CROSS:
            arrays = self._run(self._tokenizer.encode_batch(cut))
            return [float(v) for v in arrays.astype(np.float64).reshape(len(pairs))]
        alerts = sorted({a for a, _ in cut})
        alert_rows = self._each(self._alert_tokenizer, alerts)
        dim = alert_rows.shape[1]
        given = list(stored) or [None] * len(cut)
        known = [v if v is not None and v.shape == (dim,) else None for v in given]
        missing = [i for i, v in enumerate(known) if v is None]
        fresh = iter(self.passage_vectors([cut[i][1] for i in missing]) if missing else ())
        passages = [v if v is not None else next(fresh) for v in known]
        by_alert = {a: alert_rows[i] for i, a in enumerate(alerts)}
        return [
            self.scale * (float(np.dot(by_alert[a], v)) - self.shift)
            for (a, _), v in zip(cut, passages, strict=True)
        ]

    def passage_vectors(self, passages: Sequence[str]) -> np.ndarray:
        """A bi-encoder's embedding of each passage text (`passage_text`): what ingest
        stores with each chunk (schema.F_READER_VECTOR), so a page embeds only its alert."""
        if self.kind != BI:
            raise ValueError("only a bi-encoder reader embeds passages apart")
        if not passages:
            return np.zeros((0, 0), dtype=np.float32)
        return self._each(self._tokenizer, passages)

    def _each(self, tokenizer: Tokenizer, texts: Sequence[str]) -> np.ndarray:
        """Each text's embedding, one ONNX run each. The int8 graph quantizes its
        activations over the whole batch (dynamic quantization), so in a batch a text's
        vector moves with its neighbours' lengths and words (a passage's cosine by up to
        0.02): alone, a chunk's stored vector depends on its text only, whatever else one
        sync embeds. It is also faster than padding a batch to its longest text (31 against
        42 ms a passage at 160 tokens on two cores), and holds no batch's buffers."""
        return np.concatenate([self._run(tokenizer.encode_batch([text])) for text in texts])

    def _run(self, encoded: Sequence[Encoding]) -> np.ndarray:
        arrays = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        (out,) = self._session.run([self._output], {n: arrays[n] for n in self._inputs})
        return np.asarray(out, dtype=np.float32)


def reorders(folder: Path) -> bool:
    """Whether the reader in `folder` orders what it reads (Reader.reorders), from its
    config alone: whether it is worth loading for a decision that does not weigh it. A
    config that cannot be read says yes, so that loading it says what is wrong."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    penalty = config.get("rerank_penalty") if isinstance(config, dict) else None
    return not isinstance(config, dict) or (isinstance(penalty, int | float) and penalty > 0)


def reading_order(logits: Sequence[float], penalty: float) -> list[int]:
    """The order of the candidates read (given in the search's order), by the reader:
    each by its logit less `penalty` for each place below the first; ties keep the
    search's order. With no penalty (a reader that does not reorder) that order stands."""
    if penalty <= 0:
        return list(range(len(logits)))
    return sorted(range(len(logits)), key=lambda i: (-(logits[i] - penalty * i), i))


def pack(vector: np.ndarray) -> str:
    """A passage vector as a chunk's payload stores it: float16 bytes in base64 (768 bytes
    for MiniLM's 384 dimensions; cosines move by about 1e-3)."""
    return base64.b64encode(np.asarray(vector, dtype="<f2").tobytes()).decode("ascii")


def unpack(text: object) -> np.ndarray | None:
    """A stored passage vector, or None for anything that is not one."""
    if not isinstance(text, str) or not text:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    if len(raw) % 2:
        return None
    return np.frombuffer(raw, dtype="<f2").astype(np.float32)


def _number(config: Mapping[str, Any], key: str) -> float:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"config.json's {key} is {value!r}, not a number")
    return float(value)


def _tokenizer(folder: Path, max_length: int) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
    return tokenizer


def _unreadable(folder: Path, exc: Exception) -> str:
    return (
        f"cannot load the reader model from {folder} ({type(exc).__name__}: {str(exc)[:200]}): "
        "it needs model.onnx, tokenizer.json, config.json with its kind and lengths, and "
        "reader.json; "
        "restore the folder from git, point READER_DIR at one, or set READER_ENABLED=false"
    )


__all__ = [
    "ALERT_CHARS",
    "BI",
    "BI_OUTPUT",
    "CROSS",
    "INPUTS",
    "OUTPUT",
    "PASSAGE_CHARS",
    "READER_DIR",
    "Reader",
    "alert_text",
    "pack",
    "passage_text",
    "reading_order",
    "reorders",
    "texts",
    "unpack",
]
