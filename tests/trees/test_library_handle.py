"""The library's `grasp` takes a mug by its handle (a LIBERO scene with mugs; slow)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.trees.harness import compile_node, run

TASK = ("libero_10/LIVING_ROOM_SCENE5_put_the_white_mug_on_the_left_plate_and_put_the_yellow_and_"
        "white_mug_on_the_right_plate")


@pytest.mark.slow
@pytest.mark.parametrize("mug", ["porcelain_mug_1", "white_yellow_mug_1"])
def test_grasp_takes_a_mug_by_its_handle_and_lifts_it(tmp_path, mug):
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(TASK, init_state=0, seed=0)
    try:
        root = compile_node(tmp_path, f"subtree: grasp\nwith: {{object: {mug}}}", scene)
        result, _ = run(root, scene, budget=600)

        assert result.tree_status == "SUCCESS"
        assert scene.is_grasped(mug)
        handle = scene.handle_of(mug)  # where the handle is now, lifted with the mug
        eef = scene.eef_pose().pos
        near = 0.01  # m
        assert np.all(eef[:2] >= handle.low[:2] - near)
        assert np.all(eef[:2] <= handle.high[:2] + near)
        low, high = scene.extent_of(mug)
        assert low[2] > scene.start_pose_of(mug).pos[2] + 0.1  # lifted
        assert high[2] > eef[2]  # the fingers are on the handle, below the mug's rim
    finally:
        scene.close()
