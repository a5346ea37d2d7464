"""Rollout datasets without a simulator (`tether/datasets/rollouts.py`): the hand-over file of a
bench worker, appending to a dataset, and folders that cannot take rollouts."""

from __future__ import annotations

import numpy as np
import pytest

from tether.datasets.rollouts import (
    CAMERAS,
    append_episode,
    check_target,
    load_frames,
    save_frames,
)
from tether.errors import TetherError


def frames(n: int, node: str) -> list[dict]:
    return [{**{f"observation.images.{c.key}": np.full((*c.size, 3), i, np.uint8)
                for c in CAMERAS},
             "observation.state": np.full(8, i, np.float32),
             "action": np.full(7, -i, np.float32), "task": "put the bowl on the plate",
             "tree.node": node} for i in range(n)]


def test_a_workers_frames_survive_the_hand_over_file(tmp_path):
    kept = frames(3, "grasp")
    save_frames(tmp_path / "rollout.npz", kept)
    back = load_frames(tmp_path / "rollout.npz")
    assert [f["task"] for f in back] == ["put the bowl on the plate"] * 3
    assert [str(f["tree.node"]) for f in back] == ["grasp"] * 3
    assert all(np.array_equal(a[k], b[k]) for a, b in zip(kept, back, strict=True)
               for k in a if k != "task")


def test_episodes_append_and_read_back(tmp_path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = tmp_path / "data"
    append_episode(root, frames(2, ""), False)
    append_episode(root, frames(3, "grasp"), True)
    dataset = LeRobotDataset("tether/data", root=root)
    assert (dataset.num_episodes, dataset.num_frames) == (2, 5)
    rows = [dataset[i] for i in range(5)]
    assert [(int(r["episode_index"]), r["tree.node"], bool(r["episode.success"]))
            for r in rows] == [(0, "", False), (0, "", False), (1, "grasp", True),
                               (1, "grasp", True), (1, "grasp", True)]
    assert [float(r["action"][0]) for r in rows] == [0.0, -1.0, 0.0, -1.0, -2.0]


def test_a_folder_that_is_not_a_dataset_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        check_target(tmp_path)
    assert str(caught.value) == (f"{tmp_path} exists and is not a LeRobotDataset; give "
                                 "--record-dataset a new folder or one tether recorded")
    check_target(tmp_path / "new")  # a new folder is fine


def test_a_dataset_with_other_features_is_refused(tmp_path):
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "info.json").write_text('{"features": {"action": {"dtype": '
                                                 '"float32"}}}', encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        check_target(tmp_path)
    assert str(caught.value) == (f"{tmp_path} is a LeRobotDataset with other features; give "
                                 "--record-dataset a new folder or one tether recorded")


def test_run_refuses_a_bad_dataset_folder_before_the_episode(tmp_path):
    from typer.testing import CliRunner

    from tether.cli.main import app
    from tether.trees.compiler import LIBRARY

    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(LIBRARY / "pick_place.yaml"), "--task",
                                      "libero_goal/8", "--record-dataset", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: {tmp_path} exists and is not a LeRobotDataset; "
                                     "give --record-dataset a new folder or one tether recorded")
