"""Storage format to markdown: recorded pages against their golden markdown, and each
macro the chunker relies on."""

from __future__ import annotations

import pytest

from ingest.chunking import chunk_markdown
from ingest.confluence.storage import convert_storage
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "confluence"
GOLDEN = REPO / "golden" / "confluence"
RECORDED = sorted(path.stem for path in FIXTURES.glob("*.xml"))


def recorded(name: str) -> str:
    return (FIXTURES / f"{name}.xml").read_text()


class TestRecordedPages:
    def test_every_recorded_page_has_its_golden_markdown(self) -> None:
        """A fixture without golden markdown would be checked by nothing."""
        assert sorted(path.stem for path in GOLDEN.glob("*.md")) == RECORDED
        assert len(RECORDED) >= 3

    @pytest.mark.parametrize("name", RECORDED)
    def test_converts_to_its_golden_markdown(self, name: str) -> None:
        """The markdown of each recorded page is exactly what golden/confluence holds."""
        assert convert_storage(recorded(name)).markdown == (GOLDEN / f"{name}.md").read_text()

    def test_page_properties_are_read_as_key_values(self) -> None:
        """The Page Properties table becomes front matter candidates, dates included."""
        properties = convert_storage(recorded("postgres-replication-lag")).properties
        assert properties == {
            "Alert names": "PostgresReplicationLag, PGReplicaBehind",
            "Services": "postgres",
            "Owner": "team-db",
            "Last reviewed": "2026-09-14",
        }

    def test_the_chunker_sees_headings_and_never_splits_the_code(self) -> None:
        """Sections come from the page's h2/h3, and a code macro stays whole in one chunk."""
        markdown = convert_storage(recorded("postgres-replication-lag")).markdown
        chunks = chunk_markdown(markdown, max_chars=400, min_chars=50)
        sections = [chunk.section for chunk in chunks]
        assert "Diagnosis" in sections
        assert "Diagnosis › Thresholds" in sections
        sql = [c for c in chunks if "pg_last_xact_replay_timestamp" in c.text]
        assert len(sql) == 1 and "WHERE replay_lsn < sent_lsn;\n```" in sql[0].text


class TestMacros:
    @pytest.mark.parametrize(
        ("storage", "expected"),
        [
            (
                '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">python'
                "</ac:parameter><ac:plain-text-body><![CDATA[if a < b and c > d:\n    pass]]>"
                "</ac:plain-text-body></ac:structured-macro>",
                "```python\nif a < b and c > d:\n    pass\n```\n",
            ),
            (
                '<ac:structured-macro ac:name="noformat"><ac:plain-text-body>'
                "<![CDATA[  two  spaces]]></ac:plain-text-body></ac:structured-macro>",
                "```\n  two  spaces\n```\n",
            ),
            (
                '<ac:structured-macro ac:name="info"><ac:rich-text-body><p>Read me.</p>'
                "</ac:rich-text-body></ac:structured-macro>",
                "> **Info**\n>\n> Read me.\n",
            ),
            (
                '<ac:structured-macro ac:name="expand"><ac:rich-text-body><p>Inside.</p>'
                "</ac:rich-text-body></ac:structured-macro>",
                "**Details**\n\nInside.\n",
            ),
            ("<h4>Four</h4><h5>Five</h5><h6>Six</h6>", "#### Four\n\n##### Five\n\n###### Six\n"),
            ('<p><a href="https://x.example/a?b=1">a link</a></p>', "[a link](https://x.example/a?b=1)\n"),
            ('<ac:structured-macro ac:name="jira"><ac:parameter ac:name="key">OPS-1'
             "</ac:parameter></ac:structured-macro><p>after</p>", "after\n"),
            ('<p>Status: <ac:structured-macro ac:name="status"><ac:parameter ac:name="title">'
             "DEPRECATED</ac:parameter></ac:structured-macro> now</p>",
             "Status: **DEPRECATED** now\n"),
            ('<ac:adf-extension><ac:adf-node type="panel"><ac:adf-attribute key="panel-type">'
             "warning</ac:adf-attribute><ac:adf-content><p>Drain first.</p></ac:adf-content>"
             '</ac:adf-node><ac:adf-fallback><div class="panel"><p>Drain first.</p></div>'
             "</ac:adf-fallback></ac:adf-extension>",
             "> **Warning**\n>\n> Drain first.\n"),
            ('<ac:adf-extension><ac:adf-node type="decision-list"></ac:adf-node>'
             "<ac:adf-fallback><p>We chose B.</p></ac:adf-fallback></ac:adf-extension>",
             "We chose B.\n"),
        ],
        ids=["code", "noformat", "info", "expand-untitled", "h4-h6", "link", "unknown-macro",
             "status", "cloud-editor-panel", "cloud-editor-other"],
    )
    def test_macro(self, storage: str, expected: str) -> None:
        """Each macro becomes the markdown the chunker and Slack understand."""
        assert convert_storage(storage).markdown == expected

    def test_a_five_megabyte_page_converts_whole(self) -> None:
        """A 5 MB page (a long table and many code macros) converts without losing the end."""
        row = "<tr><td>host-{i}</td><td>{i} GB</td></tr>"
        code = ('<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash'
                "</ac:parameter><ac:plain-text-body><![CDATA[echo step {i}]]>"
                "</ac:plain-text-body></ac:structured-macro>")
        parts = ["<h2>Hosts</h2><table><tbody><tr><th>Host</th><th>Disk</th></tr>"]
        parts += [row.format(i=i) for i in range(65_000)]
        parts.append("</tbody></table><h2>Steps</h2>")
        parts += [code.format(i=i) for i in range(12_000)]
        storage = "".join(parts)
        assert len(storage.encode()) > 5_000_000
        markdown = convert_storage(storage).markdown
        assert "| host-64999 | 64999 GB |" in markdown
        assert markdown.rstrip().endswith("```bash\necho step 11999\n```")
