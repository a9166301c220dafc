"""Train the reader, a cross-encoder over (alert, candidate) pairs: `python -m
quality.train.train` (the train venv's torch; docs/RETRIEVAL.md, "The reader").

The model is MiniLM (the dense model's own weights) cut to its first `--layers` layers, a
linear head on the last layer's [CLS]; one logit per pair. It is trained on the lists
mined with the product's search (quality.train.mine): binary cross-entropy on every pair,
since the decision reads the logit's sigmoid as a probability, plus a listwise softmax term
on the lists that hold the expected runbook, which is what ranks it above its sibling.
The word embeddings stay frozen: about 900 rules cannot teach 30,522 token vectors, and a
frozen table is the base model's, so only the layers and head need carrying back from a
GPU machine (`--save` writes the trained weights without it, fp16).

One run trains, for each size in `--sizes`, the `all` reader and the fold readers (each
without its fold's corpora: quality.train.train_data.folds), measures each alone on what it
never saw (a fold reader on its fold's corpora, `all` on the `held-out` lists: the
released dev slices) and saves it as `<out>/L<layers>-<reader>.safetensors`;
`<out>/summary.json` gathers what each was trained on and its numbers.

Imports neither the product nor quality.eval: it runs where only torch is installed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from transformers import AutoConfig, AutoModel

from quality.train.train_data import (
    ALL,
    Listing,
    corpus_of,
    folds,
    manifest_hash,
    measure,
    mined,
    pairs,
    read,
)
from quality.train.train_data import batches as list_batches

#: The frozen table, left out of the saved weights (the base model has it).
FROZEN = "bert.embeddings.word_embeddings.weight"
#: The safetensors metadata key that holds what a saved reader was trained on and how.
TRAINED = "trained"


@dataclass(frozen=True)
class Config:
    """The shipped reader's recipe. Measured on the folds (docs/RETRIEVAL.md, "The reader"):
    at lr 4e-5 for 3 epochs the reader fits its training corpora and ranks held-out ones
    at chance (AUC 0.50-0.65); at 1.5e-4 for 6 epochs, 0.58-0.94."""

    layers: int = 2
    max_length: int = 64
    #: The alert's side cut to this many characters before tokenizing (0: as mined, 600),
    #: so that a longer pair gives its extra tokens to the runbook's text.
    alert_chars: int = 0
    #: Negatives kept per list, the first in fused order: the hardest (0: all).
    negatives: int = 0
    epochs: int = 6
    lr: float = 1.5e-4
    head_lr: float = 1e-3
    warmup: float = 0.1
    lists_per_batch: int = 16
    listwise: float = 0.5
    weight_decay: float = 0.01
    seed: int = 13


class CrossEncoder(torch.nn.Module):  # type: ignore[misc]
    """BERT, a linear head on [CLS]: inputs as keyword arguments (transformers 5 reordered
    BertModel's positional ones), output logits [batch, 1]."""

    def __init__(self, bert: Any) -> None:
        super().__init__()
        self.bert = bert
        self.head = torch.nn.Linear(bert.config.hidden_size, 1)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        out = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        )
        return self.head(out.last_hidden_state[:, 0])


def build(base: Path, layers: int, attention: str = "sdpa") -> CrossEncoder:
    """The base model's first `layers` layers (the rest of its weights are not loaded)."""
    config = AutoConfig.from_pretrained(base, num_hidden_layers=layers)
    bert = AutoModel.from_pretrained(
        base,
        config=config,
        add_pooling_layer=False,
        attn_implementation=attention,
        dtype=torch.float32,
    )
    return CrossEncoder(bert)


def load(base: Path, saved: Path, attention: str = "eager") -> tuple[CrossEncoder, dict[str, Any]]:
    """A saved reader: the base model's frozen table with the saved weights over it."""
    with safe_open(str(saved), "pt") as f:
        trained: dict[str, Any] = json.loads(f.metadata()[TRAINED])
    model = build(base, int(trained["config"]["layers"]), attention)
    state = {k: v.float() for k, v in load_file(str(saved)).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if list(missing) != [FROZEN] or unexpected:
        raise SystemExit(f"{saved}: weights do not fit the base ({missing}, {unexpected})")
    return model.eval(), trained


def tokenizer(base: Path, max_length: int) -> Tokenizer:
    """The base tokenizer as the serving side sets it (enricher.search.reader.Reader):
    pairs truncated longest-first to `max_length`, padded to the batch's longest."""
    tok = Tokenizer.from_file(str(base / "tokenizer.json"))
    tok.enable_truncation(max_length)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")
    return tok


def encode(tok: Tokenizer, batch: Sequence[tuple[str, str]], device: str) -> dict[str, Any]:
    encoded = tok.encode_batch(list(batch))
    return {
        name: torch.tensor([getattr(e, field) for e in encoded], dtype=torch.long, device=device)
        for name, field in (
            ("input_ids", "ids"),
            ("attention_mask", "attention_mask"),
            ("token_type_ids", "type_ids"),
        )
    }


def train(
    listings: Sequence[Listing], base: Path, config: Config, device: str
) -> tuple[CrossEncoder, dict[str, Any]]:
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    model = build(base, config.layers).to(device)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    tok = tokenizer(base, config.max_length)
    examples = pairs(listings, config.negatives, config.alert_chars)
    by_group: dict[int, list[int]] = {}
    for i, p in enumerate(examples):
        by_group.setdefault(p.group, []).append(i)
    head = [p for n, p in model.named_parameters() if n.startswith("head.")]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("head.")]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": config.lr}, {"params": head, "lr": config.head_lr}],
        weight_decay=config.weight_decay,
    )
    steps = config.epochs * math.ceil(len(listings) / config.lists_per_batch)
    warm = max(1, int(steps * config.warmup))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    autocast = device.startswith("cuda")
    log: list[dict[str, float]] = []
    started = time.perf_counter()
    model.train()
    for epoch in range(config.epochs):
        t0, total, seen = time.perf_counter(), 0.0, 0
        for groups in list_batches(len(listings), config.lists_per_batch, config.seed, epoch):
            rows = [i for g in groups for i in by_group.get(g, [])]
            inputs = encode(tok, [(examples[i].alert, examples[i].passage) for i in rows], device)
            labels = torch.tensor([examples[i].label for i in rows], device=device).float()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
                logits = model(**inputs).float().squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            loss = loss + config.listwise * _listwise(logits, labels, rows, examples)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item() * len(rows)
            seen += len(rows)
        seconds = time.perf_counter() - t0
        log.append(
            {"epoch": epoch + 1, "loss": round(total / max(seen, 1), 4), "s": round(seconds, 1)}
        )
        print(
            f"train: epoch {epoch + 1}: loss {total / max(seen, 1):.4f}, "
            f"{seen / seconds:.0f} pairs/s, {seconds:.0f} s",
            file=sys.stderr,
        )
    info = {
        "pairs": len(examples),
        "lists": len(listings),
        "positives": sum(p.label for p in examples),
        "epochs": log,
        "seconds": round(time.perf_counter() - started, 1),
        "device": device if not autocast else f"{device} ({torch.cuda.get_device_name()}, bf16)",
        "torch": torch.__version__,
    }
    return model.eval(), info


def _listwise(
    logits: torch.Tensor, labels: torch.Tensor, rows: Sequence[int], examples: Sequence[Any]
) -> torch.Tensor:
    """Softmax cross-entropy of each list that holds its expected runbook, mean over them."""
    groups: dict[int, list[int]] = {}
    for pos, i in enumerate(rows):
        groups.setdefault(examples[i].group, []).append(pos)
    terms = []
    for members in groups.values():
        idx = torch.tensor(members, device=logits.device)
        target = labels[idx]
        if float(target.sum()) > 0:
            terms.append(-(torch.log_softmax(logits[idx], 0) * target).sum() / target.sum())
    return torch.stack(terms).mean() if terms else logits.sum() * 0.0


def score(
    model: CrossEncoder,
    tok: Tokenizer,
    listings: Sequence[Listing],
    device: str,
    alert_chars: int = 0,
) -> list[list[float]]:
    """The model's logits for every list, one list per batch."""
    out = []
    with torch.no_grad():
        for item in listings:
            alert = item.alert[: alert_chars or None]
            inputs = encode(tok, [(alert, p) for p in item.passages], device)
            out.append([float(v) for v in model(**inputs).float().squeeze(-1).cpu()])
    return out


def save(model: CrossEncoder, path: Path, trained: dict[str, Any]) -> None:
    """One file: the trained weights in fp16 but the frozen table, and `trained` as its
    metadata (a GPU machine sends back few files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().half().contiguous().cpu() for k, v in model.state_dict().items()}
    state.pop(FROZEN)
    save_file(state, str(path), metadata={TRAINED: json.dumps(trained, sort_keys=True)})


def shape(spec: str) -> tuple[int, int]:
    """`L2x128` -> (2 layers, max_length 128)."""
    layers, _, length = spec.removeprefix("L").partition("x")
    return int(layers), int(length or Config.max_length)


def readers(
    train_files: Sequence[Path], held_out: Sequence[Path], spec: str
) -> list[tuple[str, list[Path], list[Path]]]:
    """(name, training files, measured files) of every reader of one shape: each fold
    reader without its fold's corpora, measured on them; `all` measured on `held_out`."""
    counts = {corpus_of(f): len(read(f)) for f in train_files}
    plan = [
        (
            f"{spec}-{name}",
            [f for f in train_files if corpus_of(f) not in out],
            [f for f in train_files if corpus_of(f) in out],
        )
        for name, out in folds(counts).items()
    ]
    return [*plan, (f"{spec}-{ALL}", list(train_files), list(held_out))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.train", description=__doc__)
    parser.add_argument("--mined", type=Path, required=True, help="quality.train.mine --out")
    parser.add_argument("--base", type=Path, required=True, help="the MiniLM weights folder")
    parser.add_argument("--out", type=Path, required=True, help="where the readers are saved")
    parser.add_argument(
        "--shapes",
        nargs="+",
        default=["L2x64"],
        help="readers trained and saved: L<layers>x<max_length>",
    )
    parser.add_argument(
        "--probes", nargs="*", default=[], help="shapes measured by their fold readers only"
    )
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--limit", type=int, default=0, help="lists per corpus (a smoke test)")
    parser.add_argument("--budget-s", type=float, default=0.0, help="start no reader after this")
    for field, value in asdict(Config()).items():
        if field not in ("layers", "max_length"):
            parser.add_argument(f"--{field.replace('_', '-')}", type=type(value), default=value)
    args = parser.parse_args(argv)
    device = (
        args.device if args.device != "auto" else "cuda" if torch.cuda.is_available() else "cpu"
    )
    train_files, held_out = mined(args.mined / "train"), mined(args.mined / "held-out")
    started, summary = time.perf_counter(), {}
    jobs = [
        (s, n, t, m, True) for s in args.shapes for n, t, m in readers(train_files, held_out, s)
    ]
    jobs += [
        (s, n, t, m, False)
        for s in args.probes
        for n, t, m in readers(train_files, held_out, s)
        if not n.endswith(ALL)
    ]
    for spec, name, files, measured_files, keep in jobs:
        if args.budget_s and time.perf_counter() - started > args.budget_s:
            print(f"train: {name} skipped, past --budget-s", file=sys.stderr)
            continue
        layers, max_length = shape(spec)
        rest = {f: getattr(args, f) for f in asdict(Config()) if f not in ("layers", "max_length")}
        config = Config(layers=layers, max_length=max_length, **rest)
        listings = [x for f in files for x in read(f)[: args.limit or None]]
        model, info = train(listings, args.base, config, device)
        tok = tokenizer(args.base, config.max_length)
        measured = {}
        for f in measured_files:
            held = read(f)[: args.limit or None]
            measured[corpus_of(f)] = asdict(
                measure(held, score(model, tok, held, device, config.alert_chars))
            )
        trained = {
            "name": name,
            "config": asdict(config),
            "data": sorted(corpus_of(f) for f in files),
            "excluded": sorted(corpus_of(f) for f in train_files if f not in files),
            "data_hash": manifest_hash(files),
            "training": info,
            "held_out_fp32": measured,
        }
        summary[name] = trained
        print(f"train: {name}: {json.dumps(measured)}", file=sys.stderr)
        if keep:
            save(model.cpu(), args.out / f"{name}.safetensors", trained)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
