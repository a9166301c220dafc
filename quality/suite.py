"""`make eval`: retrieval quality on four corpora, side by side, and the CI gate.

1. golden/ (the test split): the hand-written corpus of this repository;
2. the real dev slices in ../shared/data/prom-runbooks and ../shared/data/openshift-runbooks,
   when they are there: public runbooks with alerts built from the real rules that page
   on them (kube-prometheus and etcd; eight OpenShift operators);
3. a synthetic corpus from scripts/corpus_gen at `--synthetic N` runbooks (1,000 by
   default), with cases generated the same way (exact, renamed, reworded, PagerDuty
   titles, near misses, noise), its test split;
4. golden's page of alert sections alone (`golden-page`): the team whose runbooks are one
   long page. Its section cases (every split) and golden's off-topic alerts.

5. with `--feedback FILE`: the cases on-call's votes made (`python -m enricher.feedback
   export`, `make feedback-export`) on the corpus they were voted on (`--feedback-corpus`,
   golden/runbooks by default), then once more with those votes replayed (quality.replay):
   the search alone, and the search as the webhook now serves it. Reported, not gated.

Every labelled case also runs with its runbook left out of the index, which turns it into
a near miss (quality.eval --leave-out). Each corpus gets its per-kind table, and a last
table puts the kinds side by side. The gate holds golden and the real dev slice to their
recorded baselines (`--gate DIR`: `golden.json`, `golden-page.json`, `prom-runbooks.json`,
`openshift-runbooks.json`); `--record DIR` writes them. A last table scores the pages as
on-call reads them (quality.pages: first runbook on the page, calibration error), and a
reliability diagram per corpus goes to `--diagrams DIR`. The last stdout line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from enricher import logs
from enricher.errors import ConfigError
from enricher.settings import Settings, load_settings
from quality import pages
from quality.cases import Case, load_cases
from quality.diagram import reliability_png
from quality.eval import Evaluation, evaluate, report_text
from quality.evalindex import EvalIndex
from quality.metrics import Metrics, baseline, check_gate, compute_metrics, in_split
from quality.replay import Replay, book_from_export, replay
from quality.replay import report_text as replay_text
from quality.replay import summary as replay_summary
from quality.tables import LEFT_OUT, cases_only, kind_rows, left_out_only
from scripts.corpus_gen.cases import cases_for, save
from scripts.corpus_gen.generate import runbooks, write_corpus

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
#: The released real dev slices, by name: gated when present.
REAL = ("prom-runbooks", "openshift-runbooks")
SYNTHETIC_SEED = 7


@dataclass(frozen=True)
class Corpus:
    name: str
    root: Path
    cases: Path
    split: str
    #: Name of the baseline file the gate holds this corpus to (None: reported only).
    gated: str | None


def corpora(
    synthetic_root: Path | None,
    page_root: Path | None = None,
    feedback: tuple[Path, Path] | None = None,
) -> list[Corpus]:
    found = [
        Corpus(
            "golden",
            REPO / "golden" / "runbooks",
            REPO / "golden" / "cases.jsonl",
            "test",
            "golden.json",
        )
    ]
    if page_root is not None:
        found.append(
            Corpus(
                "golden-page", page_root / "runbooks", page_root / "cases.jsonl", "all",
                "golden-page.json",
            )
        )
    for name in REAL:
        if (SHARED / name / "cases.jsonl").is_file():
            root = SHARED / name
            found.append(Corpus(name, root / "corpus", root / "cases.jsonl", "dev", f"{name}.json"))
    if synthetic_root is not None:
        found.append(
            Corpus(
                "synthetic",
                synthetic_root / "runbooks",
                synthetic_root / "cases.jsonl",
                "test",
                None,
            )
        )
    if feedback is not None:
        cases_file, root = feedback
        found.append(Corpus("feedback", root, cases_file, "all", None))
    return found


def write_page_alone(root: Path, golden: Path = REPO / "golden") -> None:
    """golden's pages of alert sections as a corpus of their own, with the cases of their
    sections (the missing ones included) and golden's off-topic alerts. With one page
    indexed every margin is between sections of that page, and the corpus knows few
    words: what an off-topic alert must not be matched on."""
    source = golden / "cases.jsonl"
    cases, _ = load_cases(source)
    kept = [c for c in cases if c.kind.startswith("section") or c.kind == "off_topic"]
    for page in sorted({c.expected for c in kept if c.expected and c.expected_section}):
        target = root / "runbooks" / page
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((golden / "runbooks" / page).read_bytes())
    lines = source.read_text(encoding="utf-8").splitlines()
    (root / "cases.jsonl").write_text(
        "".join(lines[c.line - 1] + "\n" for c in kept), encoding="utf-8"
    )


def write_synthetic(root: Path, count: int) -> None:
    books = runbooks(count, SYNTHETIC_SEED)
    write_corpus(root / "runbooks", count, SYNTHETIC_SEED)
    save(root / "cases.jsonl", cases_for(books, SYNTHETIC_SEED))


def side_by_side(results: Sequence[tuple[Corpus, Evaluation]]) -> str:
    """One row per kind, one column pair per corpus: cases and the kind's own measure
    (recall@1 where a runbook is expected, no-match accuracy where none is)."""
    columns: list[dict[str, Metrics]] = []
    for corpus, evaluation in results:
        main = in_split(evaluation.main.outcomes, corpus.split)
        columns.append(dict(kind_rows(main)))
    kinds = sorted({k for col in columns for k in col} - {"overall", LEFT_OUT})
    kinds += [LEFT_OUT, "overall"]
    width = max(len(k) for k in kinds)
    head = f"{'kind':<{width}}" + "".join(
        f" | {c.name[:13]:>13} {'n':>4} {'R@1/noM':>7} {'falseM':>6}" for c, _ in results
    )
    lines = [head]
    for kind in kinds:
        row = f"{kind:<{width}}"
        for col in columns:
            m = col.get(kind)
            if m is None:
                row += f" | {'':>13} {'':>4} {'':>7} {'':>6}"
                continue
            value = m.recall_at_1 if m.expecting else m.no_match_accuracy
            row += f" | {'':>13} {m.cases:>4} {_fmt(value):>7} {_fmt(m.false_match_share):>6}"
        lines.append(row)
    return "\n".join(lines)


def decision_table(results: Sequence[tuple[Corpus, Evaluation]]) -> str:
    """Per corpus and kind, the page as on-call reads it (quality.pages)."""
    lines = [f"{'corpus':<19} {'kind':<21} {'n':>4} {pages.HEADER}"]
    for corpus, evaluation in results:
        shown = corpus_pages(corpus, evaluation)
        kinds = sorted({p.outcome.kind for p in shown if p.outcome.left_out is None})
        for kind in kinds:
            subset = [p for p in shown if p.outcome.kind == kind and p.outcome.left_out is None]
            lines.append(
                f"{corpus.name[:19]:<19} {kind[:21]:<21} {len(subset):>4} "
                f"{pages.score(subset).row()}"
            )
        lines.append(
            f"{corpus.name[:19]:<19} {'all':<21} {len(shown):>4} {pages.score(shown).row()}"
        )
    return "\n".join(lines)


def corpus_pages(corpus: Corpus, evaluation: Evaluation) -> list[pages.Page]:
    return [pages.from_outcome(o) for o in in_split(evaluation.main.outcomes, corpus.split)]


def write_diagrams(results: Sequence[tuple[Corpus, Evaluation]], out: Path) -> None:
    for corpus, evaluation in results:
        shown = corpus_pages(corpus, evaluation)
        reliability_png(
            out / f"reliability-{corpus.name}.png",
            f"{corpus.name} ({corpus.split})",
            pages.reliability(shown),
            pages.calibration_error(shown),
        )


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def gate(
    corpus: Corpus, evaluation: Evaluation, gate_dir: Path | None, record_dir: Path | None
) -> list[str]:
    if corpus.gated is None:
        return []
    current = compute_metrics(cases_only(in_split(evaluation.main.outcomes, corpus.split)))
    problems: list[str] = []
    if gate_dir is not None:
        path = gate_dir / corpus.gated
        try:
            recorded = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot read the baseline {path}: {exc} (write it with --record)"
            ) from exc
        problems = [f"{corpus.name}: {p}" for p in check_gate(recorded, current, corpus.split)]
    if record_dir is not None and not problems:
        record_dir.mkdir(parents=True, exist_ok=True)
        (record_dir / corpus.gated).write_text(
            json.dumps(baseline(current, corpus.split, {"corpus": corpus.name}), indent=2) + "\n"
        )
    return problems


def replay_votes(corpus: Corpus, cases: Sequence[Case], settings: Settings) -> Replay:
    """The feedback cases again, each with the votes of its alert name."""
    with EvalIndex(corpus.root, settings) as index:
        return replay(index, cases, book_from_export(corpus.cases, cases))


def summary(results: Sequence[tuple[Corpus, Evaluation]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for corpus, evaluation in results:
        main = in_split(evaluation.main.outcomes, corpus.split)
        out[corpus.name] = {
            "split": corpus.split,
            "overall": compute_metrics(cases_only(main)).to_json(),
            "by_kind": {k: m.to_json() for k, m in kind_rows(main) if k != "overall"},
            "left_out": compute_metrics(left_out_only(main)).to_json(),
            "pages": pages.score(corpus_pages(corpus, evaluation)).to_json(),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.suite", description=__doc__)
    parser.add_argument(
        "--synthetic",
        type=int,
        default=1000,
        metavar="N",
        help="runbooks of the synthetic corpus (0: leave it out)",
    )
    parser.add_argument("--gate", type=Path, metavar="DIR", help="fail if worse than these")
    parser.add_argument("--record", type=Path, metavar="DIR", help="write the baselines here")
    parser.add_argument(
        "--feedback",
        type=Path,
        metavar="FILE",
        help="also score the cases exported from on-call's votes, before and after replaying them",
    )
    parser.add_argument(
        "--feedback-corpus",
        type=Path,
        metavar="DIR",
        default=REPO / "golden" / "runbooks",
        help="the runbooks the votes were cast on (default: %(default)s)",
    )
    parser.add_argument(
        "--diagrams",
        type=Path,
        metavar="DIR",
        default=REPO / "eval-out",
        help="where the reliability diagrams go, one PNG per corpus (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    feedback = (args.feedback, args.feedback_corpus) if args.feedback else None
    logs.configure(json=False, level="WARNING")
    settings = load_settings()
    problems: list[str] = []
    results: list[tuple[Corpus, Evaluation]] = []
    replayed: Replay | None = None
    with tempfile.TemporaryDirectory(prefix="enricher-synthetic-") as tmp:
        synthetic = Path(tmp) / "synthetic" if args.synthetic > 0 else None
        page = Path(tmp) / "page"
        try:
            if synthetic is not None:
                write_synthetic(synthetic, args.synthetic)
            write_page_alone(page)
            for corpus in corpora(synthetic, page, feedback):
                cases: list[Case]
                cases, errors = load_cases(corpus.cases)
                for error in errors:
                    print(f"{corpus.cases}:{error.line}: {error.reason}", file=sys.stderr)
                chosen = [c for c in cases if corpus.split in ("all", c.split)]
                evaluation = evaluate(
                    corpus.root, chosen, errors, settings=settings, leave_out=True
                )
                print(f"=== {corpus.name} ({corpus.split} split)")
                print(report_text(evaluation, corpus.split))
                print()
                results.append((corpus, evaluation))
                problems += gate(corpus, evaluation, args.gate, args.record)
                if corpus.name == "feedback":
                    replayed = replay_votes(corpus, chosen, settings)
                    print("=== feedback, with the votes replayed (quality.replay)")
                    print(replay_text(replayed) + "\n")
        except (ConfigError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print("=== side by side (R@1 for kinds that expect a runbook, no-match accuracy for the")
    print("    others; falseM: wrong runbooks over matched answers)")
    print(side_by_side(results))
    print()
    print("=== the pages as on-call reads them (quality.pages)")
    print(pages.LEGEND)
    print(decision_table(results))
    write_diagrams(results, args.diagrams)
    print(f"reliability diagrams in {args.diagrams}/")
    for problem in problems:
        print(f"gate failed: {problem}", file=sys.stderr)
    result = summary(results)
    if replayed is not None:
        result["feedback_replay"] = replay_summary(replayed)
    if args.gate is not None:
        result["gate"] = "failed" if problems else "passed"
    print(json.dumps(result))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
