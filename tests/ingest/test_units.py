"""A page with a section per alert becomes one runbook unit per alert (ingest.units)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingest.anchors import Style
from ingest.chunking import chunk_units
from ingest.document import Document, Unit
from ingest.units import alert_headings, unit_documents

PAGE = """# Platform operations

Who owns what, and where the dashboards are.

## KubePodCrashLooping

A pod restarts over and over.

### How to investigate

Read the previous container's logs.

### How to fix

```
kubectl rollout undo deploy/x
```

## KubePodNotReady

A pod is not ready.

### How to investigate

Describe the pod.

## Escalation

Page the platform lead.
"""


def units_of(body: str, alert_names: tuple[str, ...] = (), style: Style = "github") -> list[Unit]:
    return chunk_units(body, max_chars=1500, min_chars=0, style=style, alert_names=alert_names)


def page(body: str, alert_names: tuple[str, ...] = ()) -> Document:
    return Document(
        doc_id="ops:platform.md",
        source="ops",
        path="platform.md",
        title="Platform operations",
        alert_names=alert_names,
        services=("platform",),
        owner=None,
        tags=(),
        last_updated=datetime(2026, 1, 5, tzinfo=UTC),
        revision="abc123",
        body=body,
        doc_hash="h",
        url="https://github.com/acme/ops/blob/main/platform.md",
    )


class TestAlertHeadings:
    @pytest.mark.parametrize(
        ("headings", "listed", "found"),
        [
            # Two identifiers at one level: both name alerts.
            ([(2, "KubePodCrashLooping"), (3, "How to fix"), (2, "etcdNoLeader")], (), {0, 2}),
            # snake_case and code spans count; prose headings never do.
            ([(3, "`node_disk_full`"), (3, "NodeClockSkew"), (3, "Overview")], (), {0, 1}),
            # One identifier alone is a single-alert page: nothing is cut.
            ([(1, "KubePodCrashLooping"), (2, "Diagnosis"), (2, "Mitigation")], (), set()),
            # Identifiers at two levels: the level with more of them wins.
            (
                [(2, "AlphaDown"), (3, "BetaDown"), (3, "GammaDown"), (3, "DeltaDown")],
                (),
                {1, 2, 3},
            ),
            # Plain words are not alert names even when several share a level.
            ([(2, "Meaning"), (2, "Impact"), (2, "Diagnosis")], (), set()),
            # Front matter names a heading that is not identifier-shaped.
            (
                [(2, "Disk full"), (2, "Memory high"), (2, "Notes")],
                ("Disk full", "Memory high"),
                {0, 1},
            ),
            # Front matter naming one heading only: still one alert, nothing is cut.
            ([(2, "Disk full"), (2, "Notes")], ("Disk full",), set()),
        ],
    )
    def test_which_headings_name_alerts(
        self, headings: list[tuple[int, str]], listed: tuple[str, ...], found: set[int]
    ) -> None:
        assert alert_headings(headings, listed) == found


class TestChunkUnits:
    def test_each_alert_section_is_a_unit_with_its_subsections(self) -> None:
        units = units_of(PAGE)
        assert [(u.anchor, u.heading) for u in units] == [
            ("", ""),
            ("kubepodcrashlooping", "KubePodCrashLooping"),
            ("kubepodnotready", "KubePodNotReady"),
        ]
        crash = units[1]
        assert [c.index for c in crash.chunks] == list(range(len(crash.chunks)))
        assert [(c.section, c.anchor) for c in crash.chunks] == [
            ("", "kubepodcrashlooping"),
            ("How to investigate", "how-to-investigate"),
            ("How to fix", "how-to-fix"),
        ]
        # The page numbers repeated headings page-wide, as the host does.
        assert [(c.section, c.anchor) for c in units[2].chunks] == [
            ("", "kubepodnotready"),
            ("How to investigate", "how-to-investigate-1"),
        ]

    def test_the_text_outside_alert_sections_stays_the_page(self) -> None:
        rest = units_of(PAGE)[0]
        text = "\n".join(c.text for c in rest.chunks)
        assert "Who owns what" in text and "Page the platform lead." in text
        assert "restarts" not in text and "not ready" not in text

    def test_no_chunk_spans_two_alerts_even_when_short(self) -> None:
        """A short section would take in the next one; never across a unit boundary."""
        body = "## AlphaDown\nx\n## BetaDown\ny\n"
        units = chunk_units(body, max_chars=1500, min_chars=100, style="github")
        assert [[c.text for c in u.chunks] for u in units] == [["x"], ["y"]]

    def test_a_single_alert_page_is_one_unit(self) -> None:
        body = "# KubePodCrashLooping\n\n## Diagnosis\nlogs\n## Mitigation\nroll back\n"
        (unit,) = units_of(body, ("KubePodCrashLooping",))
        assert unit.anchor == "" and [c.section for c in unit.chunks] == ["Diagnosis", "Mitigation"]

    def test_a_page_titled_with_an_alert_name_is_that_alert_s_runbook(self) -> None:
        """Resource kinds under its Mitigation are not alerts; front matter still cuts it."""
        body = "# QuotaRejected\n\n## Mitigation\n### ConfigMap\nx\n### PodMonitor\ny\n"
        assert [u.anchor for u in units_of(body)] == [""]
        listed = ("ConfigMap", "PodMonitor")
        assert [u.anchor for u in units_of(body, listed)] == ["configmap", "podmonitor"]

    def test_explicit_ids_name_the_units_on_a_site(self) -> None:
        body = "## DiskFull {#disk}\nfull\n## MemoryHigh {#mem}\nhigh\n"
        units = units_of(body, style="site")
        assert [(u.anchor, u.heading) for u in units] == [
            ("disk", "DiskFull"),
            ("mem", "MemoryHigh"),
        ]


class TestUnitDocuments:
    def test_units_are_documents_of_the_page(self) -> None:
        doc = page(PAGE, ("KubePodCrashLooping", "PlatformWide"))
        made = unit_documents(doc, units_of(PAGE))
        ids = [(d.doc_id, d.title, d.alert_names, d.page, d.unit_anchor) for d, _ in made]
        assert ids == [
            ("ops:platform.md", "Platform operations", ("PlatformWide",), "ops:platform.md", ""),
            (
                "ops:platform.md#kubepodcrashlooping",
                "KubePodCrashLooping",
                ("KubePodCrashLooping",),
                "ops:platform.md",
                "kubepodcrashlooping",
            ),
            (
                "ops:platform.md#kubepodnotready",
                "KubePodNotReady",
                ("KubePodNotReady",),
                "ops:platform.md",
                "kubepodnotready",
            ),
        ]
        for unit, _ in made:
            assert (unit.path, unit.revision, unit.url, unit.source, unit.services) == (
                doc.path,
                doc.revision,
                doc.url,
                doc.source,
                doc.services,
            )
        assert "kubectl rollout undo" in made[1][0].body
        assert "kubectl rollout undo" not in made[2][0].body

    def test_a_cut_page_s_file_name_names_no_alert(self) -> None:
        """Without front matter a file's name is its alert name; a page with a section per
        alert is a collection, and its own text answers to no alert."""
        made = unit_documents(page(PAGE, ("platform",)), units_of(PAGE))
        assert [d.alert_names for d, _ in made] == [
            (),
            ("KubePodCrashLooping",),
            ("KubePodNotReady",),
        ]

    def test_a_page_without_alert_sections_is_itself(self) -> None:
        body = "# Disk\n\n## Diagnosis\ndf -h\n"
        doc = page(body, ("DiskFull",))
        ((made, chunks),) = unit_documents(doc, units_of(body, ("DiskFull",)))
        assert made is doc and made.page == doc.doc_id and len(chunks) == 1
