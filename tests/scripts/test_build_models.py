"""The model build prints one line per step; the libraries' chatter shows only on failure."""

from __future__ import annotations

import os

import pytest

from scripts.build_models import step


def test_a_step_is_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    """A progress bar and warnings written to either stream, by Python or below it, are
    held back when the step succeeds."""
    with step("exporting the model"):
        os.write(2, b"Loading weights: 100%|##########| 103/103\\n")
        print("UserWarning: torch.onnx.export ...")
    out, err = capfd.readouterr()
    assert (out, err) == ("models: exporting the model\n", "")


def test_a_failed_step_shows_what_was_held(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError), step("quantizing"):
        os.write(2, b"the reason it failed\n")
        raise RuntimeError("boom")
    out, err = capfd.readouterr()
    assert out == "models: quantizing\n"
    assert "the reason it failed" in err
