"""Pack what a GPU machine needs to train the readers: `python -m quality.train.train_device
--out .cache/device` (the train venv).

The device tool carries at most 64 MiB of ignored files, and the machine has no network and
not our base weights. The pack holds the MiniLM weights as fp16 safetensors with their
config and tokenizer (about 45 MB) and the mined lists gzipped; the recipe itself travels
with the working tree. On the machine, `DEVICE_COMMAND` (the output folder appended)
trains every reader into it (quality.train.train).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from quality.train.train_data import mined

BASE_FILES = ("config.json", "tokenizer.json")
DEVICE_COMMAND = (
    "python3 -m quality.train.train --mined .cache/device/mined --base .cache/device/base "
    "--shapes L2x64 --device cuda --budget-s 240 --out"
)


def pack(base: Path, mined_root: Path, out: Path) -> int:
    shutil.rmtree(out, ignore_errors=True)
    (out / "base").mkdir(parents=True)
    for name in BASE_FILES:
        shutil.copy(base / name, out / "base" / name)
    state = load_file(str(base / "model.safetensors"))
    save_file(
        {k: v.to(torch.float16).contiguous() for k, v in state.items()},
        str(out / "base" / "model.safetensors"),
    )
    for part in ("train", "held-out"):
        (out / "mined" / part).mkdir(parents=True)
        for f in mined(mined_root / part):
            target = out / "mined" / part / (f.name.removesuffix(".gz") + ".gz")
            target.write_bytes(gzip.compress(f.read_bytes(), mtime=0))
    return sum(f.stat().st_size for f in out.rglob("*") if f.is_file())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.train_device")
    parser.add_argument("--base", type=Path, required=True, help="the MiniLM weights folder")
    parser.add_argument("--mined", type=Path, default=Path(".cache/train/mined"))
    parser.add_argument("--out", type=Path, default=Path(".cache/device"))
    args = parser.parse_args(argv)
    size = pack(args.base, args.mined, args.out)
    print(
        f"train_device: {size / 2**20:.1f} MiB in {args.out}; on the machine: "
        f"{DEVICE_COMMAND} $OUT",
        file=sys.stderr,
    )
    return 0 if size < 64 * 2**20 else 1


if __name__ == "__main__":
    sys.exit(main())
