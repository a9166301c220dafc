"""Build the training collection: ``python -m quality.train.collect``.

Reads every pinned source (quality.train.sources) from its bare mirror at its pinned
commit, and writes per corpus, under ``.cache/train/<corpus>/``:

- ``corpus/``: the runbooks (``<service>/<AlertName>.md``, or the project's page with a
  section per alert), minus the left-out ones;
- ``cases.jsonl``: cases in the released slices' format (quality.train.collect_cases);
- ``pairs.jsonl``: one line per (rule, runbook) pair in the corpus, with the rule's
  expression, labels and annotations, the runbook's path and section anchor, and the
  sibling runbooks of the same service (hard negatives).

Pairs whose alert is named like anything in the released corpora are dropped, with their
runbook text. One runbook (or section) in ten is left out of the corpus: its alerts become
near misses. The manifest (quality/train/manifest.json) records each source's commit,
license, paths and counts, and a hash of each built corpus; a rebuild gives the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from enricher.audit.rules import Rule
from enricher.search.names import name_key
from ingest.units import alert_name
from quality.train import extract_files, extract_pages
from quality.train.collect_cases import Positive, corpus_cases
from quality.train.filters import released_names
from quality.train.gitread import Tree
from quality.train.model import Extracted, Pair
from quality.train.pages import drop_section, section_anchors
from quality.train.rename import project_prefixes
from quality.train.sources import SOURCES, CorpusSource, check_allowed, spdx
from scripts.corpus_gen.payloads import digest

__all__ = ["Built", "build", "main"]

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("manifest.json")
LEAVE_OUT_ONE_IN = 10
#: A runbook file with fewer words is a stub (a generator's empty page): its alert has no
#: runbook, and becomes a near miss.
MIN_WORDS = 20
MAX_SIBLINGS = 30

Extractor = Callable[[Mapping[str, Tree], Sequence[str]], Extracted]
EXTRACTORS: dict[str, Extractor] = {
    "tempo": extract_pages.tempo,
    "pingcap": extract_pages.pingcap,
    "sourcegraph": extract_pages.sourcegraph,
    "harvest": extract_pages.harvest,
    "qubership": extract_pages.qubership,
    "srerun": extract_files.srerun,
    "runbook_folder": extract_files.runbook_folder,
    "gitlab": extract_files.gitlab,
}

Built = tuple[dict[str, str], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]


def _pair_key(pair: Pair) -> str:
    return name_key(alert_name(pair.heading)) if pair.heading else name_key(pair.rule.name)


def _without_released(
    extracted: Extracted, released: frozenset[str]
) -> tuple[dict[str, str], list[Pair], list[Rule], int]:
    """The corpus with every pair, runbook file and section named like a released alert
    taken out, and so is a second runbook of an alert name already paired (two runbooks
    of one name make its cases ambiguous) and a stub; and how many pairs the released names
    dropped."""
    files = dict(extracted.files)
    kept: list[Pair] = []
    names: set[str] = set()
    dropped = 0
    twins: set[str] = set()
    for pair in extracted.pairs:
        if name_key(pair.rule.name) in names:
            twins.add(pair.doc)
            continue
        names.add(name_key(pair.rule.name))
        if name_key(pair.rule.name) in released or _pair_key(pair) in released:
            dropped += 1
            if pair.heading is not None:
                files[pair.doc] = drop_section(files[pair.doc], pair.heading)
            continue
        kept.append(pair)
    paired = {p.doc for p in kept}
    for path in list(files):
        if name_key(PurePosixPath(path).stem) in released or (path in twins and path not in paired):
            del files[path]
    for path, text in list(files.items()):
        if len(text.split()) < MIN_WORDS:
            del files[path]
    orphans = [r for r in extracted.orphans if name_key(r.name) not in released]
    orphans += [p.rule for p in kept if p.doc not in files]
    kept = [p for p in kept if p.doc in files]
    return files, kept, orphans, dropped


def _left_out(name: str, pairs: Sequence[Pair]) -> set[tuple[str, str | None]]:
    """The runbooks (doc, heading) left out of the corpus: one in ten, by digest."""
    units = sorted({(p.doc, p.heading) for p in pairs}, key=lambda u: (u[0], u[1] or ""))
    return {
        u
        for u in units
        if int(digest("leave-out", name, u[0], u[1] or ""), 16) % LEAVE_OUT_ONE_IN == 0
    }


def build(source: CorpusSource, trees: Mapping[str, Tree], released: frozenset[str]) -> Built:
    """One corpus: (files, cases, pairs lines, manifest entry without its hash)."""
    extracted = EXTRACTORS[source.extractor](trees, source.select)
    files, pairs, orphans, dropped = _without_released(extracted, released)
    held = _left_out(source.name, pairs)
    for doc, heading in sorted(held, key=lambda u: (u[0], u[1] or "")):
        if heading is None:
            files.pop(doc, None)
        else:
            files[doc] = drop_section(files[doc], heading)
    anchors = {path: section_anchors(path, text) for path, text in sorted(files.items())}
    positives: list[Positive] = []
    misses: list[tuple[Rule, str]] = []
    for pair in pairs:
        service = pair.doc.split("/", 1)[0]
        if (pair.doc, pair.heading) in held or pair.doc not in files:
            misses.append((pair.rule, service))
            continue
        section = anchors[pair.doc].get(_pair_key(pair)) if pair.heading else None
        if pair.heading and section is None:
            continue
        positives.append(Positive(pair.rule, pair.doc, section, service))
    room = max(5, len(positives) // 3)
    ranked = sorted(orphans, key=lambda r: digest("orphan", source.name, r.name))[:room]
    misses += [(r, source.name) for r in ranked]
    prefixes = project_prefixes([p.rule.name for p in pairs])
    cases = corpus_cases(source.name, positives, misses, prefixes)
    unique = list({c["id"]: c for c in cases}.values())
    lines = _pair_lines(positives, anchors)
    entry = _entry(source, trees, extracted, len(positives), len(held), dropped, unique)
    return files, unique, lines, entry


def _pair_lines(
    positives: Sequence[Positive], anchors: Mapping[str, Mapping[str, str]]
) -> list[dict[str, Any]]:
    """pairs.jsonl: each pair with its siblings, the runbooks of its own service first,
    then others of the corpus in an order drawn per pair (hard negatives for training)."""
    units = sorted(
        {f"{p}#{a}" for p, found in anchors.items() for a in found.values()}
        | {p for p, found in anchors.items() if not found}
    )
    out = []
    for p in positives:
        own = f"{p.doc}#{p.section}" if p.section else p.doc
        near = [u for u in units if u != own and u.split("/", 1)[0] == p.service]
        far = sorted(
            (u for u in units if u != own and u.split("/", 1)[0] != p.service),
            key=lambda u: digest("sibling", own, u),
        )
        siblings = near + far
        out.append(
            {
                "alert": p.rule.name,
                "expr": p.rule.expr,
                "labels": dict(p.rule.labels),
                "annotations": {
                    k: v
                    for k, v in p.rule.annotations.items()
                    if k in ("summary", "description", "message", "title")
                },
                "doc": p.doc,
                "section": p.section,
                "service": p.service,
                "siblings": siblings[:MAX_SIBLINGS],
            }
        )
    return out


def _entry(
    source: CorpusSource,
    trees: Mapping[str, Tree],
    extracted: Extracted,
    pairs: int,
    held: int,
    dropped: int,
    cases: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    repos = []
    for pin in source.pins:
        text = trees[pin.repo].read(pin.license_file) if pin.license_file else ""
        repos.append(
            {
                "repo": pin.repo,
                "commit": pin.commit,
                "license": spdx(text),
                "license_file": pin.license_file or None,
                "paths": list(extracted.paths.get(pin.repo, ())),
            }
        )
    kinds = Counter(f"{c['kind']}/{c['channel']}" for c in cases)
    return {
        "name": source.name,
        "domain": source.domain,
        "sources": repos,
        "pairs": pairs,
        "left_out": held,
        "dropped_as_released": dropped,
        "cases": dict(sorted(kinds.items())),
    }


def _write(
    out: Path,
    files: Mapping[str, str],
    cases: Sequence[dict[str, Any]],
    lines: Sequence[dict[str, Any]],
) -> str:
    """Write one corpus folder afresh; the sha256 over its files (path and bytes)."""
    if out.exists():
        shutil.rmtree(out)
    written: dict[str, bytes] = {}
    for path, text in sorted(files.items()):
        written[f"corpus/{path}"] = text.encode()
    written["cases.jsonl"] = "".join(json.dumps(c, sort_keys=True) + "\n" for c in cases).encode()
    written["pairs.jsonl"] = "".join(json.dumps(p, sort_keys=True) + "\n" for p in lines).encode()
    whole = hashlib.sha256()
    for rel, data in sorted(written.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        whole.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return whole.hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=Path("/work/.mirror"),
        help="where `fetch` put the bare mirrors (<owner>+<name>/repo)",
    )
    parser.add_argument(
        "--released",
        type=Path,
        default=ROOT.parent / "shared" / "data",
        help="the released slices, whose alert names are kept out",
    )
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "train")
    parser.add_argument("--only", nargs="*", help="build these corpora only")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    args = parser.parse_args(argv)
    released = released_names(args.released)
    chosen = [s for s in SOURCES if not args.only or s.name in args.only]
    entries = []
    for source in chosen:
        for pin in source.pins:
            check_allowed(pin.repo)
        trees = {p.repo: Tree.open(args.mirrors, p.repo, p.commit) for p in source.pins}
        files, cases, lines, entry = build(source, trees, released)
        entry["sha256"] = _write(args.out / source.name, files, cases, lines)
        entry["files"] = len(files)
        entries.append(entry)
        print(
            f"{source.name}: {entry['pairs']} pairs, {len(cases)} cases, {len(files)} files",
            file=sys.stderr,
        )
    if not args.only:
        manifest = {
            "corpora": entries,
            "pairs": sum(e["pairs"] for e in entries),
            "sha256": hashlib.sha256("".join(e["sha256"] for e in entries).encode()).hexdigest(),
        }
        args.manifest.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        # quality.transfer takes the collection's corpora only once every one is built.
        (args.out / "READY").write_text(manifest["sha256"] + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
