"""The synthetic corpus as multi-alert pages (scripts/corpus_gen/pages.py): each service's
runbooks fold into one page that ingest cuts back into one unit per alert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.chunking import chunk_units
from quality.cases import Case, parse_case
from scripts.corpus_gen import Runbook, runbooks
from scripts.corpus_gen.__main__ import main
from scripts.corpus_gen.cases import cases_for
from scripts.corpus_gen.pages import Folded, fold, sectioned

COUNT = 40


@pytest.fixture(scope="module")
def books() -> list[Runbook]:
    return runbooks(COUNT)


@pytest.fixture(scope="module")
def folded(books: list[Runbook]) -> Folded:
    return fold(books)


def test_each_page_is_cut_back_into_its_runbooks(books: list[Runbook], folded: Folded) -> None:
    pages = {page for page, _ in folded.sections.values()}
    assert pages and len(folded.files) < len(books)
    for page in pages:
        body = folded.files[page].split("\n---\n", 1)[1]
        units = chunk_units(body, max_chars=1500, min_chars=100)
        own = [b for b in books if folded.sections.get(b.path, ("", ""))[0] == page]
        assert [u.heading for u in units if u.anchor] == [b.alert_name for b in own]
        assert [u.anchor for u in units if u.anchor] == [folded.sections[b.path][1] for b in own]
        for unit, book in zip([u for u in units if u.anchor], own, strict=True):
            text = "\n".join(c.text for c in unit.chunks)
            # The runbook's own fix is in its section, and no other runbook's name is.
            assert any(c.section.startswith("Mitigation") for c in unit.chunks)
            assert all(o.alert_name not in text for o in own if o is not book)


def test_services_with_one_runbook_keep_their_file(books: list[Runbook], folded: Folded) -> None:
    single = [b for b in books if b.path not in folded.sections]
    assert all(folded.files[b.path] == b.text for b in single)


def test_cases_expect_the_section(books: list[Runbook], folded: Folded) -> None:
    items = sectioned(cases_for(books, 7), folded)
    moved = [i for i in items if "expected_section" in i]
    assert moved
    for line, item in enumerate(items, start=1):
        case = parse_case(json.dumps(item), line)
        assert isinstance(case, Case)
        if case.expected_section:
            assert (case.expected, case.expected_section) in set(folded.sections.values())
        elif case.expected:
            assert case.expected in folded.files


def test_the_cli_writes_pages(tmp_path: Path, folded: Folded) -> None:
    assert main(["--count", str(COUNT), "--out", str(tmp_path), "--pages"]) == 0
    written = {p.relative_to(tmp_path / "runbooks").as_posix() for p in tmp_path.rglob("*.md")}
    assert written == set(folded.files)
    lines = (tmp_path / "cases.jsonl").read_text().splitlines()
    assert any("expected_section" in json.loads(line) for line in lines)
