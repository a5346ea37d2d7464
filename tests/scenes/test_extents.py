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


MIXED = """
<mujoco>
  <asset><mesh name="tetra" vertex="0 0 0  .1 0 0  0 .1 0  0 0 .1  .05 .05 .05"/></asset>
  <worldbody>
    <body name="thing" pos="0.1 0.2 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.02 0.03"/>
      <geom type="box" size="0.01 0.02 0.03" pos="0.06 0 0" euler="0 30 0"/>
      <geom type="mesh" mesh="tetra" pos="0 0.05 0"/>
      <geom type="sphere" size="0.02" pos="0 -0.05 0"/>
      <body pos="0 0 0.1" euler="10 20 30"><geom type="capsule" size="0.01 0.03"/></body>
    </body>
  </worldbody>
</mujoco>
"""


def test_each_geoms_points_are_posed_as_its_own_pose_moves_them_bit_for_bit():
    """Geoms are posed a group at a time (those with as many points): each point is where the
    geom's own position and rotation put it, to the last bit."""
    model = mujoco.MjModel.from_xml_string(MIXED)
    data = mujoco.MjData(model)
    extents = BodyExtents(model, {"thing": 1})
    rng = np.random.default_rng(5)
    for _ in range(20):
        data.qpos[:3] = rng.uniform(-1, 1, 3)
        data.qpos[3:7] = rng.normal(size=4)
        mujoco.mj_forward(model, data)
        posed = extents._posed("thing", data).points
        geoms = extents.geoms["thing"]
        assert len(posed) == len(geoms) == 5
        for g, local, world in zip(geoms, extents.points["thing"], posed, strict=True):
            rotation = data.geom_xmat[g].reshape(3, 3)
            assert np.array_equal(world, data.geom_xpos[g] + local @ rotation.T)
