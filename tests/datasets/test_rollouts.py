"""Rollouts as data (`tether/datasets/rollouts.py`): `tether run --record-dataset` and `tether
bench --record-dataset` append their episodes to one LeRobotDataset, read back with lerobot."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from tether.cli.main import app
from tether.scenes.robot import OPEN
from tether.trees.compiler import LIBRARY

TASK = "libero_goal/put_the_bowl_on_the_plate"
runner = CliRunner()


def test_appending_episodes_probes_no_video_decoder(tmp_path, caplog):
    """The datasets hold images only: reopening one per episode must not have lerobot look for
    torchcodec, which warns with a page of traceback each time where FFmpeg is missing."""
    import logging

    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from tether.datasets.rollouts import NODE, append_episode, rollout_features
    from tether.models.observation import CameraSpec

    wanted = rollout_features((CameraSpec("agentview", (8, 8), "image"),))
    frame = {"observation.images.image": np.zeros((8, 8, 3), np.uint8),
             "observation.state": np.zeros(8, np.float32), "action": np.zeros(7, np.float32),
             NODE: "", "task": "put the bowl on the plate"}
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            append_episode(tmp_path / "data", [frame, frame], False, wanted)
    assert not [r for r in caplog.records if r.name.startswith("lerobot")]
    assert LeRobotDataset("tether/data", root=tmp_path / "data").num_episodes == 2


@pytest.mark.slow
def test_run_and_bench_append_episodes_readable_with_lerobot(tmp_path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    data = tmp_path / "rollouts"
    idle = tmp_path / "idle.yaml"
    idle.write_text("root:\n  wait: 4\n", encoding="utf-8")
    ran = runner.invoke(app, ["run", str(idle), "--task", TASK, "--lines", "--no-record",
                              "--memory", "none", "--runs", str(tmp_path / "runs"),
                              "--record-dataset", str(data)])
    assert ran.exit_code == 1, ran.output
    assert f"dataset: 4 frames appended to {data}" in ran.output
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"""
suite: rollouts
budget: 50
tasks: [{TASK}]
arms:
  expert: {{tree: {LIBRARY / 'vla_bare.yaml'}, with: {{policy: expert, steps: 5}}}}
""", encoding="utf-8")
    benched = runner.invoke(app, ["bench", str(suite), "--workers", "1", "--out",
                                  str(tmp_path / "bench"), "--record-dataset", str(data)])
    assert benched.exit_code == 0, benched.output
    assert not list((tmp_path / "bench").rglob("rollout.npz"))  # appended, then removed

    dataset = LeRobotDataset("tether/rollouts", root=data)
    assert (dataset.num_episodes, dataset.num_frames) == (2, 9)
    frames = [dataset[i] for i in range(9)]
    assert [int(f["episode_index"]) for f in frames] == [0] * 4 + [1] * 5
    assert [f["tree.node"] for f in frames] == [""] * 4 + ["expert end to end"] * 5
    assert [bool(f["episode.success"]) for f in frames] == [False] * 9
    assert {f["task"] for f in frames} == {"put the bowl on the plate"}
    first = frames[0]
    assert first["observation.images.image"].shape == (3, 128, 128)
    assert first["observation.images.image2"].shape == (3, 128, 128)
    assert first["observation.state"].shape == (8,) and first["action"].shape == (7,)
    assert [float(f["action"][6]) for f in frames[:4]] == [OPEN] * 4  # holds keep it open
    moving = np.stack([f["action"][:3].numpy() for f in frames[4:]])
    assert np.abs(moving).max() > 0  # the expert's commands, not holds in place
