"""A synthetic evaluation set: `python -m scripts.corpus_gen --count N --out DIR [--seed S]`.

Writes the first N runbooks of the corpus to DIR/runbooks/ and their labelled alert cases
(scripts/corpus_gen/cases.py) to DIR/cases.jsonl, then prints the cases per kind and split.
With `--pages`, each service's runbooks are one page with a section per alert
(scripts/corpus_gen/pages.py), and the cases expect sections.
Evaluate with `python -m quality.eval --corpus DIR/runbooks --cases DIR/cases.jsonl`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scripts.corpus_gen.cases import CASE_KINDS, SPLITS, cases_for, save
from scripts.corpus_gen.generate import runbooks
from scripts.corpus_gen.pages import fold, sectioned


def tally(items: Sequence[dict[str, Any]]) -> str:
    """Cases per kind and split, as a small table."""
    counts = Counter((item["kind"], item["split"]) for item in items)
    rows = [f"{'kind':22}" + "".join(f"{s:>6}" for s in (*SPLITS, "all"))]
    for kind in (*CASE_KINDS, "all"):
        per = [sum(n for (k, s), n in counts.items() if kind in (k, "all") and s == split)
               for split in SPLITS]
        rows.append(f"{kind:22}" + "".join(f"{n:6}" for n in (*per, sum(per))))
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.corpus_gen", description=__doc__)
    parser.add_argument("--count", type=int, default=1000, help="runbooks in the corpus")
    parser.add_argument("--seed", type=int, default=7, help="corpus seed")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument("--pages", action="store_true",
                        help="one page per service with a section per alert")
    args = parser.parse_args(argv)
    root = args.out / "runbooks"
    books = runbooks(args.count, args.seed)
    folded = fold(books) if args.pages else None
    files = folded.files if folded else {b.path: b.text for b in books}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    # A leftover runbook from a larger corpus would be the answer to a near-miss case.
    extra = sorted({p.relative_to(root).as_posix() for p in root.rglob("*.md")} - set(files))
    if extra:
        print(f"{root} holds {len(extra)} runbooks of another corpus (e.g. {extra[0]}); "
              "remove it and run again", file=sys.stderr)
        return 1
    items = cases_for(books, args.seed)
    if folded:
        items = sectioned(items, folded)
    save(args.out / "cases.jsonl", items)
    print(f"{len(books)} runbooks in {len(files)} file(s) in {root}, {len(items)} cases in "
          f"{args.out / 'cases.jsonl'}")
    print(tally(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
