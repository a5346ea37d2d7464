"""`tether scenes list|show` and `tether tasks` (argument errors; rendering is slow)."""

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


def test_tasks_libero_pro_lists_each_official_set_with_its_counts_and_step_cap():
    result = runner.invoke(app, ["tasks", "libero_pro"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:5] for line in result.output.splitlines() if "libero_" in line]
    table = {r[0].strip(): tuple(c.strip() for c in r[1:]) for r in rows}
    assert len(table) == 25
    assert table["libero_goal_swap"] == ("10", "50 each", "300")
    assert table["libero_spatial_with_milk"] == ("10", "10 each", "220")
    assert table["libero_10_lan"] == ("10", "50 each", "520")


def test_tasks_of_one_set_lists_its_ten_tasks():
    result = runner.invoke(app, ["tasks", "libero_goal_lan"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.output.count("libero_goal_lan/") == 10
    # the instruction column, its cells' wrapped lines joined (the width may not be the one asked)
    rows = [line.split("│") for line in result.output.splitlines() if line.count("│") == 4]
    instructions = " ".join(" ".join(row[3] for row in rows).split())
    assert "place the bowl on top of the plate" in instructions


def test_tasks_of_an_unknown_set_is_one_error_line():
    result = runner.invoke(app, ["tasks", "libero_goal_swp"])
    assert result.exit_code == 2
    assert "did you mean 'libero_goal_swap'?" in result.output
    assert "Traceback" not in result.output
