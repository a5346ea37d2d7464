"""Hollow objects from their geometry (`scenes/hollows.py`): rays straight down into the middle
of an object's footprint meet only its own geoms; an open-topped one's first surface lies deep
below its top, a solid one's at its top."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tether.scenes.hollows import HOLLOW_RATIO, depth_ratio, is_hollow

# An 8 cm cup 6 cm high with 0.5 cm walls and floor, from five boxes; a 4 cm ball from another
# body lying in it; a solid 4 cm cube beside it and a 4 cm cube mesh.
MJCF = """
<mujoco>
  <asset>
    <mesh name="cube" vertex="-.02 -.02 -.02  .02 -.02 -.02  -.02 .02 -.02  .02 .02 -.02
                              -.02 -.02 .02  .02 -.02 .02  -.02 .02 .02  .02 .02 .02"/>
  </asset>
  <worldbody>
    <body name="cup" pos="0 0 0">
      <geom type="box" size=".04 .04 .0025" pos="0 0 .0025"/>
      <geom type="box" size=".0025 .04 .03" pos=".0375 0 .03"/>
      <geom type="box" size=".0025 .04 .03" pos="-.0375 0 .03"/>
      <geom type="box" size=".04 .0025 .03" pos="0 .0375 .03"/>
      <geom type="box" size=".04 .0025 .03" pos="0 -.0375 .03"/>
    </body>
    <body name="ball" pos="0 0 .025"><geom type="sphere" size=".02"/></body>
    <body name="box" pos=".2 0 .02"><geom type="box" size=".02 .02 .02"/></body>
    <body name="meshbox" pos="-.2 0 .02"><geom type="mesh" mesh="cube"/></body>
  </worldbody>
</mujoco>
"""


@pytest.fixture(scope="module")
def world():
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def _ratio(world, body: str, low: list[float], high: list[float]) -> float:
    model, data = world
    geoms = np.flatnonzero(model.geom_bodyid == model.body(body).id)
    return depth_ratio(model, data, geoms, np.array(low), np.array(high))


def test_an_open_topped_cup_is_hollow_down_to_its_floor_whatever_lies_in_it(world):
    """The first surface of the cup itself is its floor's top, 0.5 cm up: 5.5 cm below its
    6 cm top, though a ball from another body fills its middle."""
    ratio = _ratio(world, "cup", [-0.04, -0.04, 0.0], [0.04, 0.04, 0.06])
    assert ratio == pytest.approx(0.055 / 0.06)
    model, data = world
    geoms = np.flatnonzero(model.geom_bodyid == model.body("cup").id)
    assert is_hollow(model, data, geoms, np.array([-0.04, -0.04, 0.0]),
                     np.array([0.04, 0.04, 0.06]))


@pytest.mark.parametrize("body, x", [("box", 0.2), ("meshbox", -0.2)])
def test_a_solid_box_is_met_at_its_top(world, body, x):
    ratio = _ratio(world, body, [x - 0.02, -0.02, 0.0], [x + 0.02, 0.02, 0.04])
    assert ratio == pytest.approx(0.0, abs=1e-6)  # a mesh is stored in float32
    assert ratio < HOLLOW_RATIO


@pytest.mark.slow
def test_in_a_libero_scene_bowls_mugs_and_plates_are_hollow_boxes_and_bottles_are_not():
    """LIBERO-PRO's libero_goal_with_mug/0 holds a bowl, a mug, a cream cheese box, a wine
    bottle and a plate (a dish 1.1 cm deep, 1.9 cm high: taken at its rim too)."""
    from tether.scenes.perturbations import open_scene

    scene = open_scene("libero_goal_with_mug/0")
    try:
        hollow = {name: scene.is_hollow(name) for name in scene.objects()}
        ratios = {name: scene.depth_ratio(name) for name in scene.objects()}
    finally:
        scene.close()
    assert hollow == {"akita_black_bowl_1": True, "libero_mug_yellow_1": True,
                      "cream_cheese_1": False, "wine_bottle_1": False, "plate_1": True}, ratios
