"""`tether scenes list` and `tether scenes show` (argument errors; rendering is slow)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tether.cli.main import app

runner = CliRunner()


def test_list_shows_suites_own_tasks_and_every_perturbation():
    from tether.scenes.perturbations import REGISTRY

    result = runner.invoke(app, ["scenes", "list"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "libero_goal/put_the_bowl_on_the_plate" in result.output
    assert "tether/put_the_middle_bowl_on_the_plate" in result.output
    assert all(name in result.output for name in REGISTRY)


def test_show_rejects_an_unknown_perturbation_with_a_hint(tmp_path):
    result = runner.invoke(app, ["scenes", "show", "libero_goal/8", "-p", "glare",
                                 "-o", str(tmp_path / "f.png")])
    assert result.exit_code == 2
    assert "unknown perturbation 'glare'" in result.output


@pytest.mark.slow
def test_show_writes_a_captioned_png(tmp_path):
    from PIL import Image

    out = tmp_path / "f.png"
    result = runner.invoke(app, ["scenes", "show", "tether/stack_the_near_bowl_on_the_far_bowl",
                                 "-p", "noisy_instruction", "--size", "96", "-o", str(out)])
    assert result.exit_code == 0, result.output
    image = Image.open(out)
    assert image.width == 192 and image.height > 96
