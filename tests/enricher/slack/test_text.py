"""Escaping, mention defanging, secret redaction, links and cutting for Slack text."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from enricher.slack.markdown import fold_markdown, trim_markdown
from enricher.slack.text import (
    _RULES,
    LINK_MAX,
    SCAN_MARGIN,
    WORD_JOINER,
    cut,
    escape,
    is_http_url,
    link,
    literal,
    neutralize_mentions,
    redact_secrets,
    safe_line,
    truncate_plain,
)

ENTITY_OR_LINK = re.compile(r"&(?:amp|lt|gt);|<[^<>\n]*>")
RAW_MENTION = re.compile(r"<[!@#]")


def assert_well_formed(text: str) -> None:
    """Every `&` starts an entity, every `<` opens a complete http(s) link, no raw mention."""
    stripped = ENTITY_OR_LINK.sub("", text)
    assert "&" not in stripped, text
    assert "<" not in stripped and ">" not in stripped, text
    for m in re.finditer(r"<([^<>|]*)(?:\|[^<>]*)?>", text):
        assert m.group(1).startswith(("http://", "https://")), m.group(0)
    assert not RAW_MENTION.search(text)
    assert text.count("```") % 2 == 0, text


class TestEscape:
    @pytest.mark.parametrize(
        ("raw", "escaped"),
        [
            ("a & b", "a &amp; b"),
            ("<b>", "&lt;b&gt;"),
            ("&lt;", "&amp;lt;"),
            ("&amp;", "&amp;amp;"),
            ("x > y < z", "x &gt; y &lt; z"),
            ("plain", "plain"),
        ],
    )
    def test_escape(self, raw: str, escaped: str) -> None:
        """`&` is escaped first, so pre-escaped input is shown literally, not decoded."""
        assert escape(raw) == escaped


class TestMentions:
    @pytest.mark.parametrize(
        "raw",
        ["<!channel>", "<!here>", "<!everyone>", "<@U123>", "<!subteam^S1|devs>", "<#C123>"],
    )
    def test_bracket_mentions_are_inert_after_safe_line(self, raw: str) -> None:
        """Slack's `<!…>`, `<@…>`, `<#…>` tokens come out with `<` escaped."""
        out = safe_line(f"ping {raw} now", 3000)
        assert not RAW_MENTION.search(out)
        assert "&lt;" in out

    @pytest.mark.parametrize("raw", ["<!channel>", "<@U123>", "<!subteam^S1>"])
    def test_neutralize_alone_handles_raw_brackets(self, raw: str) -> None:
        """neutralize_mentions is safe even on text nobody escaped."""
        assert not RAW_MENTION.search(neutralize_mentions(raw))

    @pytest.mark.parametrize("word", ["@channel", "@here", "@everyone", "@Channel", "@HERE"])
    def test_bare_broadcasts_get_a_word_joiner(self, word: str) -> None:
        """Bare broadcast words are broken by an invisible WORD JOINER after the `@`."""
        out = neutralize_mentions(f"hey {word}!")
        assert word not in out
        assert "@" + WORD_JOINER + word[1:] in out

    @pytest.mark.parametrize(
        ("raw", "word"),
        [
            ("_@here_", "here"),
            ("*@channel*", "channel"),
            ("~@everyone~", "everyone"),
            ("x@channel", "channel"),
            ("call@here now", "here"),
            ("(@here)", "here"),
            ("@@channel", "channel"),
            ("see @here.", "here"),
            ("@here_team", "here"),
        ],
    )
    def test_broadcasts_in_formatting_or_after_a_letter_get_a_word_joiner(
        self, raw: str, word: str
    ) -> None:
        """Whatever precedes the `@` (formatting, a letter, another `@`), and whatever
        follows that is not a letter, digit or domain, the broadcast is defanged."""
        for out in (neutralize_mentions(raw), safe_line(raw, 100), truncate_plain(raw, 100)):
            assert "@" + WORD_JOINER + word in out
            assert not re.search(rf"@{word}", out)

    @pytest.mark.parametrize(
        "text", ["ops@here.example", "@channels", "@alice", "user@everyone.io"]
    )
    def test_other_at_words_untouched(self, text: str) -> None:
        """E-mail addresses, longer words and user names are not changed."""
        assert neutralize_mentions(text) == text


#: (raw text, the secret in it, the marker that replaces it)
SECRET_KINDS = [
    ("postgres://app:s3cr3t@db:5432/x", "s3cr3t", "app:***@db"),
    ("redis://:p@ss@cache:6379", "p@ss", ":***@cache"),
    ("curl -H 'Authorization: Bearer abc.def-123456' x", "abc.def-123456", "[REDACTED]"),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "[REDACTED]"),
    ("send bearer eyabcdefgh12345678", "eyabcdefgh12345678", "[REDACTED]"),
    ("password=hunter2 user=bob", "hunter2", "password=[REDACTED]"),
    ("export PGPASSWORD='s3cret pass'", "s3cret pass", "PGPASSWORD='[REDACTED]'"),
    ('{"api_key": "AbCdEf0123456789"}', "AbCdEf0123456789", '"[REDACTED]"'),
    ("token=abc123&next=1", "abc123", "token=[REDACTED]&next=1"),
    ("client_secret: 9f8e7d6c", "9f8e7d6c", "[REDACTED]"),
    ("secret=opensesame", "opensesame", "[REDACTED]"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
        "[REDACTED PRIVATE KEY]",
    ),
    ("-----BEGIN PRIVATE KEY-----\nMIIEcut-off", "MIIEcut-off", "[REDACTED PRIVATE KEY]"),
    ("id AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE", "[REDACTED AWS KEY]"),
    ("xoxb-123456789012-abcdefABCDEF", "abcdefABCDEF", "[REDACTED SLACK TOKEN]"),
    ("xoxp-1-2-3-abcdef012345", "abcdef012345", "[REDACTED SLACK TOKEN]"),
    ("ghp_" + "a1" * 18, "a1a1a1", "[REDACTED GITHUB TOKEN]"),
    ("github_pat_" + "Ab1_" * 10, "Ab1_Ab1_", "[REDACTED GITHUB TOKEN]"),
    ("https://hooks.slack.com/services/T0/B0/XyZ", "XyZ", "[REDACTED SLACK WEBHOOK]"),
    ("the secret is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a", "[REDACTED]"),
    ("API key: sk_live_abc123def456", "sk_live_abc123def456", "[REDACTED]"),
]


#: Secrets spelled with letters IGNORECASE folds to ASCII, and text that holds a rule's
#: words without a match near them.
NEAR_MISSES: tuple[str, ...] = (
    "ſecret=hunter22x",
    "prİvate_key: 'abc123def456'",
    "paſſword = s3cr3t!",
    "TOKEN is 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "\u212aEY",
    "ı",
    "capacity api access",
    "the secret of the cluster",
    "https://host.example/a:b/@c",
    "https://user:pa55@host.example/",
    "HTTPS://u:p@h",
    "high throughput ghp_short",
    "GHP_" + "A1" * 16,
    "ghp_" + "a1" * 16,
    "api-key\t=  abc123",
    "credentials:\n  value: x9y8z7w6",
)


def _redact_by_words(text: str) -> str:
    """Redaction that skips a pattern only when the text holds none of its words."""
    lowered = text.lower()
    for rule in _RULES:
        if any(hint in lowered for hint in rule.hints):
            text, count = rule.pattern.subn(rule.replacement, text)
            if count:
                lowered = text.lower()
    return text


class TestRedact:
    @pytest.mark.parametrize(("raw", "secret", "marker"), SECRET_KINDS)
    def test_secret_kinds_redacted(self, raw: str, secret: str, marker: str) -> None:
        """Each kind of secret is replaced by a marker and does not survive."""
        out = redact_secrets(raw)
        assert secret not in out
        assert marker in out

    @pytest.mark.parametrize(
        "text",
        [
            "Reset the password: run kubectl rollout restart deploy/api",
            "secretName: postgres-credentials",
            "token: ${SLACK_TOKEN}",
            "password=$PGPASSWORD",
            "https://grafana.example.com:3000/d/abc?var-instance=db-1",
            "Rotate the token monthly.",
            "The API uses Bearer authentication.",
            "curl -H 'Authorization: Bearer $TOKEN' https://api.example",
        ],
    )
    def test_non_secrets_kept(self, text: str) -> None:
        """Prose, secret names and variable references stay readable."""
        assert redact_secrets(text) == text

    def test_redaction_is_idempotent(self) -> None:
        """Redacting twice gives the same text (a door may see already redacted text)."""
        raw = "postgres://u:pw@h password=x token: abc123456 AKIAIOSFODNN7EXAMPLE"
        once = redact_secrets(raw)
        assert redact_secrets(once) == once

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(
        parts=st.lists(
            st.one_of(
                st.sampled_from([raw for raw, _, _ in SECRET_KINDS]),
                st.deferred(lambda: st.sampled_from(ADVERSARIAL_UNITS)),
                st.text(max_size=30),
            ),
            max_size=8,
        )
    )
    def test_skipping_patterns_by_their_words_changes_nothing(self, parts: list[str]) -> None:
        """A pattern is skipped on text holding none of its words; the result is the same
        as running every pattern over everything."""
        text = " ".join(parts)
        every = text
        for rule in _RULES:
            every = rule.pattern.sub(rule.replacement, every)
        assert redact_secrets(text) == every

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(
        parts=st.lists(
            st.one_of(
                st.sampled_from([raw for raw, _, _ in SECRET_KINDS]),
                st.deferred(lambda: st.sampled_from(ADVERSARIAL_UNITS + NEAR_MISSES)),
                st.text(max_size=30),
            ),
            max_size=8,
        )
    )
    def test_skipping_patterns_by_where_their_words_are_changes_nothing(
        self, parts: list[str]
    ) -> None:
        """A pattern whose words the text holds is still skipped where its `near` part
        matches at none of them; the result is the same as running every pattern whose
        words the text holds, also with letters that IGNORECASE folds to ASCII (`ſ`, `İ`)."""
        text = "".join(parts)
        assert redact_secrets(text) == _redact_by_words(text)

    @pytest.mark.parametrize("text", NEAR_MISSES)
    def test_folded_letters_and_near_misses(self, text: str) -> None:
        """Each near miss and folded spelling reads as running its patterns would."""
        for shown in (text, f"token {text}", f"{text} access"):
            assert redact_secrets(shown) == _redact_by_words(shown)

    def test_safe_redacts_before_escaping(self) -> None:
        """A secret containing `&` is redacted whole, not split by its escape."""
        out = safe_line("password=a&b<c", 3000)
        assert "a&amp;b" not in out
        assert out.startswith("password=[REDACTED]")


class TestLinks:
    @pytest.mark.parametrize(
        ("url", "ok"),
        [
            ("https://example.com/x", True),
            ("http://example.com", True),
            ("javascript:alert(1)", False),
            ("JAVASCRIPT://example.com/%0aalert(1)", False),
            ("data:text/html,hi", False),
            ("file:///etc/passwd", False),
            ("https://", False),
            ("https://exa mple.com", False),
            ("", False),
        ],
    )
    def test_is_http_url(self, url: str, ok: bool) -> None:
        """Only http(s) URLs with a host qualify as link targets."""
        assert is_http_url(url) is ok

    def test_link_escapes_target_and_label(self) -> None:
        """`&`, `|` and `>` in a URL cannot end or split the Slack link."""
        out = link("https://x.example/a?b=1&c=2|<!channel>", "Run <!here> & go")
        assert (
            out == "<https://x.example/a?b=1&amp;c=2%7C%3C!channel%3E|Run &lt;!here&gt; &amp; go>"
        )
        assert_well_formed(out)

    def test_non_http_link_is_text(self) -> None:
        """A javascript: target becomes escaped label text, not a link."""
        assert link("javascript:alert(1)", "click <me>") == "click &lt;me&gt;"

    def test_secrets_in_link_targets_redacted(self) -> None:
        """A password in a link's URL is masked; a Slack webhook URL is not linked at all."""
        assert link("https://u:pw@h.example/x", "db") == "<https://u:***@h.example/x|db>"
        assert link("https://hooks.slack.com/services/T0/B0/XyZ", "hook") == "hook"

    def test_url_looking_label_for_other_host_shows_target(self) -> None:
        """`[google.com](https://evil.example)` shows the real target."""
        assert link("https://evil.example/x", "google.com") == "<https://evil.example/x>"
        assert link("https://docs.example/x", "docs.example/x") == (
            "<https://docs.example/x|docs.example/x>"
        )


class TestCut:
    @pytest.mark.parametrize("limit", range(0, 60))
    def test_never_inside_entity_or_link(self, limit: int) -> None:
        """Cutting at any limit keeps entities and links whole."""
        text = "a &amp; b &lt;tag&gt; see <https://x.example/p?q=1&amp;r=2|the docs> &amp;&amp; end"
        out = cut(text, limit)
        assert len(out) <= limit
        assert_well_formed(out)

    def test_prefers_whitespace(self) -> None:
        """The cut lands on a word boundary when one is near."""
        assert cut("alpha beta gamma", 12) == "alpha beta"

    def test_safe_line_collapses_and_cuts(self) -> None:
        """safe_line makes one line and ends a cut with an ellipsis."""
        assert safe_line("a\n\nb   c", 10) == "a b c"
        out = safe_line("word " * 40, 20)
        assert len(out) <= 20 and out.endswith("…")


class TestTruncatePlain:
    @pytest.mark.parametrize("limit", [1, 2, 10, 50, 150])
    def test_limit(self, limit: int) -> None:
        """plain_text is cut to the limit with an ellipsis."""
        out = truncate_plain("PostgresReplicationLag " * 20, limit)
        assert len(out) <= limit

    def test_not_escaped_but_defanged(self) -> None:
        """plain_text shows `&` literally; mentions and secrets are still neutralized."""
        out = truncate_plain("A & B <!channel> @here token=abc123", 150)
        assert "&" in out and "&amp;" not in out
        assert "<!" not in out and "@here" not in out
        assert "abc123" not in out

    def test_one_line(self) -> None:
        """Newlines collapse to single spaces."""
        assert truncate_plain("a\nb\t c", 150) == "a b c"


MIB = 1 << 20
#: Runs that made the old patterns quadratic or worse (`a.a.a`, `-a-a`, key words, schemes,
#: unclosed `[` and `**`), long base64, and the openers every pattern keys on.
ADVERSARIAL_UNITS: tuple[str, ...] = (
    "a.",
    "-a",
    ".",
    "token.",
    "password_",
    "secret=",
    "api_key: ",
    "bearer ",
    "QUJDRGVmZ2g0NTY3",
    "+/=",
    "a://",
    "a:b",
    " **a",
    "__a ",
    "[",
    "](",
    "@here",
    "eyJ-",
    "xoxb-",
    "ghp_",
    "&",
    "<",
    "`",
    "```\n",
    "# ",
    " ",
    "\n",
    "\u202e",
    "-----BEGIN PRIVATE KEY-----",
)


def adversarial(max_run: int = 4000) -> st.SearchStrategy[str]:
    """Text made of a few long runs of adversarial units."""
    run = st.tuples(st.sampled_from(ADVERSARIAL_UNITS), st.integers(1, max_run))
    return st.lists(run.map(lambda r: r[0] * r[1]), min_size=1, max_size=6).map("".join)


def mebibyte(text: str) -> str:
    """`text` repeated to exactly 1 MiB of characters."""
    return (text * (MIB // len(text) + 1))[:MIB]


#: Each door, and how much of its input it may read: what its output can show, plus
#: SCAN_MARGIN.
Door = Callable[[str], str]
DOORS: dict[str, tuple[Door, int]] = {
    "safe_line": (lambda t: safe_line(t, 300), 300 + SCAN_MARGIN),
    "literal": (lambda t: literal(t, 100), 98 + SCAN_MARGIN),
    "truncate_plain": (lambda t: truncate_plain(t, 150), 150 + SCAN_MARGIN),
    "link_label": (lambda t: link("https://x.example/", t), LINK_MAX + SCAN_MARGIN),
    "trim_markdown": (lambda t: trim_markdown(t, 1200), 2 * 1200 + SCAN_MARGIN),
    "fold_markdown": (
        lambda t: "\n--\n".join(fold_markdown(t, fold_chars=700, fold_lines=4, limit=2200)),
        2 * (700 + 2200) + SCAN_MARGIN,
    ),
}
BOUNDED = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class TestBoundedWork:
    """Redaction and rendering read only what the output can show (STYLE §13)."""

    @pytest.mark.parametrize("door", sorted(DOORS))
    @BOUNDED
    @given(text=adversarial())
    def test_only_the_cut_prefix_is_read(self, door: str, text: str) -> None:
        """On 1 MiB of adversarial text, the result is the result on its cut prefix followed
        by anything else: nothing past the prefix is scanned, so the work is bounded by the
        prefix, not the field."""
        render, window = DOORS[door]
        big = mebibyte(text)
        assert render(big) == render(big[:window] + "x")
        assert render(big) == render(big[:window] + mebibyte(text[::-1]))

    @pytest.mark.parametrize("door", ["safe_line", "literal", "trim_markdown", "fold_markdown"])
    @BOUNDED
    @given(
        kind=st.sampled_from(SECRET_KINDS),
        before=adversarial(max_run=40),
        after=adversarial(),
    )
    def test_secrets_stay_redacted_among_adversarial_text(
        self, door: str, kind: tuple[str, str, str], before: str, after: str
    ) -> None:
        """Every secret of the table stays redacted with adversarial runs around it and a
        1 MiB tail, wherever the cut falls."""
        raw, secret, _ = kind
        render, _ = DOORS[door]
        out = render(f"{before[:200]} {raw} {mebibyte(after)}")
        assert secret not in out

    @pytest.mark.parametrize(("raw", "secret", "marker"), SECRET_KINDS)
    def test_a_secret_straddling_the_cut_is_redacted_whole(
        self, raw: str, secret: str, marker: str
    ) -> None:
        """A secret that starts just before the output's limit and ends past it is seen
        whole, so the cut shows its marker (or part of it), never part of the secret."""
        for shift in range(0, 12, 3):
            lead = "x " * ((280 - shift) // 2)
            out = safe_line(lead + raw + " tail" * 1000, 300)
            assert secret[:4] not in out[len(lead) - 2 :]
