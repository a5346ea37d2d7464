"""Camera frames: a capture drawn later, on another thread, is the frame rendered at the step it
was captured (the sim has moved on since), pixel for pixel, and what mujoco.Renderer draws.
Geoms are in group 1: group 0 is collision geometry, which frames leave out."""

from __future__ import annotations

import sys
import threading

import mujoco
import numpy as np

from tether.scenes.cameras import (
    FONT_SCALE,
    Cameras,
    View,
    render_context,
    scene_capacity,
    visual_only,
)

SCENE = """
<mujoco>
  <worldbody>
    <light pos="0 0 2"/>
    <geom type="plane" size="1 1 0.1" rgba="0.8 0.8 0.8 1" group="1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" rgba="0.9 0.2 0.2 1" group="1"/>
    </body>
    <camera name="top" pos="0 0 1"/>
  </worldbody>
</mujoco>
"""


def test_a_capture_drawn_later_on_another_thread_is_the_frame_at_its_step():
    model = mujoco.MjModel.from_xml_string(SCENE)
    data = mujoco.MjData(model)
    data.qpos[:2] = [0.2, 0.1]
    mujoco.mj_forward(model, data)
    cameras = Cameras()
    now = cameras.render(model, data, "top", (64, 48))
    with mujoco.Renderer(model, 64, 48) as renderer:
        renderer.update_scene(data, camera="top", scene_option=visual_only())
        assert np.array_equal(renderer.render(), now)
    view = View(model, cameras.capture(model, data, "top"), (64, 48), cameras)
    data.qpos[:2] = [-0.2, -0.1]  # the sim moves on before the frame is drawn
    mujoco.mj_forward(model, data)
    drawn = {}

    def writer() -> None:
        painter = Cameras()
        drawn["frame"] = view.draw(painter)
        painter.close()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    assert np.array_equal(drawn["frame"], now)
    assert not np.array_equal(cameras.render(model, data, "top", (64, 48)), now)
    assert cameras._free == [view.scene]  # drawn, its visual scene is captured into again
    cameras.close()


def test_a_visual_scene_fits_the_model_and_grows_when_the_model_draws_more():
    sensors = "".join(f'<rangefinder site="eye" name="r{i}"/>' for i in range(150))
    eye = '<site name="eye" pos="0.3 0 0.4" euler="180 0 0"/>'  # on the box, looking down
    xml = SCENE.replace("<freejoint/>", "<freejoint/>" + eye)
    model = mujoco.MjModel.from_xml_string(
        xml.replace("</mujoco>", f"<sensor>{sensors}</sensor></mujoco>"))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    assert scene_capacity(model) < 150  # a rangefinder's ray is drawn, and not counted
    cameras = Cameras()
    scene = cameras.capture(model, data, "top")
    assert scene.ngeom > 150 and scene.ngeom < scene.maxgeom
    with mujoco.Renderer(model, 64, 48) as renderer:
        renderer.update_scene(data, camera="top", scene_option=visual_only())
        assert renderer.scene.ngeom == scene.ngeom
        assert np.array_equal(renderer.render(), cameras.draw(model, scene, (64, 48)))
    cameras.close()


def test_draft_frames_are_drawn_without_multisampling_or_reflections_and_leave_the_scene_as_is():
    xml = (SCENE.replace("<worldbody>", '<asset><material name="mirror" reflectance="0.5"/>'
                         "</asset><worldbody>")
           .replace('rgba="0.8 0.8 0.8 1"', 'material="mirror"')  # the floor mirrors the box
           .replace('<camera name="top" pos="0 0 1"/>',
                    '<camera name="top" pos="0 -0.6 0.5" xyaxes="1 0 0 0 0.6 0.8"/>'))
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:3] = [0.05, 0.03, 0.2]  # the box's edges cross pixels: multisampling shows
    mujoco.mj_forward(model, data)
    assert model.vis.quality.offsamples == 4
    cameras = Cameras()  # one pool, both qualities
    scene = cameras.capture(model, data, "top")
    drafted = cameras.draw(model, scene, (64, 48), draft=True)
    reflection = mujoco.mjtRndFlag.mjRND_REFLECTION.value
    assert scene.flags[reflection] == 1  # restored: a pooled scene may next be drawn in full
    frame = cameras.render(model, data, "top", (64, 48))
    model.vis.quality.offsamples = 0
    with mujoco.Renderer(model, 64, 48) as renderer:
        renderer.update_scene(data, camera="top", scene_option=visual_only())
        single_sample = renderer.render()
        renderer.scene.flags[reflection] = 0
        assert np.array_equal(renderer.render(), drafted)
    assert not np.array_equal(single_sample, drafted)  # the mirror image is gone
    assert not np.array_equal(frame, drafted)
    assert np.array_equal(cameras.render(model, data, "top", (64, 48), draft=True), drafted)
    cameras.close()


TEXTURED = """
<mujoco>
  <asset>
    <texture name="big" type="2d" builtin="checker" width="4096" height="4096"/>
    <material name="checked" texture="big"/>
  </asset>
  <worldbody><geom type="plane" size="1 1 0.1" material="checked"/></worldbody>
</mujoco>
"""


def test_a_render_context_is_made_while_other_threads_run():
    """The binding's `MjrContext` holds the GIL through its texture upload; `render_context` lets
    another thread go on meanwhile, and its context draws what the binding's draws."""
    model = mujoco.MjModel.from_xml_string(TEXTURED)
    gl = mujoco.GLContext(32, 32)
    gl.make_current()
    counted, done = [0], threading.Event()

    def count() -> None:
        while not done.is_set():
            counted[0] += 1

    def counted_while(make) -> tuple[int, mujoco.MjrContext]:
        before = counted[0]
        context = make()
        return counted[0] - before, context

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # the counter's turns at the calls' edges count for little
    thread = threading.Thread(target=count)
    thread.start()
    try:
        # the least of three and the most of three: what the counter gets at the calls' edges,
        # and how much of a core it gets at all, vary with the load (other tests in parallel)
        held, by_binding = min((counted_while(lambda: mujoco.MjrContext(model, FONT_SCALE))
                                for _ in range(3)), key=lambda made: made[0])
        released, ours = max((counted_while(lambda: render_context(model)) for _ in range(3)),
                             key=lambda made: made[0])
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert released > 10 * max(held, 1)
    assert (ours.ntexture, ours.fontScale) == (1, FONT_SCALE)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    scene, camera = mujoco.MjvScene(model, maxgeom=100), mujoco.MjvCamera()
    mujoco.mjv_updateScene(model, data, mujoco.MjvOption(), None, camera,
                           mujoco.mjtCatBit.mjCAT_ALL.value, scene)
    frames = []
    for context in (by_binding, ours):
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, context)
        mujoco.mjr_render(mujoco.MjrRect(0, 0, 32, 32), scene, context)
        frame = np.empty((32, 32, 3), np.uint8)
        mujoco.mjr_readPixels(frame, None, mujoco.MjrRect(0, 0, 32, 32), context)
        frames.append(frame)
        context.free()
    gl.free()
    assert np.array_equal(*frames) and frames[0].std() > 0
