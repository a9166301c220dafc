"""A page with a section per alert becomes one runbook unit per alert (ingest.units)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from enricher.index.schema import Actionable
from enricher.search.links import fragment
from enricher.search.names import name_key
from ingest.anchors import Style
from ingest.chunking import actionable, chunk_units
from ingest.document import Document, Unit
from ingest.units import alert_headings, alert_name, unit_alert_names, unit_documents

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
            # Alert-rule references: a code span with a note after it, a "%" in the name.
            (
                [(4, "`Loader_lag` (streaming only)"), (4, "`Disk_used_more_than_80%`")],
                (),
                {0, 1},
            ),
            # A code span with an explicit id, as GitHub shows a site's heading.
            ([(2, "`Schema_error` {#schema-error}"), (2, "`Apply_slow` {#apply}")], (), {0, 1}),
            # Generated references: "service: alert_name", the name may start with a digit.
            (
                [(2, "frontend: 99th_percentile_search"), (2, "gitserver: disk_space_left")],
                (),
                {0, 1},
            ),
            # Prose around a code span, or a label and words, names no alert.
            ([(2, "`kube_pod_info` and friends"), (2, "`up_metric` is zero")], (), set()),
            ([(2, "Note: read this first"), (2, "Step 2: restart it")], (), set()),
        ],
    )
    def test_which_headings_name_alerts(
        self, headings: list[tuple[int, str]], listed: tuple[str, ...], found: set[int]
    ) -> None:
        assert alert_headings(headings, listed) == found


class TestAlertName:
    @pytest.mark.parametrize(
        ("heading", "name"),
        [
            ("KubePodCrashLooping", "KubePodCrashLooping"),
            ("`node_disk_full`", "node_disk_full"),
            ("`Loader_lag` (only on streaming ingestion)", "Loader_lag"),
            ("`Schema_error` {#schema-error}", "Schema_error"),
            ("frontend: 99th_percentile_search", "frontend: 99th_percentile_search"),
        ],
    )
    def test_the_name_a_heading_gives(self, heading: str, name: str) -> None:
        assert alert_name(heading) == name


#: A page of `##` alert sections with `###` parts, and two runs of headings sharing a text.
RUNS = """# Broker alerts

Where the dashboards are.

## NodeDownAlert

## NodeUnreachableAlert

### Summary

A node stopped answering.

### Steps

Recreate its pod.

## QueueDepthHigh

### Summary

Messages pile up.

### Impact

Work is late.

### Diagnosis

Compare publish and delivery rates.

### Mitigation

Scale the consumers.

## ConnectionChurnHigh


## ChannelChurnHigh

## SessionChurnHigh
Clients reconnect all the time; pool their connections.

## Escalation

Page the lead.
"""


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

    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            # Back to back, or with blank lines only between: one unit for the run.
            (
                RUNS,
                [
                    ("", "", ()),
                    ("nodedownalert", "NodeDownAlert", ("NodeUnreachableAlert",)),
                    ("queuedepthhigh", "QueueDepthHigh", ()),
                    (
                        "connectionchurnhigh",
                        "ConnectionChurnHigh",
                        ("ChannelChurnHigh", "SessionChurnHigh"),
                    ),
                ],
            ),
            # A heading with a line of its own is no part of a run.
            (
                "## AlphaDown\nSee below.\n## BetaDown\nShared.\n",
                [("alphadown", "AlphaDown", ()), ("betadown", "BetaDown", ())],
            ),
            # A run at any depth, under headings that name no alert.
            (
                "## Loader\nIts rules.\n### Critical\n#### `Load_failed`\n#### `Load_stuck`\n"
                "* Solution:\n\n    Retry it.\n#### `Load_slow`\nAdd workers.\n",
                [
                    ("", "", ()),
                    ("load_failed", "`Load_failed`", ("`Load_stuck`",)),
                    ("load_slow", "`Load_slow`", ()),
                ],
            ),
            # An empty alert heading above a heading that names none is not a run.
            (
                "## AlphaDown\n## Notes\nx\n## BetaDown\ny\n",
                [("", "", ()), ("betadown", "BetaDown", ())],
            ),
        ],
    )
    def test_headings_with_nothing_between_them_share_what_follows(
        self, body: str, expected: list[tuple[str, str, tuple[str, ...]]]
    ) -> None:
        """Before, the first heading of a run got no unit and the last got the text alone:
        only the last alert of the run could find it."""
        units = units_of(body)
        assert [(u.anchor, u.heading, u.shared) for u in units] == expected

    def test_a_run_s_unit_holds_the_shared_text_with_its_parts(self) -> None:
        unit = units_of(RUNS)[1]
        assert [(c.section, c.anchor) for c in unit.chunks] == [
            ("Summary", "summary"),
            ("Steps", "steps"),
        ]
        churn = units_of(RUNS)[3]
        assert [c.text for c in churn.chunks] == [
            "Clients reconnect all the time; pool their connections."
        ]

    def test_alert_sections_with_parts_keep_their_parts_and_their_own_steps(self) -> None:
        """`##` alerts with `###` Summary, Impact, Diagnosis, Mitigation: each part is a chunk
        of its alert's unit, under its own heading path, and what says what to do is there."""
        queue = units_of(RUNS)[2]
        assert [(c.section, c.anchor) for c in queue.chunks] == [
            ("Summary", "summary-1"),
            ("Impact", "impact"),
            ("Diagnosis", "diagnosis"),
            ("Mitigation", "mitigation"),
        ]
        steps = [c.section for c in queue.chunks if actionable(c.section, c.text)]
        assert steps == ["Diagnosis", "Mitigation"]

    @pytest.mark.parametrize(
        ("body", "steps"),
        [
            # Each rule laid out as list labels, as alert-rule references do.
            (
                "#### `Load_failed`\n* Alert rule:\n\n    `x > 0`\n\n* Description:\n\n"
                "    Broken.\n\n* Solution:\n\n    Retry.\n#### `Load_slow`\nSlow.\n",
                [True, False],
            ),
            # As bold labels.
            (
                "## a: p99_latency\n\n**Descriptions**\n\n- slow\n\n**Next steps**\n\n"
                "- Scale.\n## b: error_ratio\n\n**Descriptions**\n\n- errors\n",
                [True, False],
            ),
            # As `####` parts.
            (
                "### `Load_failed`\n#### Alert rule\nx\n#### Solution\nRetry.\n"
                "### `Load_slow`\n#### Description\nSlow.\n",
                [True, False],
            ),
        ],
    )
    def test_alert_rule_layouts_are_cut_and_their_solution_is_the_step(
        self, body: str, steps: list[bool]
    ) -> None:
        units = units_of(body)
        assert [bool(u.anchor) for u in units] == [True] * len(steps)
        shown = [max(actionable(c.section, c.text) for c in u.chunks) for u in units]
        assert shown == [Actionable.HEADING if step else Actionable.NONE for step in steps]

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

    def test_a_run_is_one_runbook_serving_each_of_its_alerts(self) -> None:
        """One unit, not a copy per alert: copies would tie for every alert not named
        exactly, and the page's link lands on the run either way."""
        made = unit_documents(page(RUNS), units_of(RUNS))
        ids = [(d.doc_id, d.title, d.alert_names) for d, _ in made]
        assert ids == [
            ("ops:platform.md", "Platform operations", ()),
            (
                "ops:platform.md#nodedownalert",
                "NodeDownAlert / NodeUnreachableAlert",
                ("NodeDownAlert", "NodeUnreachableAlert"),
            ),
            ("ops:platform.md#queuedepthhigh", "QueueDepthHigh", ("QueueDepthHigh",)),
            (
                "ops:platform.md#connectionchurnhigh",
                "ConnectionChurnHigh / ChannelChurnHigh / SessionChurnHigh",
                ("ConnectionChurnHigh", "ChannelChurnHigh", "SessionChurnHigh"),
            ),
        ]

    @pytest.mark.parametrize(
        ("style", "link"),
        [
            ("github", "https://github.com/acme/ops/blob/main/platform.md#channelchurnhigh"),
            ("gitlab", "https://gitlab.com/acme/ops/-/blob/main/platform.md#sessionchurnhigh"),
            ("site", "https://runbooks.example.com/platform/#nodeunreachablealert"),
        ],
    )
    def test_a_link_to_any_heading_of_a_run_names_its_unit(self, style: Style, link: str) -> None:
        """A link whose anchor is no unit's anchor names the alert its heading carries
        (enricher.search.links): each heading of a run is one of its unit's alert names."""
        units = units_of(RUNS, style=style)
        named = [u for u in units if name_key(fragment(link)) in map(name_key, unit_alert_names(u))]
        assert len(named) == 1 and named[0].shared

    def test_a_page_without_alert_sections_is_itself(self) -> None:
        body = "# Disk\n\n## Diagnosis\ndf -h\n"
        doc = page(body, ("DiskFull",))
        ((made, chunks),) = unit_documents(doc, units_of(body, ("DiskFull",)))
        assert made is doc and made.page == doc.doc_id and len(chunks) == 1
