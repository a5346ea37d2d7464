"""`train_segmenter` on a small synthetic perception dataset (no simulator): the checkpoint
folder's files and state, resuming, and a run interrupted between saves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tether.models.perception.dataset import DatasetWriter
from tether.models.perception.training import SegmenterTrainConfig, train_segmenter
from tether.scenes.projection import CameraGeometry


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Ten 16x16 frames of random pixels with a plate in the same place; init states 5-14."""
    root = tmp_path_factory.mktemp("seg") / "data"
    writer = DatasetWriter(root, (16, 16), info={"collect": {
        "tasks": ["tether/0"], "init_states": 10, "first_init_state": 5, "variants": [""],
        "cameras": ["agentview"], "always": "robot_init_pose:scale=0.3"}})
    geometry = CameraGeometry("agentview", (16, 16), 16.0, np.zeros(3), np.eye(3))
    rng = np.random.default_rng(0)
    plate = np.zeros((16, 16), bool)
    plate[2:8, 3:9] = True
    for i in range(10):
        writer.add(rng.integers(0, 255, (16, 16, 3), np.uint8), np.ones((16, 16)), geometry,
                   {"plate_1": plate}, {"plate_1": np.zeros(3)}, {"init_state": 5 + i})
    writer.close()
    return root


def config(dataset: Path, out: Path, steps: int) -> SegmenterTrainConfig:
    return SegmenterTrainConfig([dataset], out, steps=steps, batch_size=2, crop=8, width=4,
                                levels=1, save_every=2, threads=1)


def test_a_run_resumes_from_its_folder_with_the_same_files(dataset, tmp_path):
    out = tmp_path / "ck"
    first = train_segmenter(config(dataset, out, 3))
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", "config.json", "loss.png", "state.pt", "training.json", "weights.pt"]
    state = torch.load(out / "state.pt", weights_only=False)
    assert sorted(state) == ["config", "loss", "model", "optimiser", "seconds", "step"]
    assert (state["step"], state["loss"]) == (3, first.loss)
    second = train_segmenter(config(dataset, out, 5))
    assert (first.steps, first.resumed_from, second.steps, second.resumed_from) == (3, 0, 5, 3)
    assert [s for s, _ in second.loss] == [1, 2, 3, 4, 5] and second.loss[:3] == first.loss
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "from tether/0: init states 5-14, variants none" in card
    assert "(resumed a run saved at step 3)" in card
    assert "![training loss](loss.png)" in card
    assert (out / "loss.png").read_bytes().startswith(b"\x89PNG")


def test_an_interrupted_run_keeps_its_last_step(dataset, tmp_path):
    def progress(step: int, loss: float) -> None:
        if step == 3:
            raise KeyboardInterrupt

    out = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt):
        train_segmenter(config(dataset, out, 10), progress=progress)
    assert torch.load(out / "state.pt", weights_only=False)["step"] == 3
    assert "- steps: 3 at batch 2" in (out / "README.md").read_text(encoding="utf-8")
