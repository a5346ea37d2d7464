"""Body extents: the box of a body's exact geometry at its geoms' current poses."""

from __future__ import annotations

import mujoco
import numpy as np

from tether.scenes.extents import BodyExtents

SCENE = """
<mujoco>
  <worldbody>
    <body name="shelf" pos="0.5 0 0.2"><geom type="box" size="0.2 0.1 0.02"/></body>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.05 0.02 0.03"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_a_box_follows_its_body_and_is_computed_again_only_when_it_moved():
    model = mujoco.MjModel.from_xml_string(SCENE)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    extents = BodyExtents(model, {"box": 2, "shelf": 1})
    low, high = extents.of("box", data)
    assert np.allclose(low, [-0.05, -0.02, 0.07]) and np.allclose(high, [0.05, 0.02, 0.13])
    assert extents._posed("box", data) is extents._posed("box", data)  # nothing moved
    data.qpos[:3] = [0.3, 0.1, 0.1]
    data.qpos[3:7] = [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]  # a quarter turn about z
    mujoco.mj_forward(model, data)
    low, high = extents.of("box", data)
    assert np.allclose(low, [0.28, 0.05, 0.07]) and np.allclose(high, [0.32, 0.15, 0.13])
    assert np.allclose(extents.of("shelf", data)[0], [0.3, -0.1, 0.18])
