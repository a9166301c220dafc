"""The bi-encoder reader (issue 36, item 2's second option), trained and measured on the
mined lists: `python -m quality.train.train_bi` in the train venv (torch; see
train_reader.sh for how that venv is built).

MiniLM's own weights (all six layers, mean pooling, as the dense model embeds) are
fine-tuned with the multiple-negatives ranking loss: each list's alert against its
expected passage, the first `--negatives` other candidates of its own list (the siblings
the product's search put beside it, in fused order), and every passage of the batch's other
lists. A list with no positive (a near miss, noise) is not trained on: this loss needs one.
`--absolute W` adds W times a binary loss on one shared logit, scale * (cosine - shift)
with both learnt: each list's expected passage is 1, its own negatives 0, and so are the
first three candidates of `--empty-per-batch` lists without a positive (left-out twins,
near misses, noise). The ranking loss only asks for a lead within a list; this one asks
that a runbook that is not indexed read low on every page, which is what the decision
needs to tell a right page from a wrong one.
`--augmented` also trains on quality.train.augment's extra renames of the same corpora.

Each reader is measured on lists it never saw, with the cosine of the alert to each
candidate as its score: the held-out dev slices, and a fold reader also its fold's corpora
(train_data.folds). Besides train_data.measure's R@1 and AUC, the
measure that matters to the decision is `margin_auc`: how well the first candidate's lead
in cosine over the others tells a right first runbook from a wrong one
(train_data.margin_auc), against the same for the base model (`--no-base` skips it when
comparing recipes). `all_lists` (train_data.decision_aucs) asks the same of the cosine
itself over every list, those without the runbook too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModel

from quality.train.train_data import (
    ALL,
    FOLDS,
    Listing,
    batches,
    corpus_of,
    decision_aucs,
    folds,
    manifest_hash,
    margin_auc,
    measure,
    mined,
    read,
)

#: The cosine's scale in the loss (the usual 20 of the multiple-negatives ranking loss).
SCALE = 20.0


class Encoder:
    """MiniLM with mean pooling and unit length: the dense model's way of embedding."""

    def __init__(self, base: Path) -> None:
        self.model = AutoModel.from_pretrained(str(base))
        self.tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))

    def __call__(self, texts: Sequence[str], max_tokens: int) -> torch.Tensor:
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in encoded])
        mask = torch.tensor([e.attention_mask for e in encoded])
        hidden = self.model(
            input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)
        ).last_hidden_state
        weights = mask.unsqueeze(-1).float()
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)


def trainable(listings: Sequence[Listing]) -> list[Listing]:
    """The lists the loss can use: one expected passage and at least one other."""
    return [item for item in listings if sum(item.labels) == 1 and len(item.labels) > 1]


def train(
    encoder: Encoder, listings: Sequence[Listing], args: argparse.Namespace, head: torch.Tensor
) -> list[float]:
    """Fine-tune in place (and `head`, the absolute loss's scale and shift); the mean loss
    of each epoch."""
    usable = trainable(listings)
    empty = [i for i in listings if not any(i.labels) and i.passages] if args.absolute else []
    steps = args.epochs * -(-len(usable) // args.batch)
    optimizer = torch.optim.AdamW(
        [
            {"params": list(encoder.model.parameters()), "lr": args.lr, "weight_decay": 0.01},
            {"params": [head], "lr": 1e-2, "weight_decay": 0.0},
        ]
    )
    warmup = max(1, steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1.0 - s / steps)
    )
    losses: list[float] = []
    for epoch in range(args.epochs):
        encoder.model.train()
        total, count = 0.0, 0
        empties = batches(len(empty), args.empty_per_batch or 1, args.seed + 1, epoch)
        for step, batch in enumerate(batches(len(usable), args.batch, args.seed, epoch)):
            items = [usable[i] for i in batch]
            positives = [it.passages[it.labels.index(1)] for it in items]
            owned = [
                (row, p)
                for row, it in enumerate(items)
                for p in [q for q, y in zip(it.passages, it.labels, strict=True) if not y][
                    : args.negatives
                ]
            ]
            alerts = encoder([it.alert for it in items], args.alert_tokens)
            passages = encoder(positives + [p for _, p in owned], args.passage_tokens)
            similarity = alerts @ passages.T
            loss = torch.nn.functional.cross_entropy(SCALE * similarity, torch.arange(len(items)))
            if empty:
                extra = [empty[i] for i in empties[step % len(empties)]]
                loss = loss + args.absolute * absolute_loss(
                    encoder, similarity, [r for r, _ in owned], extra, head, args
                )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total, count = total + loss.item(), count + 1
        losses.append(round(total / max(count, 1), 4))
        print(f"train_bi: epoch {epoch + 1}: loss {losses[-1]}", file=sys.stderr, flush=True)
    return losses


def absolute_loss(
    encoder: Encoder,
    similarity: torch.Tensor,
    owners: Sequence[int],
    extra: Sequence[Listing],
    head: torch.Tensor,
    args: argparse.Namespace,
) -> torch.Tensor:
    """The binary loss of `--absolute`: expected passages 1; each list's own negatives
    (column len(rows) + j belongs to row owners[j]) and the first three candidates of the
    lists in `extra` (no positive) 0."""
    rows = similarity.shape[0]
    values = [similarity.diagonal()]
    labels = [torch.ones(rows)]
    if owners:
        values.append(similarity[torch.tensor(owners), rows + torch.arange(len(owners))])
        labels.append(torch.zeros(len(owners)))
    if extra:
        alerts = encoder([it.alert for it in extra], args.alert_tokens)
        heads = [it.passages[:3] for it in extra]
        passages = encoder([p for ps in heads for p in ps], args.passage_tokens)
        owner = torch.tensor([i for i, ps in enumerate(heads) for _ in ps])
        values.append((alerts[owner] * passages).sum(-1))
        labels.append(torch.zeros(len(owner)))
    logits = head[0] * (torch.cat(values) - head[1])
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.cat(labels))


def cosines(
    encoder: Encoder, listings: Sequence[Listing], args: argparse.Namespace
) -> list[list[float]]:
    encoder.model.eval()
    out = []
    with torch.no_grad():
        for item in listings:
            alert = encoder([item.alert], args.alert_tokens)
            passages = encoder(item.passages, args.passage_tokens)
            out.append([float(v) for v in (passages @ alert.T).squeeze(-1)])
    return out


def scored(
    encoder: Encoder, listings: Sequence[Listing], args: argparse.Namespace
) -> dict[str, object]:
    """The reader alone on lists it never saw: R@1, AUC and margin AUC over those with a
    positive, and `decision_aucs` over them all (a list without one is read to its first
    three candidates, all that `decision_aucs` looks at)."""
    usable = [
        item
        if any(item.labels)
        else replace(item, passages=item.passages[:3], keys=item.keys[:3], labels=item.labels[:3])
        for item in listings
        if item.passages
    ]
    values = cosines(encoder, usable, args)
    kept = [(item, v) for item, v in zip(usable, values, strict=True) if any(item.labels)]
    items, kept_values = [i for i, _ in kept], [v for _, v in kept]
    return {
        **asdict(measure(items, kept_values)),
        "margin_auc": round(margin_auc(items, kept_values), 4),
        "all_lists": decision_aucs(usable, values),
    }


def by_corpus_scores(
    encoder: Encoder, listings: Sequence[Listing], args: argparse.Namespace
) -> dict[str, dict[str, object]]:
    """`scored` for each corpus of `listings`, by name."""
    names = sorted({item.corpus for item in listings})
    return {c: scored(encoder, [i for i in listings if i.corpus == c], args) for c in names}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.train_bi", description=__doc__)
    parser.add_argument("--mined", type=Path, required=True, help="quality.train.mine's --out")
    parser.add_argument("--base", type=Path, required=True, help="MiniLM in Hugging Face form")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--readers", nargs="*", default=[ALL, *FOLDS])
    parser.add_argument("--skip", nargs="*", default=["gitlab-slo"], help="corpora not trained on")
    parser.add_argument(
        "--augmented",
        action="store_true",
        help="also train on <mined>/augmented/ (quality.train.augment), never measured on",
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--batch", type=int, default=12, help="lists per batch")
    parser.add_argument("--negatives", type=int, default=2, help="own-list negatives per list")
    parser.add_argument(
        "--absolute", type=float, default=0.0, help="weight of the binary loss (0: none)"
    )
    parser.add_argument(
        "--empty-per-batch", type=int, default=6, help="lists without a positive a batch"
    )
    parser.add_argument("--alert-tokens", type=int, default=64)
    parser.add_argument("--passage-tokens", type=int, default=160)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-base",
        action="store_true",
        help="skip scoring the base model (the same for every recipe) on the unseen lists",
    )
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    files = mined(args.mined / "train")
    by_corpus = {corpus_of(f): read(f) for f in files if corpus_of(f) not in args.skip}
    extra_files = mined(args.mined / "augmented") if args.augmented else []
    extra = {corpus_of(f): read(f) for f in extra_files if corpus_of(f) in by_corpus}
    held_out = [item for f in mined(args.mined / "held-out") for item in read(f)]
    left = folds({c: len(v) for c, v in by_corpus.items()})
    # The base model scores each corpus the same for every reader: once is enough.
    base_scores: dict[str, dict[str, object]] = {}
    for name in args.readers:
        excluded = left.get(name, [])
        seen = [
            item for c, v in (*by_corpus.items(), *extra.items()) if c not in excluded for item in v
        ]
        unseen = [*(i for c in excluded for i in by_corpus[c]), *held_out]
        encoder = Encoder(args.base)
        missing = [i for i in unseen if i.corpus not in base_scores and not args.no_base]
        base_scores.update(by_corpus_scores(encoder, missing, args))
        report: dict[str, object] = {
            "reader": name,
            "excluded": excluded,
            "skipped": args.skip,
            "mined": manifest_hash(files),
            "augmented": manifest_hash(extra_files) if extra_files else None,
            "recipe": {k: v for k, v in vars(args).items() if k not in {"mined", "base", "out"}},
            "base_on_unseen": {
                c: base_scores[c] for c in sorted({i.corpus for i in unseen}) if c in base_scores
            },
        }
        started = time.time()
        head = torch.nn.Parameter(torch.tensor([10.0, 0.6]))
        report["losses"] = train(encoder, seen, args, head)
        if args.absolute:
            report["absolute_head"] = [round(float(v), 4) for v in head.detach()]
        report["train_seconds"] = round(time.time() - started)
        report["trained_on_unseen"] = by_corpus_scores(encoder, unseen, args)
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        encoder.model.save_pretrained(str(folder))
        (folder / "bi_reader.json").write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
