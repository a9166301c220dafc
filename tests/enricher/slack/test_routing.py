"""Channel routing rules."""

from __future__ import annotations

import pytest

from enricher.alert import Alert
from enricher.errors import ConfigError
from enricher.slack.routing import parse_routes

RULES = (
    '[{"service": "payments*", "severity": "critical", "channel": "C-PAY-PAGE"},'
    ' {"service": "payments*", "channel": "C-PAY"},'
    ' {"severity": "info", "channel": "C-NOISE"}]'
)


def alert(service: str | None, severity: str | None) -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name="X",
        service=service,
        severity=severity,
        summary="",
        description="",
    )


class TestRouter:
    @pytest.mark.parametrize(
        ("service", "severity", "channel"),
        [
            ("payments-api", "critical", "C-PAY-PAGE"),
            ("Payments-API", "CRITICAL", "C-PAY-PAGE"),
            ("payments-api", "warning", "C-PAY"),
            ("postgres", "info", "C-NOISE"),
            ("postgres", "critical", "C-DEFAULT"),
            (None, None, "C-DEFAULT"),
        ],
    )
    def test_first_matching_rule_wins(
        self, service: str | None, severity: str | None, channel: str
    ) -> None:
        """Rules are globs on service and severity, tried in order, then the default."""
        router = parse_routes(RULES, "C-DEFAULT")
        assert router.channel_for(alert(service, severity)) == channel

    @pytest.mark.parametrize(
        "raw", ['{"channel": "C1"}', '[{"service": "x"}]', "[{", '[{"chan": 1}]']
    )
    def test_bad_rules_fail_at_startup(self, raw: str) -> None:
        """A malformed SLACK_ROUTES is a configuration error naming the setting."""
        with pytest.raises(ConfigError, match="SLACK_ROUTES"):
            parse_routes(raw, None)
