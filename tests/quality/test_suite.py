"""`make eval`'s corpora: golden's page of alert sections as a corpus of its own."""

from __future__ import annotations

import json
from pathlib import Path

from quality.suite import REPO, write_page_alone


class TestPageAlone:
    def test_the_page_alone_with_its_section_cases_and_the_off_topic_ones(
        self, tmp_path: Path
    ) -> None:
        write_page_alone(tmp_path)
        files = sorted(p.relative_to(tmp_path / "runbooks").as_posix()
                       for p in (tmp_path / "runbooks").rglob("*.md"))
        assert files == ["objectstore/operations.md"]
        assert (tmp_path / "runbooks" / files[0]).read_bytes() == (
            REPO / "golden" / "runbooks" / files[0]
        ).read_bytes()
        cases = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
        kinds = {c["kind"] for c in cases}
        assert kinds == {"section_exact", "section_renamed", "section_missing", "off_topic"}
        assert {c["expected_doc"] for c in cases if c["expected_doc"]} == set(files)
        assert sum(c["kind"] == "off_topic" for c in cases) == 24
