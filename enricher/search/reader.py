"""The reader: a cross-encoder that reads the alert and one candidate runbook together.

Every other piece of evidence (enricher.search.evidence) reads the alert and the runbook
apart and compares what comes out; the reader is the one part trained on the task itself,
(alert, its runbook section) against (alert, a sibling's), so it can tell a renamed
alert's runbook from its sibling's. It is served from a model folder:

- `model.onnx`: int8 ONNX, inputs `input_ids`, `attention_mask`, `token_type_ids` (int64,
  batch x sequence), output `logits` (batch x 1, a raw logit: higher is the alert's);
- `tokenizer.json`: the tokenizer, read by `tokenizers` with pair encoding;
- `config.json`: `max_length`, the pair's length in tokens, and `alert_chars`, where the
  alert's side is cut before tokenizing (so the passage keeps the rest; absent: 600);
- `reader.json`: where it came from (data manifest hash, commit, metrics).

How it is collected, trained, exported and measured lives under quality/. This module
builds the two texts from what search has (`texts`, pure: training builds its pairs with
it too) and scores pairs (`Reader`); nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

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
            self.max_length = int(config["max_length"])
            self.alert_chars = int(config.get("alert_chars") or ALERT_CHARS)
            self.provenance: dict[str, Any] = json.loads(
                (folder / "reader.json").read_text(encoding="utf-8")
            )
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # tokenizers and onnxruntime raise bare Exception subclasses
            raise ConfigError(_unreadable(folder, exc)) from exc
        names = {i.name for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        if not names <= set(INPUTS) or OUTPUT not in outputs:
            raise ConfigError(
                f"the reader model in {folder} takes {sorted(names)} and gives {outputs}, "
                f"not {list(INPUTS)} -> {OUTPUT!r}: export it again (docs/RETRIEVAL.md, "
                '"The reader"), or set READER_ENABLED=false'
            )
        self._inputs = tuple(n for n in INPUTS if n in names)
        self._tokenizer.enable_truncation(self.max_length)
        self._tokenizer.enable_padding(pad_id=self._tokenizer.token_to_id("[PAD]") or 0)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The raw logit of each (alert text, passage text): higher is more likely the
        alert's runbook. One batch, padded to its longest pair."""
        if not pairs:
            return []
        encoded = self._tokenizer.encode_batch([(a[: self.alert_chars], p) for a, p in pairs])
        arrays = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        (logits,) = self._session.run([OUTPUT], {n: arrays[n] for n in self._inputs})
        return [float(v) for v in np.asarray(logits, dtype=np.float64).reshape(len(pairs))]


def _unreadable(folder: Path, exc: Exception) -> str:
    return (
        f"cannot load the reader model from {folder} ({type(exc).__name__}: {str(exc)[:200]}): "
        "it needs model.onnx, tokenizer.json, config.json with max_length and reader.json; "
        "restore the folder from git, point READER_DIR at one, or set READER_ENABLED=false"
    )


__all__ = [
    "ALERT_CHARS",
    "INPUTS",
    "OUTPUT",
    "PASSAGE_CHARS",
    "READER_DIR",
    "Reader",
    "alert_text",
    "passage_text",
    "texts",
]
