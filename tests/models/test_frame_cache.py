"""`FrameCache`: the batches it serves equal the collated `LeRobotDataset.__getitem__` frames,
action chunks padded at episode ends included; what it cannot hold is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tether.datasets.rollouts import append_episode, rollout_features
from tether.models.frame_cache import FrameCache
from tether.models.language import FEATURE, Language
from tether.models.observation import CameraSpec

SIZE = 8
CAMERAS = (CameraSpec("agentview", (SIZE, SIZE), "image"),
           CameraSpec("robot0_eye_in_hand", (SIZE, SIZE), "image2"))
LANGUAGE = Language("hashing")
LENGTHS = (5, 7, 3)
CHUNK = 4


def frames(episode: int, n: int) -> list[dict]:
    """Frames with random images and the action `[episode, frame, 0, ...]`."""
    rng = np.random.default_rng(episode)
    task = f"put the bowl {episode} in the basket"
    return [{"observation.images.image": rng.integers(0, 256, (SIZE, SIZE, 3), np.uint8),
             "observation.images.image2": rng.integers(0, 256, (SIZE, SIZE, 3), np.uint8),
             "observation.state": rng.normal(size=8).astype(np.float32),
             "action": np.array([episode, i, 0, 0, 0, 0, 1], np.float32), "task": task,
             "tree.node": f"node {i}", FEATURE: LANGUAGE.vector(task)} for i in range(n)]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cache") / "demos"
    for episode, n in enumerate(LENGTHS):
        append_episode(root, frames(episode, n), episode != 1, rollout_features(CAMERAS, LANGUAGE))
    return root


def open_dataset(root: Path, **kw):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    return LeRobotDataset("tether/demos", root=root,
                          delta_timestamps={"action": [i / 20 for i in range(CHUNK)]}, **kw)


def test_a_batch_equals_the_collated_frames_of_the_dataset(root):
    import torch
    from torch.utils.data import default_collate

    dataset = open_dataset(root)
    cache = FrameCache(dataset)
    indices = [4, 0, 5, 11, 12, 14, 8]  # episode ends and starts, out of order
    ours, theirs = cache.batch(indices), default_collate([dataset[i] for i in indices])
    assert len(cache) == sum(LENGTHS)
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if isinstance(value, list):
            assert ours[key] == value, key
        else:
            assert (ours[key].dtype, ours[key].shape) == (value.dtype, value.shape), key
            assert torch.equal(ours[key], value), key


def test_a_chunk_at_an_episode_end_repeats_its_last_action_and_is_marked_padded(root):
    batch = FrameCache(open_dataset(root)).batch([3])  # episode 0's fourth of five frames
    assert batch["action"][0, :, :2].tolist() == [[0, 3], [0, 4], [0, 4], [0, 4]]
    assert batch["action_is_pad"][0].tolist() == [False, False, True, True]
    assert batch["task"] == ["put the bowl 0 in the basket"]
    assert batch["tree.node"] == ["node 3"]


def test_images_are_held_as_their_8_bit_values(root):
    import torch

    cache = FrameCache(open_dataset(root))
    pixels = cache.columns["observation.images.image2"]
    assert (pixels.dtype, tuple(pixels.shape)) == (torch.uint8, (sum(LENGTHS), 3, SIZE, SIZE))
    first = frames(0, 1)[0]["observation.images.image2"]
    assert pixels[0].permute(1, 2, 0).numpy().tolist() == first.tolist()


def test_an_episode_selection_is_refused(root):
    with pytest.raises(ValueError, match="whole datasets stored without videos"):
        FrameCache(open_dataset(root, episodes=[1]))
