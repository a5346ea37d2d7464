"""`tether.scenes.observations`: RGB, depth and per-object masks rendered only when asked."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError


@pytest.mark.slow
def test_rgb_depth_and_masks_with_poses_per_object_name():
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.observations import Observer

    scene = LiberoScene("tether/put_the_middle_bowl_on_the_plate", init_state=0, seed=0)
    observer = Observer(scene)
    try:
        view = observer.observe("agentview", (96, 96), depth=True, segmentation=True)
        assert view.rgb.shape == (96, 96, 3) and view.rgb.dtype == np.uint8
        assert view.depth.shape == (96, 96) and 0.3 < float(np.median(view.depth)) < 5.0
        bowls = [f"akita_black_bowl_{i}" for i in (1, 2, 3)]
        assert set(bowls) | {"plate_1"} <= set(view.masks)
        assert all(view.masks[b].sum() > 10 for b in bowls)
        assert not (view.masks["akita_black_bowl_1"] & view.masks["akita_black_bowl_2"]).any()
        assert np.allclose(view.poses["akita_black_bowl_2"].pos,
                           scene.pose_of("akita_black_bowl_2").pos)
        # the bowl is nearer the agent-view camera than the table behind it
        wrist = observer.observe("robot0_eye_in_hand", (64, 64), rgb=True)
        assert wrist.depth is None and not wrist.masks
        with pytest.raises(TetherError, match="did you mean 'agentview'"):
            observer.observe("agentveiw")
        # the trace's frames (`Robot.render`) show what the observer does: no collision geoms
        assert np.array_equal(scene.render("agentview", (96, 96)), view.rgb)
    finally:
        observer.close()
        scene.close()


@pytest.mark.slow
def test_the_grippers_rendered_marker_is_part_of_the_robots_own_silhouette():
    """robosuite renders the gripper's grip-axis site, a thin cylinder from the fingers down onto
    the table; it is the robot's, so camera perception must never take it for an object."""
    import mujoco

    from tether.scenes.cameras import visual_only
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.observations import Observer

    scene = LiberoScene("libero_goal/put_the_cream_cheese_in_the_bowl", init_state=0, seed=0)
    observer = Observer(scene)
    try:
        view = observer.observe("agentview", (128, 128), rgb=False, own_body=True)
        model, data = scene._env.env.sim.model._model, scene._env.env.sim.data._data
        marker = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "gripper0_grip_site_cylinder")
        with mujoco.Renderer(model, 128, 128) as renderer:
            renderer.update_scene(data, camera="agentview", scene_option=visual_only())
            renderer.enable_segmentation_rendering()
            seg = renderer.render()
        drawn = (seg[..., 1] == int(mujoco.mjtObj.mjOBJ_SITE)) & (seg[..., 0] == marker)
        assert drawn.sum() > 5 and view.own[drawn].all()
    finally:
        observer.close()
        scene.close()


def test_no_gl_context_is_a_clear_error(monkeypatch):
    import mujoco

    from tether.scenes.cameras import offscreen_renderer

    def no_context(*args, **kwargs):
        raise mujoco.FatalError("Default framebuffer is not complete, error 0x0")

    monkeypatch.setattr(mujoco, "Renderer", no_context)
    with pytest.raises(TetherError, match="set MUJOCO_GL=egl"):
        offscreen_renderer(mujoco.MjModel.from_xml_string("<mujoco/>"), (64, 64))
