"""`tether collect` -> `tether train` -> `LerobotPolicy` -> an action chunk in the scene, through
the CLI verbs as a user runs them, on the smallest dataset and model the verbs allow; and the
verbs' errors on bad input."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tether.cli.main import app

runner = CliRunner()
TASK = "libero_goal/put_the_bowl_on_the_plate"
INSTRUCTION = "pick up the black bowl"
SIZE = 16  # the smallest image `tether collect --size` accepts
EPISODES = 2
CHUNK = 4
STEPS = 2


def tether(*args: str):
    """Invoke `tether ARGS` in-process; the result has the exit code and the printed output."""
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> tuple[Path, int]:
    """A dataset recorded by `tether collect`, and the frame count the verb reported."""
    root = tmp_path_factory.mktemp("collect") / "grasp"
    result = tether("collect", TASK, "--episodes", str(EPISODES), "--size", str(SIZE),
                    "--out", str(root))
    assert result.exit_code == 0, result.output
    match = re.search(r"recorded (\d+) episodes \((\d+) frames", result.output)
    assert match and int(match[1]) == EPISODES, result.output
    return root, int(match[2])


@pytest.fixture(scope="module")
def trained(collected, tmp_path_factory) -> tuple[Path, str]:
    """A checkpoint written by `tether train` on the collected dataset, and its command."""
    out = tmp_path_factory.mktemp("train") / "act"
    args = ["train", str(collected[0]), "--out", str(out), "--steps", str(STEPS),
            "--batch-size", "4", "--chunk-size", str(CHUNK)]
    result = tether(*args)
    assert result.exit_code == 0, result.output
    assert f"trained to step {STEPS} (from 0)" in result.output
    return out, "tether " + " ".join(shlex.quote(a) for a in args)


@pytest.mark.slow
@pytest.mark.xdist_group("collect_train")
def test_collect_records_a_lerobot_dataset_of_expert_grasps(collected):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root, frames = collected
    dataset = LeRobotDataset(f"tether/{root.name}", root=root)
    assert dataset.num_episodes == EPISODES and dataset.num_frames == len(dataset) == frames
    assert sum(dataset.meta.episodes["length"]) == frames
    assert all(0 < n <= 100 for n in dataset.meta.episodes["length"])  # record_episode's cap
    features = {k: (v["dtype"], tuple(v["shape"])) for k, v in dataset.features.items()}
    assert features["observation.images.image2"] == ("image", (SIZE, SIZE, 3))  # the wrist
    assert features["observation.state"] == ("float32", (8,))
    assert features["action"] == ("float32", (7,))
    assert list(dataset.meta.tasks.index) == [INSTRUCTION]
    first = dataset[0]
    assert first["task"] == INSTRUCTION
    assert tuple(first["observation.images.image2"].shape) == (3, SIZE, SIZE)
    assert first["observation.images.image2"].std() > 0  # rendered, not a black frame
    gripper = np.array(dataset.hf_dataset["action"])[:, 6]
    assert gripper.min() < 0 < gripper.max()  # the expert opens, then closes on the object
    report = json.loads((root / "meta" / "tether_collect.json").read_text(encoding="utf-8"))
    assert (report["episodes"], report["frames"], report["tasks"]) == (EPISODES, frames, [TASK])


@pytest.mark.slow
@pytest.mark.xdist_group("collect_train")
def test_train_saves_a_checkpoint_with_a_model_card(collected, trained):
    out, command = trained
    assert {"config.json", "model.safetensors", "policy_preprocessor.json",
            "policy_postprocessor.json", "training.json", "README.md"} <= {
        p.name for p in out.iterdir()}
    report = json.loads((out / "training.json").read_text(encoding="utf-8"))["report"]
    assert report["steps"] == STEPS
    assert (report["episodes"], report["frames"]) == (EPISODES, collected[1])
    assert [s for s, _ in report["loss"]] == list(range(1, STEPS + 1))
    assert all(np.isfinite(v) and v > 0 for _, v in report["loss"])
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"- dataset: `{collected[0]}`: {EPISODES} episodes, {collected[1]} frames" in card
    assert f"- command: `{command}`" in card
    assert f"- steps: {STEPS} at batch 4" in card and f"chunk {CHUNK}" in card
    assert "- loss (mean over each interval): 1: " in card
    assert "![training loss](loss.png)" in card
    assert (out / "loss.png").read_bytes().startswith(b"\x89PNG")
    assert f"instructions: '{INSTRUCTION}'" in card


@pytest.mark.slow
@pytest.mark.xdist_group("collect_train")
def test_trained_checkpoint_loads_and_acts_in_the_scene(trained):
    import torch
    from lerobot.policies.act.modeling_act import ACTPolicy
    from safetensors.torch import load_file

    from tether.models.lerobot_policy import LerobotPolicy
    from tether.models.observation import CameraSpec, observe
    from tether.scenes.libero_scene import LiberoScene

    policy = LerobotPolicy(trained[0])
    assert isinstance(policy.model, ACTPolicy) and policy.n_action_steps == CHUNK
    assert policy.cameras == (CameraSpec("robot0_eye_in_hand", (SIZE, SIZE), "image2"),)
    saved, loaded = load_file(str(trained[0] / "model.safetensors")), policy.model.state_dict()
    assert saved and all(torch.equal(loaded[k].half(), v) for k, v in saved.items())

    scene = LiberoScene(TASK, init_state=0)
    try:
        obs = observe(scene, policy.cameras, INSTRUCTION)
        chunk = policy.infer(obs)
        assert chunk.shape == (CHUNK, 7) and np.all(np.isfinite(chunk))
        assert np.abs(chunk).max() < 10  # un-normalised into the recorded action range
        before = scene.eef_pose().pos.copy()
        for action in chunk:
            scene.step(np.clip(action, -1, 1))
        assert np.all(np.isfinite(scene.eef_pose().pos)) and not np.allclose(
            scene.eef_pose().pos, before)
    finally:
        scene.close()


@pytest.mark.slow
@pytest.mark.xdist_group("collect_train")
def test_train_with_a_batch_larger_than_the_dataset_is_a_clear_error(collected, tmp_path):
    result = tether("train", str(collected[0]), "--out", str(tmp_path / "ck"), "--steps", "1",
                    "--batch-size", str(collected[1] + 1))
    assert result.exit_code == 2
    assert f"has {collected[1]} frames, fewer than one batch" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "ck").exists()


@pytest.mark.parametrize("make", ["missing", "empty folder", "no episodes"])
def test_train_on_a_folder_that_is_not_a_dataset_is_a_clear_error(tmp_path, make):
    folder = tmp_path / "data"
    if make != "missing":
        folder.mkdir()
    if make == "no episodes":  # what an interrupted recording's metadata says
        (folder / "meta").mkdir()
        (folder / "meta" / "info.json").write_text('{"total_episodes": 0, "fps": 20}')
    result = tether("train", str(folder), "--out", str(tmp_path / "ck"), "--steps", "1")
    assert result.exit_code == 2
    expected = "has no episodes" if make == "no episodes" else "is not a LeRobotDataset"
    assert f"error: {folder} {expected}" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "ck").exists()


def test_collect_unknown_task_is_a_located_error_and_writes_nothing(tmp_path):
    out = tmp_path / "grasp"
    result = tether("collect", TASK, "libero_goal/put_the_bowl_on_the_plat", "--episodes", "1",
                    "--out", str(out))
    assert result.exit_code == 2
    assert ("suite 'libero_goal' has no task 'put_the_bowl_on_the_plat' (did you mean "
            "'put_the_bowl_on_the_plate'?)") in result.output
    assert "Traceback" not in result.output
    assert not out.exists()  # the same command, corrected, can be rerun


def test_collect_from_an_init_state_a_task_lacks_is_a_located_error_and_writes_nothing(tmp_path):
    out = tmp_path / "grasp"
    result = tether("collect", TASK, "--episodes", "1", "--first-init-state", "50",
                    "--out", str(out))
    assert result.exit_code == 2
    assert f"error: {TASK} has initial states 0..49, not 50" in result.output
    assert not out.exists()
