"""`benchmarks/reach_limits.py`: the hand poses a goal's skill needs, checked by the arm's
inverse kinematics; LIBERO-PRO's swapped libero_10 scenes put two targets at its edge."""

from __future__ import annotations

import pytest

from tests.benchmark_scripts import load_benchmark
from tether.scenes.libero_scene import LiberoScene


@pytest.fixture(scope="module")
def reach_limits():
    module = load_benchmark("reach_limits")
    module.STEP = 0.05  # 3 x 3 spots over a 15 cm burner: enough to tell near from far
    return module


def _rows(module, task: str) -> list[tuple]:
    scene = LiberoScene(task, textures=False)
    try:
        return list(module.rows(scene))
    finally:
        scene.close()


def test_a_stove_swapped_to_the_far_side_is_reached_only_along_its_near_edge(reach_limits):
    near, far = _rows(reach_limits, "libero_10/8"), _rows(reach_limits, "libero_10_swap/8")
    assert len(near) == len(far) == 2  # both moka pots
    for _, target, skill, _, hit, checked, _ in near:
        assert (target, skill, hit) == ("flat_stove_1_cook_region", "pick_place", checked)
    for *_, reach, hit, checked, span in far:
        assert reach > 0.8 and 0 < hit < checked / 2
        assert float(span.split(" to ")[1]) < 0.15  # the burner runs to x = 0.27


def test_slide_in_s_level_hand_reaches_the_microwave_only_where_it_first_stood(reach_limits):
    [(_, _, skill, _, hit, checked, _)] = _rows(reach_limits, "libero_10/9")
    assert (skill, hit) == ("slide_in", checked)
    [(_, _, skill, _, hit, checked, _)] = _rows(reach_limits, "libero_10_swap/9")
    assert skill == "slide_in" and hit <= 1 < checked  # at most the deepest pose on the way in
