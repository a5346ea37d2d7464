"""tether's own perception model: its dataset format (`tether.models.perception.dataset`) and its
adapter behind the `Perception` protocol (`tether.models.perception.category_segmenter`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tether.errors import TetherError
from tether.models.perception import category_segmenter, perception_for
from tether.models.perception.dataset import SHARD_FRAMES, DatasetWriter, load, read_meta
from tether.scenes.projection import CameraGeometry

GEOMETRY = CameraGeometry("agentview", (8, 8), 8.0, np.zeros(3), np.eye(3))


def _square(rows: slice, cols: slice, size: int = 8) -> np.ndarray:
    mask = np.zeros((size, size), bool)
    mask[rows, cols] = True
    return mask


def _write(root: Path, masks: dict[str, np.ndarray], frames: int = 1, close: bool = True):
    writer = DatasetWriter(root, (8, 8))
    for i in range(frames):
        writer.add(np.full((8, 8, 3), i % 256, np.uint8), np.ones((8, 8)), GEOMETRY, masks,
                   {n: np.array([0.1, 0.2, 0.3]) for n in masks},
                   {"task": "t", "init_state": i, "variant": "none", "seed": 0})
    if close:
        writer.close()


def test_entities_become_category_and_instance_labels(tmp_path: Path):
    _write(tmp_path / "d", {"akita_black_bowl_1": _square(slice(0, 2), slice(0, 2)),
                            "plate_1": _square(slice(4, 6), slice(4, 6)),
                            "akita_black_bowl_2": _square(slice(0, 2), slice(6, 8))})
    frames = load(tmp_path / "d")
    assert frames.categories == ["akita_black_bowl", "plate"]
    assert frames.category[0, 0, 0] == 1 and frames.category[0, 0, 7] == 1
    assert frames.category[0, 5, 5] == 2 and frames.category[0, 3, 3] == 0
    assert (frames.instance[0, 0, 0], frames.instance[0, 5, 5], frames.instance[0, 0, 7]) == \
        (1, 2, 3)
    record = frames.records[0]
    assert [i["entity"] for i in record["instances"]] == ["akita_black_bowl_1", "plate_1",
                                                          "akita_black_bowl_2"]
    assert record["instances"][1]["centre"] == [0.1, 0.2, 0.3]
    assert record["geometry"]["focal"] == 8.0


def test_several_datasets_merge_their_categories(tmp_path: Path):
    _write(tmp_path / "a", {"plate_1": _square(slice(0, 2), slice(0, 2))})
    _write(tmp_path / "b", {"milk_1": _square(slice(0, 2), slice(0, 2)),
                            "plate_1": _square(slice(4, 6), slice(4, 6))})
    frames = load([tmp_path / "a", tmp_path / "b"])
    assert frames.categories == ["plate", "milk"]
    # b's milk (its label 1) is label 2 now, b's plate (its label 2) is label 1
    assert [frames.category[0, 0, 0], frames.category[1, 0, 0], frames.category[1, 5, 5]] == \
        [1, 2, 1]


def test_a_killed_collection_leaves_the_frames_of_its_written_shards(tmp_path: Path):
    _write(tmp_path / "d", {"plate_1": _square(slice(0, 2), slice(0, 2))},
           frames=SHARD_FRAMES + 3, close=False)
    frames = load(tmp_path / "d")
    assert len(frames) == SHARD_FRAMES
    assert json.loads((tmp_path / "d" / "meta.json").read_text())["frames"] == SHARD_FRAMES


def test_a_folder_that_is_no_dataset_is_a_clear_error(tmp_path: Path):
    with pytest.raises(TetherError, match="is not a perception dataset"):
        read_meta(tmp_path)
    (tmp_path / "meta.json").write_text('{"size": [8, 8], "categories": []}')
    with pytest.raises(TetherError, match="no 'records'"):
        read_meta(tmp_path)


class _Segmenter:
    """A stand-in for a loaded checkpoint: fixed category masks at 8x8."""

    config = category_segmenter.SegmenterConfig(("akita_black_bowl", "plate"), (8, 8), 4, 1)

    def category_masks(self, rgb):
        return {"akita_black_bowl": _square(slice(0, 2), slice(0, 2)) |
                _square(slice(4, 8), slice(4, 8)),
                "plate": _square(slice(0, 1), slice(6, 7))}  # 1 pixel: below min_pixels


class _Robot:
    def render(self, camera, size, draft=False):
        return np.zeros((*size, 3), np.uint8)


def test_a_categorys_components_go_to_its_entities_largest_first(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setattr(category_segmenter, "loaded", lambda path: _Segmenter())
    perception = perception_for({"checkpoint": str(tmp_path), "min_pixels": 2})
    masks = perception.masks(_Robot(), "agentview", (16, 16),
                             ["akita_black_bowl_2", "akita_black_bowl_1", "plate_1", "milk_1"])
    assert set(masks) == {"akita_black_bowl_2", "akita_black_bowl_1"}
    assert masks["akita_black_bowl_2"].sum() == 16 * 4  # the 4x4 component, at twice the size
    assert masks["akita_black_bowl_2"][8:, 8:].all()
    assert masks["akita_black_bowl_1"].sum() == 4 * 4 and masks["akita_black_bowl_1"][:4, :4].all()


def test_a_segmenter_config_the_network_cannot_take_is_a_clear_error():
    with pytest.raises(TetherError, match=r"must divide by 2\^levels \(8\)"):
        category_segmenter.SegmenterConfig(("plate",), (100, 100), 8, 3)


def test_the_batched_masks_are_each_frames_masks_without_the_ignored_pixels():
    import torch

    config = category_segmenter.SegmenterConfig(("akita_black_bowl", "plate", "ketchup"),
                                                (8, 8), 4, 1)

    class Brightest(torch.nn.Module):
        """Labels a pixel by its brightest channel (k: channel k - 1), background when none is
        above mid-grey."""

        def forward(self, x):
            return torch.cat([torch.zeros_like(x[:, :1]), x], dim=1)

    segmenter = category_segmenter.CategorySegmenter(config, Brightest())
    frames = np.random.default_rng(0).integers(0, 255, (3, 8, 8, 3), np.uint8)
    ignore = np.zeros((3, 8, 8), bool)
    ignore[0, :4], ignore[2] = True, True
    single = [segmenter.category_masks(f) for f in frames]
    batch = segmenter.category_masks_batch(frames, ignore)
    assert sorted(single[0]) == ["akita_black_bowl", "ketchup", "plate"]
    assert np.array_equal(single[0]["plate"], segmenter.predict(frames[0]) == 2)
    whole = segmenter.category_masks_batch(frames)
    assert [sorted(b) for b in whole] == [sorted(m) for m in single]
    assert all(np.array_equal(whole[k][c], m) for k in range(3) for c, m in single[k].items())
    assert batch[2] == {}  # all ignored
    assert [sorted(b) for b in batch[:2]] == [
        sorted(c for c, m in single[k].items() if (m & ~ignore[k]).any()) for k in (0, 1)]
    for k in (0, 1):
        for category, mask in batch[k].items():
            assert np.array_equal(mask, single[k][category] & ~ignore[k]), (k, category)


def test_a_scene_category_takes_the_pixels_of_a_look_alike_label_the_scene_has_no_object_of():
    """`black_bowl` and `akita_black_bowl` are both "black bowl": in a scene of black bowls the
    model's akita pixels are theirs; in a scene with both, each keeps its own; a label of
    another noun is never taken."""
    akita, black, plate = _square(slice(0, 2), slice(0, 2)), _square(slice(4, 6), slice(4, 6)), \
        _square(slice(6, 8), slice(0, 2))
    masks = {"akita_black_bowl": akita, "black_bowl": black, "plate": plate}
    only_black = category_segmenter.scene_masks(masks, ["black_bowl", "yellow_plate"])
    assert set(only_black) == {"black_bowl"}
    assert np.array_equal(only_black["black_bowl"], akita | black)
    both = category_segmenter.scene_masks(masks, ["akita_black_bowl", "black_bowl", "plate"])
    assert {c: m.sum() for c, m in both.items()} == {"akita_black_bowl": 4, "black_bowl": 4,
                                                      "plate": 4}
    assert category_segmenter.scene_masks({"popcorn": plate}, ["butter"]) == {}


@pytest.mark.slow
def test_the_committed_checkpoint_localizes_three_identical_bowls_of_a_held_out_init_state():
    """The committed segmenter's masks, fused over agent view and wrist, put each of three
    identical bowls within 1.5 cm of its body (init state 4 is held out of its training)."""
    from tether.models.perception.category_segmenter import CategorySegmenter
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.localization import Sighting, localize_instances
    from tether.scenes.observations import Observer

    checkpoint = Path(category_segmenter.__file__).parent.parent / "checkpoints" / "segmenter"
    segmenter = CategorySegmenter.load(checkpoint)
    scene = LiberoScene("tether/put_the_middle_bowl_on_the_plate", init_state=4, seed=0)
    observer = Observer(scene)
    try:
        sightings = []
        for camera in ("agentview", "robot0_eye_in_hand"):
            view = observer.observe(camera, segmenter.config.size, depth=True)
            sightings.append(Sighting.of(view, segmenter.category_masks(view.rgb)))
        bowls = localize_instances(sightings, "akita_black_bowl")
        truth = [scene.pose_of(f"akita_black_bowl_{i}").pos for i in (1, 2, 3)]
        assert len(bowls) == 3
        errors = sorted(min(np.linalg.norm(b.position[:2] - t[:2]) for b in bowls)
                        for t in truth)
        assert errors[-1] < 0.015, errors
    finally:
        observer.close()
        scene.close()
