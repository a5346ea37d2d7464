"""`tether collect-perception` -> `tether train-perception` (2 steps, then resumed) -> the
checkpoint loaded behind the `Perception` protocol in a scene, through the CLI verbs as a user
runs them; and the verbs' errors on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tether.cli.main import app

runner = CliRunner()
TASK = "tether/put_the_middle_bowl_on_the_plate"


def tether(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    """Two init states (1 and 2) of one task, no perturbation but the always-on robot pose,
    64x64."""
    root = tmp_path_factory.mktemp("perception") / "seg"
    result = tether("collect-perception", TASK, "--init-states", "2", "--first-init-state", "1",
                    "--variant", "",
                    "--size", "64", "--out", str(root))
    assert result.exit_code == 0, result.output
    assert re.search(r"rendered 4 frames \(1 scenes built\)", result.output), result.output
    return root


@pytest.mark.slow
def test_collected_frames_carry_the_simulators_instance_labels(collected: Path):
    from tether.models.perception.dataset import load

    frames = load(collected)
    assert len(frames) == 4 and frames.rgb.shape == (4, 64, 64, 3)
    assert [r["camera"] for r in frames.records] == ["agentview", "robot0_eye_in_hand"] * 2
    assert [r["init_state"] for r in frames.records] == [1, 1, 2, 2]
    agent = frames.records[0]
    assert {i["entity"] for i in agent["instances"]} == {
        "akita_black_bowl_1", "akita_black_bowl_2", "akita_black_bowl_3", "plate_1"}
    bowl = frames.categories.index("akita_black_bowl") + 1
    for inst in agent["instances"]:  # every instance's pixels carry its category's label
        pixels = frames.instance[0] == inst["id"]
        assert pixels.any()
        assert (frames.category[0][pixels] == frames.categories.index(inst["category"]) + 1).all()
    # three bowls: three instance ids under one category label
    assert len(np.unique(frames.instance[0][frames.category[0] == bowl])) == 3


@pytest.mark.slow
def test_the_segmenter_trains_two_steps_resumes_and_loads_as_a_perception(collected: Path,
                                                                          tmp_path: Path):
    from tether.models.perception import perception_for
    from tether.models.perception.category_segmenter import CategorySegmenter
    from tether.scenes.libero_scene import LiberoScene

    out = tmp_path / "ckpt"
    result = tether("train-perception", str(collected), "--out", str(out), "--steps", "2",
                    "--batch-size", "2", "--width", "4", "--holdout", "2", "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "trained to step 2 (from 0)" in result.output
    result = tether("train-perception", str(collected), "--out", str(out), "--steps", "3",
                    "--batch-size", "2", "--width", "4", "--holdout", "2", "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "trained to step 3 (from 2)" in result.output
    training = json.loads((out / "training.json").read_text())
    assert training["report"]["frames"] == 2 and training["report"]["held_out"] == 2
    assert [s for s, _ in training["report"]["loss"]] == [1, 2, 3]
    card = (out / "README.md").read_text()
    assert "- steps: 3 at batch 2" in card and "akita_black_bowl" in card
    segmenter = CategorySegmenter.load(out)
    assert segmenter.config.size == (64, 64) and segmenter.config.width == 4
    assert segmenter.predict(np.zeros((64, 64, 3), np.uint8)).shape == (64, 64)
    perception = perception_for({"checkpoint": str(out)})
    scene = LiberoScene(TASK, init_state=0, seed=0)
    try:
        masks = perception.masks(scene, "agentview", (32, 32), ["akita_black_bowl_1", "plate_1"])
        assert set(masks) <= {"akita_black_bowl_1", "plate_1"}
        assert all(m.shape == (32, 32) and m.dtype == bool for m in masks.values())
    finally:
        scene.close()


def test_train_perception_on_a_folder_that_is_no_dataset_is_one_error_line(tmp_path: Path):
    result = tether("train-perception", str(tmp_path), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2
    assert result.stderr == (f"error: {tmp_path} is not a perception dataset (no meta.json); "
                             f"record one with `tether collect-perception`\n")


def test_collect_perception_into_an_existing_folder_is_one_error_line(tmp_path: Path):
    result = tether("collect-perception", TASK, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (f"error: {tmp_path} exists; collect-perception writes a new "
                             f"dataset (choose another --out)\n")


def test_a_checkpoint_perception_without_a_checkpoint_is_a_clear_error(tmp_path: Path):
    from tether.errors import TetherError
    from tether.models.perception import perception_for

    with pytest.raises(TetherError, match=r"has no config.json; train one with"):
        perception_for({"checkpoint": str(tmp_path)})
    with pytest.raises(TetherError, match=r"unknown option 'min_pixel'.*did you mean 'min_pixels'"):
        perception_for({"checkpoint": str(tmp_path), "min_pixel": 3})
