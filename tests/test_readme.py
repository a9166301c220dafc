"""The README's examples work as written: its Alertmanager config passes amtool."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from enricher.settings import Settings

README = Path(__file__).resolve().parent.parent / "README.md"
RULES = Path(__file__).resolve().parent.parent / "docs" / "enricher-alerts.yml"


def settings_table() -> set[str]:
    """The variables named in the first column of the README's settings table."""
    section = README.read_text().split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z0-9_]+)`", row.split("|")[1])}


def alertmanager_config() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.DOTALL)
    configs = [b for b in blocks if "webhook_configs" in b]
    assert len(configs) == 1, "expected one Alertmanager config in README.md"
    return str(configs[0])


class TestReadme:
    def test_alertmanager_config_passes_amtool(self, tmp_path: Path) -> None:
        """`amtool check-config` accepts the README's alertmanager.yml, max_alerts included."""
        amtool = shutil.which("amtool")
        if amtool is None:
            pytest.fail("amtool is not installed (Debian's prometheus-alertmanager): make setup")
        config = alertmanager_config()
        assert "max_alerts:" in config
        path = tmp_path / "alertmanager.yml"
        path.write_text(config)
        done = subprocess.run(
            [amtool, "check-config", str(path)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def test_rejections_have_an_alert_rule(self) -> None:
        """docs/enricher-alerts.yml covers rejected webhooks."""
        rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
        exprs = [r["expr"] for r in rules]
        assert any("rbe_webhooks_rejected_total" in e for e in exprs)

    def test_every_setting_is_in_the_settings_table(self) -> None:
        """A setting the README does not list is one nobody can find."""
        missing = [f.upper() for f in Settings.model_fields if f.upper() not in settings_table()]
        assert missing == []
