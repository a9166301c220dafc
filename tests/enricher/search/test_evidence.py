"""The readings and features of a search (pure): fusion, names, coverage, relative features."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enricher.index.stats import CorpusStats
from enricher.search import evidence
from enricher.search.evidence import Readings

#: Words that exercise every way to line up: the same word, a plural, initials of 2-5
#: words, two words run together, and a word that is the first of its own initials.
WORDS = [
    "m",
    "c",
    "mc",
    "mcc",
    "machine",
    "config",
    "cpu",
    "mds",
    "mdscpu",
    "replica",
    "replicas",
    "on",
    "non",
    "o",
    "n",
]


#: Three runbooks: a, b share the family words 1 and 2; c is about something else.
STATS = CorpusStats.from_documents(
    [
        ("a", [1, 2, 3, 10], [1, 2, 3]),
        ("b", [1, 2, 4, 11], [1, 2, 4]),
        ("c", [5, 6, 12], [5, 6]),
    ]
)


class TestFuse:
    def test_documents_both_readings_put_first_lead(self) -> None:
        """Reciprocal rank fusion at document level: agreement wins over one strong reading."""
        readings = Readings(
            dense={"a": 0.80, "b": 0.82, "c": 0.1},
            lexical={"a": 9.0, "b": 3.0, "c": 8.0},
            names={},
        )
        assert evidence.fuse(readings, k=60)[:2] == ["a", "b"]

    def test_the_names_reading_votes_only_with_a_clear_winner(self) -> None:
        """When the text readings split, a names reading with a clear winner decides; one of
        near ties adds nothing."""
        split = Readings(dense={"a": 0.8, "b": 0.81}, lexical={"a": 5.1, "b": 5.0}, names={})
        tie = Readings(split.dense, split.lexical, names={"a": 0.65, "b": 0.7})
        assert evidence.fuse(tie, k=60) == evidence.fuse(split, k=60)
        for winner, loser in (("a", "b"), ("b", "a")):
            clear = Readings(split.dense, split.lexical, names={winner: 1.0, loser: 0.3})
            assert evidence.fuse(clear, k=60)[0] == winner

    def test_equal_scores_go_by_the_other_reading_then_by_id(self) -> None:
        """Two sections of the same words score the same in a reading; the order the engine
        returned them in must not put one above the other."""
        tied = {"b": 0.5, "a": 0.5, "c": 0.9, "d": 0.1}
        assert evidence.ranks(tied) == {"c": 1, "a": 2, "b": 3, "d": 4}
        assert evidence.ranks(tied, then={"b": 2.0, "a": 1.0}) == {"c": 1, "b": 2, "a": 3, "d": 4}

    def test_a_tie_in_one_reading_is_decided_by_the_others_not_by_arrival(self) -> None:
        came = Readings(
            dense={"b": 0.5, "a": 0.5, "c": 0.9}, lexical={"b": 4.0, "a": 3.0}, names={}
        )
        went = Readings(
            dense={"a": 0.5, "b": 0.5, "c": 0.9}, lexical={"a": 3.0, "b": 4.0}, names={}
        )
        assert evidence.fuse(came, k=60) == evidence.fuse(went, k=60) == ["b", "a", "c"]
        tied = Readings(dense={"b": 0.5, "a": 0.5}, lexical={"b": 4.0, "a": 4.0}, names={})
        again = Readings(dense={"a": 0.5, "b": 0.5}, lexical={"a": 4.0, "b": 4.0}, names={})
        assert evidence.fuse(tied, k=60) == evidence.fuse(again, k=60) == ["a", "b"]

    @pytest.mark.parametrize(
        ("names", "votes"),
        [({}, False), ({"a": 0.5}, False), ({"a": 0.9, "b": 0.8}, False), ({"a": 0.9}, True)],
    )
    def test_name_vote(self, names: dict[str, float], votes: bool) -> None:
        assert bool(evidence.name_vote(names)) is votes


class TestNameCoverage:
    def test_share_of_the_name_by_name_idf(self) -> None:
        """Evidence spelling all of a's name covers it fully; a shared word covers part of
        both, and counts less than a word only one name has."""
        full = evidence.name_coverage(STATS, [1, 2, 3])
        assert full["a"] == pytest.approx(1.0)
        assert 0 < full["b"] < 1
        assert "c" not in full
        shared = evidence.name_coverage(STATS, [1])
        own = evidence.name_coverage(STATS, [3])
        assert shared["a"] < own["a"]

    def test_no_evidence_covers_nothing(self) -> None:
        assert evidence.name_coverage(STATS, []) == {}


class TestCoverage:
    def test_rare_words_weigh_more(self) -> None:
        """Holding the alert's rare word (3, only in a) counts more than its family word."""
        rare = evidence.content_coverage(STATS, [1, 3], [3])
        family = evidence.content_coverage(STATS, [1, 3], [1])
        assert rare > family > 0
        assert evidence.content_coverage(STATS, [1, 3], [1, 3]) == pytest.approx(1.0)

    def test_words_no_runbook_uses_weigh_nothing(self) -> None:
        """A team's own word (99) neither helps nor hurts coverage, but lowers the known
        share: an alert made of such words is off-topic here."""
        assert evidence.content_coverage(STATS, [3, 99], [3]) == pytest.approx(1.0)
        assert evidence.known_share(STATS, [3]) == pytest.approx(1.0)
        assert evidence.known_share(STATS, [3, 99]) < 1.0
        assert evidence.known_share(STATS, []) == 0.0


class TestFeatures:
    def test_features_are_relative_to_the_other_candidates(self) -> None:
        readings = Readings(
            dense={"a": 0.8, "b": 0.6}, lexical={"a": 4.0, "b": 8.0}, names={"a": 0.5}
        )
        got = evidence.features(
            "a", readings, coverage=0.7, known=0.9, quotes_metric=True, service_match=False
        )
        reader = {"reader", "reader_margin"}  # the reader's own: reader_features
        assert set(got) == set(evidence.FEATURES) - reader
        assert got["cosine_margin"] == pytest.approx(0.2)
        assert got["lexical_share"] == pytest.approx(0.5)
        assert (got["dense_first"], got["lexical_first"]) == (1.0, 0.0)
        assert got["name_margin"] == pytest.approx(0.5)
        assert (got["quotes_metric"], got["service_match"]) == (1.0, 0.0)
        other = evidence.features(
            "b", readings, coverage=0.1, known=0.9, quotes_metric=False, service_match=True
        )
        assert other["cosine_margin"] == pytest.approx(-0.2)
        assert other["lexical_share"] == pytest.approx(1.0)
        assert all(math.isfinite(v) for v in other.values())


class TestNameAlignment:
    @pytest.mark.parametrize(
        ("alert", "names", "expected"),
        [
            ("KubePodCrashLooping", ["KubePodCrashLooping"], 1.0),
            ("MCCDrainError", ["MachineConfigControllerDrainError"], 1.0),
            ("MDSCPUUsageHigh", ["CephMdsCpuUsageHigh"], 8 / 9),
            ("SouthboundStale", ["SouthboundStaleAlert"], 0.8),
            ("KubeNodeEviction", ["KubeNodeNotReady"], 4 / 7),
            # "on" is a word, not the initials of "on non": the runbook is for the nodes
            # that are not OSD nodes.
            ("ODFNodeLatencyHighOnOSDNodes", ["ODFNodeLatencyHighOnNonOSDNodes"], 14 / 15),
            ("Payments", ["KubePodCrashLooping"], 0.0),
            ("", ["KubePodCrashLooping"], 0.0),
        ],
    )
    def test_names_line_up_word_for_word(
        self, alert: str, names: list[str], expected: float
    ) -> None:
        """Same words, a word's plural, an acronym of several words or capitals run together
        all line up; the score is the harmonic mean of the two sides' matched shares."""
        assert evidence.name_alignment(alert, names) == pytest.approx(expected)

    def test_a_title_in_words_is_not_lined_up(self) -> None:
        """A PagerDuty incident titled by its summary shares a few words with its own
        runbook's name; lined up, that would read as a sibling's name (evidence against)."""
        title = "An Alertmanager instance failed to send notifications - alertmanager-main-1"
        alignment = evidence.name_alignment(title, ["AlertmanagerFailedToSendAlerts"])
        assert alignment == 0.0
        assert evidence.unlike(alignment) == 1.0

    def test_a_name_in_words_lines_up_with_alert_names_in_words(self) -> None:
        """NetApp names its alerts in words: `Main Unit Fan Failed` beside the listed
        `Main Unit Fan in Warning State` is a sibling's name (3 of 4 words and 3 of 6)."""
        alignment = evidence.name_alignment(
            "Main Unit Fan Failed", ["main unit fan warning"], ["Main Unit Fan in Warning State"]
        )
        assert alignment == pytest.approx(0.6)
        assert evidence.unlike(alignment) == pytest.approx(0.4)

    @pytest.mark.parametrize(
        ("title", "listed"),
        [
            # a title, not a listed alert name: a runbook's title in words is prose too
            ("Postgres replication lag", []),
            # an incident titled `<alert>: <summary>` is a sentence
            ("Disk Shelf Power Supply Removed: a power supply was removed", ["Disk Shelf Power"]),
            ("Disk Shelf Power Supply Removed - shelf 3", ["Disk Shelf Power Supply"]),
            # words against a CamelCase name: two naming styles, never lined up
            ("Postgres replication lag", ["PostgresReplicationLag"]),
        ],
    )
    def test_words_line_up_only_with_names_in_words(self, title: str, listed: list[str]) -> None:
        names = ["Postgres replication lag", *listed]
        assert evidence.name_alignment(title, names, listed) == 0.0

    def test_the_best_of_several_names_counts(self) -> None:
        got = evidence.name_alignment("PGReplicaLag", ["Postgres replication lag", "PGReplicaLag"])
        assert got == pytest.approx(1.0)

    @settings(max_examples=400, deadline=None)
    @given(
        st.lists(st.sampled_from(WORDS), max_size=5),
        st.lists(st.sampled_from(WORDS), max_size=6),
    )
    def test_the_table_finds_the_best_alignment(self, alert: list[str], name: list[str]) -> None:
        """The row-by-row table (with its precomputed runs) scores what the definition,
        read top down, scores: the most words matched on both sides in order."""
        hit_alert, hit_name = evidence._aligned(alert, tuple(name))
        assert hit_alert + hit_name == _best_total(alert, name)
        assert hit_alert <= len(alert) and hit_name <= len(name)

    @pytest.mark.parametrize(("alignment", "expected"), [(1.0, 1.0), (0.96, 1.0), (0.8, 0.2)])
    def test_a_name_like_a_sibling_s_is_evidence_against(
        self, alignment: float, expected: float
    ) -> None:
        """Its own name is full evidence; a name most of whose words a runbook shares is
        another alert of that runbook's family."""
        assert evidence.unlike(alignment) == pytest.approx(expected)


class TestSeveritySibling:
    @pytest.mark.parametrize(
        ("alert", "names", "expected"),
        [
            pytest.param(
                "SmartDeviceTemperatureCritical",
                ["SmartDeviceTemperatureWarning"],
                True,
                id="other-level",
            ),
            pytest.param(
                "ProxmoxCertificateExpiring",
                ["ProxmoxCertificateExpiringWarning"],
                True,
                id="one-graded",
            ),
            pytest.param(
                "critical_frontend_probe_critical", ["frontend: probe_warning"], True, id="snake"
            ),
            pytest.param("KubeletDown", ["KubeletDown"], False, id="its-own-name"),
            pytest.param("DiskFull", ["DiskAlmostFull"], False, id="another-word"),
            pytest.param("Critical", ["Warning"], False, id="nothing-but-severity"),
            pytest.param("NodeClockSkew", ["notes", "NodeClockSkewWarning"], True, id="any-name"),
        ],
    )
    def test_the_same_name_at_another_severity(
        self, alert: str, names: list[str], expected: bool
    ) -> None:
        assert evidence.severity_sibling(alert, names) is expected

    def test_it_is_a_feature(self) -> None:
        readings = evidence.Readings(dense={"a": 0.5}, lexical={"a": 1.0}, names={})
        values = evidence.features(
            "a",
            readings,
            coverage=0.5,
            known=0.5,
            quotes_metric=False,
            service_match=False,
            severity_sibling=True,
        )
        assert values["severity_sibling"] == 1.0


class TestNameRecallAndFit:
    def test_a_runbook_named_for_what_the_alert_says(self) -> None:
        """name_recall: the share of the runbook's name the alert spells anywhere."""
        assert evidence.name_recall(STATS, "a", [1, 2, 3, 99]) == pytest.approx(1.0)
        assert 0 < evidence.name_recall(STATS, "a", [1, 2]) < 1
        assert evidence.name_recall(STATS, "c", [1, 2, 3]) == 0.0
        assert evidence.name_recall(STATS, "unknown", [1]) == 0.0

    def test_a_naming_word_the_runbook_lacks_is_evidence_against(self) -> None:
        """name_fit: the alert name's words that name some runbook (4 names b) must be in
        this runbook's name; words no runbook is named with (99) say nothing."""
        assert evidence.name_fit(STATS, "a", [1, 3]) == pytest.approx(1.0)
        assert evidence.name_fit(STATS, "a", [1, 4]) < 1.0
        assert evidence.name_fit(STATS, "a", [99]) == 1.0
        assert evidence.name_fit(STATS, "a", [1, 3, 99]) == pytest.approx(1.0)


def _best_total(alert: list[str], name: list[str]) -> int:
    """Words matched on both sides by the best in-order alignment, top down: skip a word
    of either side, match the same word (or its 4+ letter start), or let the alert word
    stand for the longest run of 2-5 name words it is the initials of (2-3 words: run
    together), unless it is the run's first word itself."""
    if not alert or not name:
        return 0
    word, first = alert[0], name[0]
    options = [_best_total(alert[1:], name), _best_total(alert, name[1:])]
    prefix = min(len(word), len(first)) >= 4 and (word.startswith(first) or first.startswith(word))
    if word == first or prefix:
        options.append(2 + _best_total(alert[1:], name[1:]))
    if word != first:
        for span in range(min(5, len(name)), 1, -1):
            run = name[:span]
            if "".join(w[0] for w in run) == word or (span <= 3 and "".join(run) == word):
                options.append(1 + span + _best_total(alert[1:], name[span:]))
                break
    return max(options)


class TestReaderFeatures:
    @pytest.mark.parametrize(
        ("logits", "expected"),
        [
            ([], []),
            ([0.0], [(0.5, 0.5)]),
            ([2.0, -2.0], [(0.881, 0.762), (0.119, -0.762)]),
            ([3.0, 3.0, -30.0], [(0.953, 0.0), (0.953, 0.0), (0.0, -0.953)]),
            ([-5.0, -6.0], [(0.007, 0.004), (0.002, -0.004)]),
        ],
    )
    def test_probability_and_lead(
        self, logits: list[float], expected: list[tuple[float, float]]
    ) -> None:
        """Each candidate's logit as a probability, and its lead over the best other one:
        two likely siblings lead neither, an off-topic alert's candidates are all unlikely."""
        got = evidence.reader_features(logits)
        assert [(round(f["reader"], 3), round(f["reader_margin"], 3)) for f in got] == expected
