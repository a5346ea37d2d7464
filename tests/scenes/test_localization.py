"""`tether.scenes.projection` and `tether.scenes.localization`: depth back-projected to world
points, robust estimates, identical copies kept apart, and 'not found' instead of a guess."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes.localization import (
    Cloud,
    LocalizeConfig,
    NotFound,
    Sighting,
    estimate,
    localize,
    localize_instances,
)
from tether.scenes.projection import CameraGeometry

# a camera 1 m above the origin looking straight down (its -z is the world's -z), x right
DOWN = CameraGeometry("top", (64, 64), 64.0, np.array([0.0, 0.0, 1.0]), np.eye(3))


def test_back_projection_inverts_projection_of_known_points():
    rotation = np.linalg.qr(np.array([[0.2, 0.9, 0.1], [0.9, -0.1, 0.3], [0.1, 0.4, -0.9]]))[0]
    side = CameraGeometry("side", (48, 64), 50.0, np.array([1.0, -0.5, 0.8]), rotation)
    rows, cols = np.array([3, 20, 47]), np.array([0, 31, 63])
    depth = np.zeros((48, 64), np.float32)
    depth[rows, cols] = [0.5, 1.25, 2.0]
    points = side.back_project(depth)
    pixels, ahead = side.project(points)
    # sorted row-major like np.nonzero: each point comes back to its pixel centre and depth
    assert np.allclose(pixels, np.stack([cols + 0.5, rows + 0.5], axis=1))
    assert np.allclose(ahead, [0.5, 1.25, 2.0])


def test_the_image_centre_at_depth_d_is_d_along_the_view_axis():
    depth = np.full((64, 64), 0.75, np.float32)
    mask = np.zeros((64, 64), bool)
    mask[31:33, 31:33] = True  # the four pixels around the principal point
    points = DOWN.back_project(depth, mask)
    assert np.allclose(points.mean(axis=0), [0.0, 0.0, 0.25])
    # one pixel to the right is x + d / f, the row below is y - d / f (rows go down)
    assert np.allclose(points[1] - points[0], [0.75 / 64, 0.0, 0.0])
    assert np.allclose(points[2] - points[0], [0.0, -0.75 / 64, 0.0])


def test_depth_of_another_size_is_a_clear_error():
    with pytest.raises(TetherError, match=r"does not match camera 'top' at \(64, 64\)"):
        DOWN.back_project(np.ones((32, 32)))


def _blob(rows: slice, cols: slice) -> np.ndarray:
    mask = np.zeros((64, 64), bool)
    mask[rows, cols] = True
    return mask


def test_identical_copies_of_one_label_are_kept_apart_and_views_fused():
    depth = np.full((64, 64), 0.9, np.float32)  # a table 10 cm above the origin
    left, right = _blob(slice(20, 30), slice(5, 15)), _blob(slice(20, 30), slice(45, 55))
    agent = Sighting(DOWN, depth, {"bowl": left | right})
    shifted = CameraGeometry("wrist", (64, 64), 64.0, np.array([0.0, 0.0, 1.0]), np.eye(3))
    wrist = Sighting(shifted, depth, {"bowl": right})  # a second view of the right copy only
    found = localize_instances([agent, wrist], "bowl")
    assert len(found) == 2
    first, second = found  # most points first: the right copy, seen twice
    assert first.cameras == ("top", "wrist") and second.cameras == ("top",)
    assert first.points == 2 * 64 and second.points == 64  # 10x10 eroded by 1 pixel: 8x8
    assert np.allclose(first.position, [(50 - 32) * 0.9 / 64, (32 - 25) * 0.9 / 64, 0.1])
    assert np.allclose(second.position, [(10 - 32) * 0.9 / 64, (32 - 25) * 0.9 / 64, 0.1])


def test_copies_touching_in_every_view_are_split_when_the_scene_holds_more_of_them():
    depth = np.full((64, 64), 0.9, np.float32)
    pair = _blob(slice(20, 30), slice(10, 20)) | _blob(slice(20, 30), slice(20, 30))  # touching
    sight = [Sighting(DOWN, depth, {"bowl": pair})]
    assert len(localize_instances(sight, "bowl")) == 1  # one piece: one object
    halves = localize_instances(sight, "bowl", count=2)
    pixel = 0.9 / 64  # the table's depth over the focal length
    middles = sorted(float(h.position[0]) / pixel for h in halves)
    assert middles == pytest.approx([-17.0, -7.0], abs=0.6)  # columns 10-19 and 20-29
    square = [Sighting(DOWN, depth, {"bowl": _blob(slice(20, 35), slice(10, 25))})]
    assert len(localize_instances(square, "bowl", count=2)) == 1  # the other copy is hidden


def test_pieces_an_occluder_cuts_apart_are_joined_when_the_scene_holds_fewer_copies():
    depth = np.full((64, 64), 0.9, np.float32)  # a pixel is 1.4 cm on the table
    config = LocalizeConfig(erode=0, merge=0.05)
    # one copy cut in two by something 2 columns (3 cm) wide in front of it, the other apart
    cut = _blob(slice(20, 30), slice(4, 12)) | _blob(slice(20, 30), slice(14, 22))
    far = _blob(slice(20, 30), slice(45, 55))
    sight = [Sighting(DOWN, depth, {"plate": cut | far})]
    assert len(localize_instances(sight, "plate", config)) == 3  # not told how many there are
    whole, other = localize_instances(sight, "plate", config, count=2)
    pixel = 0.9 / 64
    assert whole.points == 160 and other.points == 100  # both pieces (8x10 each)
    assert whole.upper[0] - whole.lower[0] > 16 * pixel  # spans the gap
    assert other.position[0] / pixel == pytest.approx(17.5, abs=0.6)
    # pieces farther apart than `merge` stay apart: not one object
    apart = _blob(slice(20, 30), slice(4, 12)) | _blob(slice(20, 30), slice(20, 28))
    assert len(localize_instances([Sighting(DOWN, depth, {"plate": apart | far})], "plate",
                                  config, count=2)) == 3


def test_a_copy_in_front_of_another_is_cut_where_depth_jumps_when_copies_are_missing():
    # two boxes touching in the image, one 12 cm taller: one connected piece of the mask
    depth, low = _on_table(0.15, slice(20, 30), slice(10, 20))
    tall, high = _on_table(0.27, slice(20, 30), slice(20, 30))
    depth = np.where(high, tall, depth).astype(np.float32)
    sight = [Sighting(DOWN, depth, {"bowl": low | high})]
    config = LocalizeConfig(erode=0, low=0, high=100, gap=0.02)
    assert len(localize_instances(sight, "bowl", config)) == 1  # not told there are two
    found = localize_instances(sight, "bowl", config, count=2)
    assert sorted(round(float(f.upper[2]), 3) for f in found) == [0.15, 0.27]
    assert all(f.points == 100 for f in found)


def test_a_few_stray_pixels_are_no_copy_and_do_not_join_two_copies():
    depth = np.full((64, 64), 0.9, np.float32)  # a pixel is 1.4 cm on the table
    two = _blob(slice(20, 30), slice(10, 20)) | _blob(slice(20, 30), slice(22, 32))  # 4 cm apart
    stray = _blob(slice(55, 57), slice(55, 58))  # 6 mislabelled pixels far away
    sight = [Sighting(DOWN, depth, {"bowl": two | stray})]
    config = LocalizeConfig(erode=0, stray=0.1)
    found = localize_instances(sight, "bowl", config, count=2)
    assert [f.points for f in found] == [100, 100]  # the copies, apart; the stray dropped
    # without a stray share the stray is kept as a copy and the two copies are joined
    joined = localize_instances(sight, "bowl", LocalizeConfig(erode=0), count=2)
    assert sorted(f.points for f in joined) == [6, 200]


def test_an_instance_label_cut_in_two_by_occlusion_is_one_object():
    depth = np.full((64, 64), 0.9, np.float32)
    cut = _blob(slice(20, 30), slice(10, 20)) | _blob(slice(20, 30), slice(24, 34))
    found = localize([Sighting(DOWN, depth, {"plate_1": cut})], ["plate_1"])["plate_1"]
    assert found.found and found.points == 128
    assert np.allclose(found.position[:2], [(22 - 32) * 0.9 / 64, (32 - 25) * 0.9 / 64])


def test_an_object_no_view_shows_is_not_found_never_guessed():
    depth = np.full((64, 64), 0.9, np.float32)
    tiny = _blob(slice(5, 6), slice(5, 7))  # 2 pixels: fewer than min_pixels
    no_depth = np.where(_blob(slice(0, 64), slice(0, 32)), 0.0, depth).astype(np.float32)
    sightings = [Sighting(DOWN, depth, {"cup_1": tiny}),
                 Sighting(DOWN, no_depth, {"mug_1": _blob(slice(10, 20), slice(5, 15))})]
    out = localize(sightings, ["cup_1", "mug_1", "bowl_1"])
    assert all(isinstance(r, NotFound) and not r.found for r in out.values())
    assert out["bowl_1"].reason == "'bowl_1' is not seen (enough) by top, top"
    assert localize_instances(sightings, "bowl_1") == []


def _on_table(top: float, rows: slice, cols: slice) -> tuple[np.ndarray, np.ndarray]:
    """A depth image of DOWN over a table 10 cm above the origin with a box whose top is at
    height `top` over the pixels `rows` x `cols`, and the box's mask."""
    mask = _blob(rows, cols)
    return np.where(mask, 1.0 - top, 0.9).astype(np.float32), mask


def test_without_erosion_a_thin_mask_keeps_its_width():
    depth, mask = _on_table(0.2, slice(20, 40), slice(30, 35))  # 5 pixels wide
    pixel = 0.8 / 64
    for erode, width in ((1, 3), (0, 5)):  # erosion takes 2 of a thin object's 5 pixels
        config = LocalizeConfig(erode=erode, low=0, high=100)
        found = localize([Sighting(DOWN, depth, {"bottle_1": mask})], ["bottle_1"], config)
        side = found["bottle_1"].upper - found["bottle_1"].lower
        assert side[0] == pytest.approx((width - 1) * pixel)  # between the pixel centres


def test_points_across_a_gap_in_depth_behind_or_in_front_are_dropped():
    depth, mask = _on_table(0.2, slice(20, 30), slice(20, 30))
    bled = mask | _blob(slice(30, 32), slice(20, 30))  # the mask takes in two rows of table
    config = LocalizeConfig(erode=0, low=0, high=100, gap=0.05)
    found = localize([Sighting(DOWN, depth, {"box_1": bled})], ["box_1"], config)["box_1"]
    assert found.points == 100 and found.lower[2] == pytest.approx(0.2)
    kept = localize([Sighting(DOWN, depth, {"box_1": bled})], ["box_1"],
                    LocalizeConfig(erode=0, low=0, high=100))["box_1"]
    assert kept.points == 120 and kept.lower[2] == pytest.approx(0.1)
    # a finger 10 cm above the box, at the mask's edge, is not the box either
    depth[20:22, 20:30] = 0.7
    above = localize([Sighting(DOWN, depth, {"box_1": mask})], ["box_1"], config)["box_1"]
    assert above.points == 80 and above.upper[2] == pytest.approx(0.2)


def test_small_pieces_apart_from_the_rest_are_dropped_large_ones_kept():
    depth, box = _on_table(0.2, slice(20, 30), slice(20, 30))
    stray = _blob(slice(24, 26), slice(33, 34))  # 2 pixels on something as high, 3 columns off
    depth[stray] = depth[box][0]
    config = LocalizeConfig(erode=0, low=0, high=100, gap=0.02, stray=0.1)
    found = localize([Sighting(DOWN, depth, {"box_1": box | stray})], ["box_1"], config)
    assert found["box_1"].points == 100 and found["box_1"].upper[0] < 0
    kept = localize([Sighting(DOWN, depth, {"box_1": box | stray})], ["box_1"],
                    LocalizeConfig(erode=0, low=0, high=100, gap=0.02))["box_1"]
    assert kept.points == 102 and kept.upper[0] > 0
    halves = box & ~_blob(slice(20, 30), slice(25, 26))  # an occluder's pole cuts it in two
    assert localize([Sighting(DOWN, depth, {"box_1": halves})], ["box_1"],
                    config)["box_1"].points == 90


def test_a_surface_sloping_away_without_a_gap_is_kept_whole():
    depth = np.tile(np.linspace(0.7, 0.9, 64, dtype=np.float32)[:, None], (1, 64))  # 3 mm a row
    mask = _blob(slice(0, 64), slice(20, 30))
    config = LocalizeConfig(erode=0, low=0, high=100, gap=0.02)
    assert localize([Sighting(DOWN, depth, {"ramp_1": mask})], ["ramp_1"],
                    config)["ramp_1"].points == 640


def test_the_bottom_reaches_the_surface_seen_around_the_mask_when_it_is_near():
    depth, mask = _on_table(0.2, slice(20, 30), slice(20, 30))  # only the top at 0.2 is seen
    sighting = Sighting(DOWN, depth, {"box_1": mask})
    near = LocalizeConfig(erode=0, low=0, high=100, support=0.15)
    found = localize([sighting], ["box_1"], near)["box_1"]
    assert found.lower[2] == pytest.approx(0.1) and found.upper[2] == pytest.approx(0.2)
    assert found.position[2] == pytest.approx(0.15)
    # a surface farther under the lowest point than `support` (a lifted object) is not its own
    far = localize([sighting], ["box_1"], LocalizeConfig(erode=0, low=0, high=100, support=0.05))
    assert far["box_1"].lower[2] == pytest.approx(0.2)


def _half_ring(radius: float, centre: tuple[float, float], view: np.ndarray,
               heights: np.ndarray) -> Cloud:
    """The side of a vertical cylinder a camera looking along `view` sees: the near half, at
    each of `heights`."""
    angles = np.linspace(-np.pi / 2, np.pi / 2, 181)
    across = np.array([-view[1], view[0]])
    xy = (np.array(centre) - radius * np.cos(angles)[:, None] * view
          + radius * np.sin(angles)[:, None] * across)
    points = np.concatenate([np.column_stack([xy, np.full(len(xy), z)]) for z in heights])
    return Cloud("side", points, points[:0], view, pixel=0.01)


def test_the_hidden_far_half_of_a_tall_round_footprint_is_completed():
    view = np.array([1.0, 0.0])  # the camera looks along +x
    body = _half_ring(0.02, (0.5, 0.1), view, np.linspace(0.90, 0.95, 6))  # 4 cm wide
    neck = _half_ring(0.006, (0.5, 0.1), view, np.linspace(0.96, 0.98, 3))  # a bottle, 8 cm tall
    cloud = Cloud("side", np.concatenate([body.points, neck.points]), body.around, view, 0.01)
    config = LocalizeConfig(erode=0, low=0, high=100)
    seen = estimate("bottle_1", [cloud], config)
    assert seen.position[0] == pytest.approx(0.49)  # the near half: 1 cm toward the camera
    done = estimate("bottle_1", [cloud], LocalizeConfig(erode=0, low=0, high=100, far_side=True))
    assert np.allclose(done.lower[:2], [0.48, 0.08]) and np.allclose(done.upper[:2], [0.52, 0.12])
    assert np.allclose(done.position, [0.5, 0.1, 0.94])


def test_a_low_object_or_one_seen_as_deep_as_it_is_wide_is_not_completed():
    view = np.array([1.0, 0.0])
    config = LocalizeConfig(erode=0, low=0, high=100, far_side=True)
    low = estimate("can_1", [_half_ring(0.02, (0.5, 0.1), view, np.array([0.9, 0.93]))], config)
    assert low.lower[0] == pytest.approx(0.48) and low.upper[0] == pytest.approx(0.5)
    x, y = np.meshgrid(np.linspace(0.4, 0.5, 11), np.linspace(0.0, 0.06, 7))
    top = np.column_stack([x.ravel(), y.ravel(), np.full(x.size, 0.93)])  # a whole top face
    found = estimate("book_1", [Cloud("side", top, top[:0], view, pixel=0.01)], config)
    assert np.allclose(found.lower, [0.4, 0.0, 0.93]) and np.allclose(found.upper,
                                                                       [0.5, 0.06, 0.93])


def test_a_tall_object_whose_top_shows_its_far_side_is_not_completed():
    """A mug seen from above: its handle makes it wider than its near wall is deep, but its
    rim, near and far, shows how deep it is."""
    view = np.array([1.0, 0.0])
    wall = _half_ring(0.04, (0.5, 0.1), view, np.linspace(0.90, 1.02, 13)).points  # 12 cm
    angles = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    rim = np.column_stack([0.5 + 0.04 * np.cos(angles), 0.1 + 0.04 * np.sin(angles),
                           np.full(90, 1.03)])
    handle = np.column_stack([np.full(5, 0.5), np.linspace(0.14, 0.17, 5), np.full(5, 0.96)])
    points = np.concatenate([wall, rim, handle])
    mug = estimate("mug_1", [Cloud("side", points, points[:0], view, pixel=0.01)],
                   LocalizeConfig(erode=0, low=0, high=100, far_side=True))
    assert np.allclose(mug.lower[:2], [0.46, 0.06]) and np.allclose(mug.upper[:2], [0.54, 0.17])


def test_pad_grows_the_box_by_half_a_pixel_on_each_horizontal_side():
    depth, mask = _on_table(0.2, slice(20, 30), slice(20, 30))
    config = LocalizeConfig(erode=0, low=0, high=100, pad=True)
    found = localize([Sighting(DOWN, depth, {"box_1": mask})], ["box_1"], config)["box_1"]
    pixel = 0.8 / 64  # the box's top is 0.8 m from the camera
    assert np.allclose(found.upper - found.lower, [10 * pixel, 10 * pixel, 0.0])


def test_absurd_settings_are_a_clear_error():
    with pytest.raises(TetherError, match="low < high"):
        LocalizeConfig(low=60, high=40)
    with pytest.raises(TetherError, match="merge > 0"):
        LocalizeConfig(merge=0)
    with pytest.raises(TetherError, match="support >= 0"):
        LocalizeConfig(support=-0.01)
    with pytest.raises(TetherError, match="0 <= stray < 1"):
        LocalizeConfig(stray=1.5)


@pytest.mark.slow
def test_privileged_masks_localize_known_bodies_and_keep_three_bowls_apart():
    """The geometry alone: the simulator's masks, agentview + wrist RGB-D at 128x128, checked
    against the bodies' true positions."""
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.observations import Observer

    scene = LiberoScene("tether/put_the_middle_bowl_on_the_plate", init_state=0, seed=0)
    observer = Observer(scene)
    try:
        sightings = [Sighting.of(observer.observe(c, (128, 128), depth=True, segmentation=True))
                     for c in ("agentview", "robot0_eye_in_hand")]
        bowls = [f"akita_black_bowl_{i}" for i in (1, 2, 3)]
        found = localize(sightings, [*bowls, "plate_1", "basket_1"])
        assert isinstance(found["basket_1"], NotFound)
        for name in [*bowls, "plate_1"]:
            truth = scene.pose_of(name).pos
            assert found[name].cameras == ("agentview", "robot0_eye_in_hand")
            assert np.linalg.norm(found[name].position[:2] - truth[:2]) < 0.01, name
            lower, upper = scene.extent_of(name)
            assert np.linalg.norm(found[name].position - (lower + upper) / 2) < 0.01, name
        one_label = [Sighting(s.geometry, s.depth,
                              {"bowl": np.any([s.masks[b] for b in bowls], axis=0)})
                     for s in sightings]
        copies = localize_instances(one_label, "bowl")
        assert len(copies) == 3
        nearest = [min(bowls, key=lambda b: np.linalg.norm(c.position - scene.pose_of(b).pos))
                   for c in copies]
        assert sorted(nearest) == bowls
        assert all(np.linalg.norm(c.position[:2] - scene.pose_of(b).pos[:2]) < 0.01
                   for c, b in zip(copies, nearest, strict=True))
    finally:
        observer.close()
        scene.close()
