"""`tether.scenes.fast_physics`: a cached compiled model, a skipped repeated forward and resets
that keep the model change no number of a simulation, and they do skip the work."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tether.scenes import fast_physics
from tether.scenes.libero_scene import LiberoScene

TASK = "libero_goal/put_the_bowl_on_the_plate"
XML = """<mujoco><worldbody><body><freejoint/><geom size=".1" mass="2"/></body></worldbody>
</mujoco>"""


def _arrays(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    return {n: getattr(model, n) for n in dir(model)
            if not n.startswith("_") and isinstance(getattr(model, n), np.ndarray)}


def test_a_compiled_model_is_a_fresh_copy_equal_to_compiling_again():
    fresh = mujoco.MjModel.from_xml_string(XML)
    first, second = fast_physics.compiled_model(XML), fast_physics.compiled_model(XML)
    assert first is not second and first is not fast_physics._compiled[XML]
    first.body_mass[1] = 5.0  # a perturbation edits its own scene's model only
    assert second.body_mass[1] == 2.0
    arrays = _arrays(fresh)
    assert arrays  # the comparison covers the model's arrays
    for name, value in _arrays(second).items():
        assert np.array_equal(value, arrays[name]), name


def test_the_cache_keeps_the_last_models():
    xmls = [XML.replace('mass="2"', f'mass="{m}"') for m in range(2, 3 + fast_physics.MODELS)]
    for xml in xmls:
        fast_physics.compiled_model(xml)
    assert list(fast_physics._compiled)[-fast_physics.MODELS:] == xmls[1:]
    assert xmls[0] not in fast_physics._compiled


def test_model_fields_put_back_what_was_edited():
    model = mujoco.MjModel.from_xml_string(XML)
    fields = fast_physics.ModelFields(model)
    model.body_mass[1], model.geom_rgba[0] = 7.0, [1, 0, 0, 1]
    fields.restore(model)
    arrays = _arrays(mujoco.MjModel.from_xml_string(XML))
    for name, value in _arrays(model).items():
        assert np.array_equal(value, arrays[name]), name


def _states(scene: LiberoScene, actions: np.ndarray) -> list[np.ndarray]:
    data = scene._data
    out = []
    for a in actions:
        scene.step(a)
        out.append(np.concatenate([[data.time], data.qpos, data.qvel, data.ctrl, data.act,
                                   data.sensordata, data.qacc_warmstart,
                                   scene.observe()["joint_pos"]]))
    return out


@pytest.mark.slow
def test_a_scene_with_the_shortcuts_steps_bit_for_bit_as_robosuite_does(monkeypatch):
    """The same 20 random actions from a recorded initial state, with the shortcuts (resets that
    keep the model, `mj_step1` and `mj_step2` per substep, the streamlined arm control with its
    operational-space law, only the observables read, contacts by id) and without (robosuite's
    compile and hard reset, the controller's forward, state reads and law, `mj_step`, every
    observable, contacts by name): same state and observed joints after every step, also after
    the kept model was edited, the gripper driven by an earlier episode and the controller
    rebuilt by a reset."""
    from robosuite.utils.binding_utils import MjSim

    actions = np.random.default_rng(0).uniform(-1, 1, (20, 7))
    fast = LiberoScene(TASK, init_state=3, seed=3)
    try:
        model = fast._env.env.sim.model._model
        fast._env.env.sim.model._model.geom_friction[:] *= 3  # what a perturbation may do
        fast.step(np.r_[np.zeros(6), 1.0])  # the gripper closing
        fast.reset(3, 3)
        assert fast._env.env.sim.model._model is model  # kept, not compiled and copied again
        observed = [n for n, o in fast._env.env._observables.items() if o.is_enabled()]
        assert observed == ["robot0_joint_pos"]  # of ~26: no camera, so only the joints are read
        calls = []
        monkeypatch.setattr(MjSim, "forward", lambda self: calls.append("forward") or
                            mujoco.mj_forward(self.model._model, self.data._data))
        monkeypatch.setattr(mujoco, "mj_step", lambda m, d: calls.append("step"))
        monkeypatch.setattr(mujoco, "mj_step1", lambda m, d, step1=mujoco.mj_step1:
                            calls.append("step1") or step1(m, d))
        monkeypatch.setattr(mujoco, "mj_step2", lambda m, d, step2=mujoco.mj_step2:
                            calls.append("step2") or step2(m, d))
        monkeypatch.setattr(mujoco, "mj_jacSite", lambda *a, jac=mujoco.mj_jacSite:
                            calls.append("jacobian") or jac(*a))
        fast.step(actions[0])
        # per physics substep: the first half of a step, the arm's Jacobians in one evaluation
        # (robosuite's controller evaluates them four times), the second half; no whole forward
        assert calls == ["step1", "jacobian", "step2"] * 25
        monkeypatch.undo()
        fast.reset(3, 3)
        with_shortcuts = _states(fast, actions)
    finally:
        fast.close()
    monkeypatch.setattr(MjSim, "from_xml_string", classmethod(
        lambda cls, xml: cls(mujoco.MjModel.from_xml_string(xml))))
    monkeypatch.setattr(fast_physics, "skip_repeated_forward", lambda env: None)
    monkeypatch.setattr(fast_physics, "streamline_control", lambda env: None)
    monkeypatch.setattr(fast_physics, "observe_only", lambda env, names: None)
    monkeypatch.setattr(fast_physics, "contacts_by_id", lambda env: None)
    monkeypatch.setattr(fast_physics, "keep_compiled_model",
                        lambda env: fast_physics.ModelFields(env.sim.model._model))
    plain = LiberoScene(TASK, init_state=3, seed=3)
    try:
        without = _states(plain, actions)
    finally:
        plain.close()
    for step, (a, b) in enumerate(zip(with_shortcuts, without, strict=True)):
        assert np.array_equal(a, b), f"step {step}: the shortcuts changed the simulation"


@pytest.mark.slow
def test_contacts_by_id_answer_as_robosuite_does():
    """Every pair of the scene's objects and fixtures (and each with anything), as models and as
    geom names, in a state with the bowl resting on the table and the gripper closed on air:
    the same answers as robosuite's `check_contact`, some of them True."""
    from robosuite.environments.base import MujocoEnv

    scene = LiberoScene(TASK, init_state=0)
    try:
        for _ in range(5):
            scene.step(np.r_[np.zeros(6), 1.0])
        env = scene._env.env
        parts = [env.get_object(n) for n in [*env.objects_dict, *env.fixtures_dict]]
        parts += [p.contact_geoms for p in parts] + [parts[0].contact_geoms[0], "no_such_geom"]
        answers = []
        for a in parts:
            for b in [*parts, None]:
                answers.append(env.check_contact(a, b))
                assert answers[-1] == MujocoEnv.check_contact(env, a, b), (a, b)
        assert any(answers) and not all(answers)
    finally:
        scene.close()


@pytest.mark.slow
def test_a_scene_without_its_textures_steps_and_draws_as_one_with_them():
    """Built without its image textures (`textures=False`), a scene keeps ~1/20 of the texture
    bytes, steps bit for bit as one built with them, and draws the same frames (the trace's, and
    camera perception's colour, depth and segmentation) once edits recoloured its model and
    scaled its meshes."""
    from tether.scenes.cameras import Cameras, Rasteriser
    from tether.scenes.observations import Observer

    actions = np.random.default_rng(1).uniform(-1, 1, (5, 7))
    scenes = [LiberoScene(TASK, init_state=1), LiberoScene(TASK, init_state=1, textures=False)]
    try:
        models = [scene._env.env.sim.model._model for scene in scenes]
        assert models[1].tex_data.nbytes * 20 < models[0].tex_data.nbytes
        assert fast_physics.textured(models[0]) is models[0]
        states = [_states(scene, actions) for scene in scenes]
        for step, (a, b) in enumerate(zip(*states, strict=True)):
            assert np.array_equal(a, b), f"step {step}"
        for model in models:  # what perturbations may do: recolour, scale a mesh
            model.geom_rgba[:, 0] = 0.9
            model.mesh_vert[:] *= 1.2
        frames = [[scene.render("agentview", (64, 64)), scene.render("agentview", (64, 64), True)]
                  for scene in scenes]
        for a, b in zip(*frames, strict=True):
            assert np.array_equal(a, b)
        views = [Observer(scene).observe("agentview", (64, 64), depth=True, segmentation=True)
                 for scene in scenes]
        assert np.array_equal(views[0].rgb, views[1].rgb)
        assert np.array_equal(views[0].depth, views[1].depth)
        assert views[0].masks.keys() == views[1].masks.keys() and views[0].masks
        for name, mask in views[0].masks.items():
            assert np.array_equal(mask, views[1].masks[name]), name
        flat = Rasteriser(models[1], (64, 64))  # drawn with its own flat textures, it differs
        try:
            capture = Cameras().capture(models[1], scenes[1]._data, "agentview")
            assert not np.array_equal(flat.draw(capture), frames[0][0])
        finally:
            flat.close()
    finally:
        for scene in scenes:
            scene.close()


def test_an_image_texture_becomes_a_flat_one_of_the_same_name_and_kind(tmp_path):
    """Whatever else the element says (a size, a colour), the flat stand-in compiles, keeps the
    texture's name, kind and id for its material, and holds 8 x 8 texels, not the image's."""
    from PIL import Image

    Image.new("RGB", (32, 32), (200, 10, 10)).save(tmp_path / "image.png")
    xml = f"""<mujoco><asset>
      <texture name="sky" type="skybox" builtin="gradient" width="16" height="16"/>
      <texture name="wood" type="cube" height="1" width="1" file="{tmp_path / 'image.png'}"/>
      <material name="varnished" texture="wood"/></asset>
      <worldbody><geom size=".1" material="varnished"/></worldbody></mujoco>"""
    real = mujoco.MjModel.from_xml_string(xml)
    flat = mujoco.MjModel.from_xml_string(fast_physics._TEXTURE.sub(fast_physics._flat, xml))
    assert flat.ntex == real.ntex == 2 and np.array_equal(flat.mat_texid, real.mat_texid)
    assert [flat.texture(i).name for i in range(2)] == ["sky", "wood"]
    assert np.array_equal(flat.tex_type, real.tex_type)
    assert (flat.tex_width[0], flat.tex_height[0]) == (real.tex_width[0], real.tex_height[0])
    assert flat.tex_width[1] == 8 and real.tex_width[1] > 8
