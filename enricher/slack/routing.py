"""Which Slack channel a page goes to: routing rules by service and severity, then a default."""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pydantic import BaseModel, ValidationError

from enricher.alert import Alert
from enricher.errors import ConfigError


class _RuleModel(BaseModel):
    model_config = {"extra": "forbid"}
    service: str = "*"
    severity: str = "*"
    channel: str


@dataclass(frozen=True)
class Rule:
    service: str
    severity: str
    channel: str

    def matches(self, alert: Alert) -> bool:
        return fnmatchcase((alert.service or "").lower(), self.service.lower()) and fnmatchcase(
            (alert.severity or "").lower(), self.severity.lower()
        )


@dataclass(frozen=True)
class Router:
    rules: tuple[Rule, ...]
    default: str | None

    def channel_for(self, alert: Alert) -> str | None:
        for rule in self.rules:
            if rule.matches(alert):
                return rule.channel
        return self.default


def parse_routes(raw: str, default: str | None) -> Router:
    """SLACK_ROUTES: `[{"service": "payments*", "severity": "critical", "channel": "C123"}]`."""
    try:
        data = json.loads(raw or "[]")
        if not isinstance(data, list):
            raise ValueError("expected a JSON list")
        rules = tuple(Rule(**_RuleModel.model_validate(item).model_dump()) for item in data)
    except (ValueError, ValidationError) as exc:
        raise ConfigError(
            f"SLACK_ROUTES is not a JSON list of {{service, severity, channel}} rules: {exc}"[:300]
        ) from None
    return Router(rules=rules, default=default)
