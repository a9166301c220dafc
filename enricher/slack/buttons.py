"""The feedback buttons on a page's runbook cards (pure).

Each match card and each lead card ends with an `actions` block: "Right runbook" and
"Wrong runbook". Its `block_id` names the runbook (a digest of its doc id, unique in a
message because cards are one per document), and each button's `value` carries what a
vote records about the runbook: doc id, path and revision (`ButtonValue`). Slack posts a
click to /slack/interactions (enricher.feedback.intake); enricher.slack.votes writes the
line under the buttons that says who voted.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from enricher.result import Match

Verdict = Literal["right", "wrong"]
ACTIONS: dict[str, Verdict] = {"rbe_feedback_right": "right", "rbe_feedback_wrong": "wrong"}
ACTIONS_PREFIX = "rbe_feedback:"
#: Slack caps a button's value at 2000 characters.
VALUE_MAX = 2000


class ButtonValue(BaseModel):
    """What a button says about the runbook it votes on (short keys: the value is capped)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    doc_id: str = Field(alias="d", min_length=1, max_length=500)
    path: str = Field(alias="p", max_length=500)
    revision: str = Field(alias="r", max_length=100)

    def encode(self) -> str:
        """Compact JSON with `& < >` as escapes: runbook paths are attacker-reachable text,
        and a value is never shown, but no raw mention should sit anywhere in a message."""
        raw = json.dumps(self.model_dump(by_alias=True), separators=(",", ":"))
        return raw.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")

    @classmethod
    def decode(cls, value: str) -> ButtonValue | None:
        try:
            return cls.model_validate_json(value)
        except ValidationError:
            return None


def doc_tag(doc_id: str) -> str:
    return hashlib.sha256(doc_id.encode()).hexdigest()[:16]


def _button(text: str, action_id: str, value: str, style: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
        "style": style,
    }


def feedback_actions(match: Match) -> dict[str, Any] | None:
    """The two buttons for a card; None when the runbook's identity does not fit a value."""
    if not 0 < len(match.doc_id) <= 500 or len(match.path) > 500:
        return None
    value = ButtonValue.model_validate(
        {"d": match.doc_id, "p": match.path, "r": match.revision[:100]}
    )
    encoded = value.encode()
    if len(encoded) > VALUE_MAX:  # JSON escapes can grow non-ASCII text sixfold
        return None
    right, wrong = ACTIONS
    return {
        "type": "actions",
        "block_id": ACTIONS_PREFIX + doc_tag(match.doc_id),
        "elements": [
            _button("✔ Right runbook", right, encoded, "primary"),
            _button("✘ Wrong runbook", wrong, encoded, "danger"),
        ],
    }


__all__ = ["ACTIONS", "ACTIONS_PREFIX", "ButtonValue", "Verdict", "doc_tag", "feedback_actions"]
