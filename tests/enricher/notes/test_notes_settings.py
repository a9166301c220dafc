"""PAGERDUTY_NOTES and its defaults (enricher.settings)."""

from __future__ import annotations

import pytest

from enricher.errors import ConfigError
from enricher.settings import load_settings


class TestNotesSettings:
    def test_off_without_a_token_and_matched_with_one(self) -> None:
        assert load_settings().pagerduty_notes_mode == "off"
        assert load_settings(pagerduty_api_token="k").pagerduty_notes_mode == "matched"
        on = load_settings(pagerduty_api_token="k", pagerduty_notes="all")
        assert on.pagerduty_notes_mode == "all"
        assert on.pagerduty_api_url == "https://api.pagerduty.com"

    def test_notes_without_a_token_fail_at_startup_saying_what_to_set(self) -> None:
        with pytest.raises(ConfigError, match="PAGERDUTY_API_TOKEN"):
            load_settings(pagerduty_notes="matched")

    def test_empty_values_are_unset(self) -> None:
        settings = load_settings(pagerduty_api_token="", pagerduty_notes="", pagerduty_from="")
        assert settings.pagerduty_notes_mode == "off" and settings.pagerduty_from is None

    def test_a_bad_mode_names_the_choices(self) -> None:
        with pytest.raises(ConfigError, match="PAGERDUTY_NOTES"):
            load_settings(pagerduty_api_token="k", pagerduty_notes="sometimes")
