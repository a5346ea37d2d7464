"""`SceneCache`: a kept scene reset to the next episode runs it exactly as a fresh scene does.

Each determinism test dirties a kept scene with another episode's steps, reopens it for the
episode under test, and steps it and a freshly built scene with the same actions: robot state,
every entity's pose (reported and true), the model's perturbed parameters and the success test
must be equal, bit for bit, at every step. The cache's bookkeeping (size, a failed reset) is
tested with stand-in scenes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes import scene_cache
from tether.scenes.perturbations import build
from tether.scenes.perturbations.scene import PerturbedScene, model_key, open_scene
from tether.scenes.scene_cache import SceneCache

TASK = "libero_spatial/4"  # its cabinet is placed by a seeded sampler at each reset


def _state(scene) -> np.ndarray:
    """Everything an episode sees or is judged by after a step, as one vector."""
    obs = scene.observe()
    poses = [scene.pose_of(n) for n in scene.entities()]
    if isinstance(scene, PerturbedScene):
        poses += [scene.true_pose_of(n) for n in scene.entities()]
    boxes = [np.r_[scene.extent_of(n)].ravel() for n in scene.entities()]
    return np.concatenate([obs["eef_pos"], obs["eef_quat"], [obs["gripper_width"]],
                           obs["gripper_qpos"], obs["joint_pos"], [scene.success()]]
                          + [np.r_[p.pos, p.quat] for p in poses] + boxes)


def _trajectory(scene, actions: np.ndarray) -> list[np.ndarray]:
    states = [_state(scene)]
    for a in actions:
        scene.step(a)
        states.append(_state(scene))
    return states


def _actions(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, 7))


def _reused_equals_fresh(perturb: tuple[str, ...]) -> None:
    """A kept scene, dirtied by init state 0 / seed 0, reopened at init state 1 / seed 1, runs
    30 random actions as a scene built for init state 1 / seed 1 does."""
    cache = SceneCache()
    try:
        dirty = cache.open(TASK, [build(s) for s in perturb], init_state=0, seed=0)
        for a in _actions(12, 1):
            dirty.step(a)
        scene = cache.open(TASK, [build(s) for s in perturb], init_state=1, seed=1)
        assert scene is dirty and (cache.built, cache.reused) == (1, 1)
        assert (scene.init_state, scene.seed, scene.steps) == (1, 1, 0)
        reused = _trajectory(scene, _actions(30, 2))
        model = scene._env.env.sim.model._model
        friction, mass = model.geom_friction.copy(), model.body_mass.copy()
    finally:
        cache.close()
    fresh_scene = open_scene(TASK, [build(s) for s in perturb], init_state=1, seed=1)
    try:
        fresh = _trajectory(fresh_scene, _actions(30, 2))
        model = fresh_scene._env.env.sim.model._model
        assert np.array_equal(model.geom_friction, friction)
        assert np.array_equal(model.body_mass, mass)
    finally:
        fresh_scene.close()
    for step, (a, b) in enumerate(zip(reused, fresh, strict=True)):
        assert np.array_equal(a, b), f"step {step}: reused and fresh scenes differ"


def test_keys_tell_model_changing_perturbations_from_reset_and_run_stage_ones():
    def key(specs, seed):
        return model_key(TASK, [build(s) for s in specs], seed)

    assert key((), 0) == key((), 7)
    reset_run = ("friction_mass", "position_swap", "pose_noise", "object_move", "lighting")
    assert key(reset_run, 0) == key(reset_run, 1) != key((), 0)
    assert key(("distractors:n=2",), 0) != key(("distractors:n=2",), 1)
    assert key(("object_replace:category=white_bowl",), 0) != \
        key(("object_replace:category=red_coffee_mug",), 0)
    assert key((), 0) != model_key("libero_goal/open_the_middle_drawer_of_the_cabinet", (), 0)
    assert model_key(TASK, (), 0, cameras=("agentview",)) != key((), 0)


class _Scene:
    """A scene stand-in: records resets, fails the reset to init state 99."""

    def __init__(self, task, perturbations, init_state, seed):
        self.task, self.resets, self.closed = task, [(init_state, seed)], False

    def reset(self, init_state, seed):
        if init_state == 99:
            raise RuntimeError("reset failed")
        self.resets.append((init_state, seed))

    def close(self):
        self.closed = True


@pytest.fixture
def fake_scenes(monkeypatch):
    monkeypatch.setattr(scene_cache, "open_scene", _Scene)
    monkeypatch.setattr(scene_cache, "model_key", lambda task, p, seed: (task, ""))


def test_a_cache_keeps_its_size_closing_the_least_reused_then_least_recent(fake_scenes):
    cache = SceneCache(size=2)
    a = cache.open("a", init_state=0, seed=0)
    b = cache.open("b", init_state=0, seed=0)
    c = cache.open("c", init_state=0, seed=0)  # neither reused: a, the least recently used, goes
    assert (a.closed, b.closed, c.closed) == (True, False, False)
    assert cache.open("c", init_state=3, seed=4) is c and c.resets == [(0, 0), (3, 4)]
    d = cache.open("d", init_state=0, seed=0)  # b was never reused
    e = cache.open("e", init_state=0, seed=0)  # c, reused, stays though used longest ago
    assert (b.closed, c.closed, d.closed, e.closed) == (True, False, True, False)
    assert cache.open("c", init_state=1, seed=1) is c
    assert (cache.built, cache.reused) == (5, 2)
    cache.close()
    assert c.closed and e.closed


def test_a_scene_whose_reset_fails_is_closed_and_built_again(fake_scenes):
    cache = SceneCache()
    a = cache.open("a", init_state=0, seed=0)
    with pytest.raises(RuntimeError, match="reset failed"):
        cache.open("a", init_state=99, seed=0)
    assert a.closed
    assert cache.open("a", init_state=1, seed=1) is not a and cache.built == 2


def test_a_cache_of_no_scenes_is_an_error():
    with pytest.raises(TetherError, match="at least 1 scene, not 0"):
        SceneCache(size=0)


@pytest.mark.slow
def test_a_reused_scene_runs_another_init_state_and_seed_as_a_fresh_one():
    _reused_equals_fresh(())


@pytest.mark.slow
def test_a_reused_scene_runs_reset_and_run_stage_perturbations_as_a_fresh_one():
    """friction_mass scales the model at each reset and object_scale the main object's meshes
    (not again on top of the last episode's), position_swap moves objects after the init state
    loads, pose_noise draws per episode."""
    _reused_equals_fresh(("friction_mass:mass=2.0", "object_scale", "position_swap",
                          "pose_noise:sigma=0.02"))


@pytest.mark.slow
def test_a_model_changing_perturbation_builds_a_fresh_scene():
    cache = SceneCache()
    try:
        first = cache.open(TASK, [build("distractors:n=1")], init_state=0, seed=0)
        second = cache.open(TASK, [build("distractors:n=1")], init_state=1, seed=1)
        assert second is not first and first._env is None  # the old one was closed
        assert (cache.built, cache.reused) == (2, 0)
        assert second.added_objects() != [] and second.problem != first.problem
    finally:
        cache.close()


@pytest.mark.slow
def test_a_kept_scene_draws_the_meshes_its_episode_has():
    """A scene kept from an episode whose object_scale shrank the bowl draws the next one (at
    full size: the reset puts the meshes back) as a fresh scene does, for its own frames and
    for privileged perception's masks: neither keeps the render context of the shrunk bowl."""
    from tether.scenes.observations import Observer

    def observe(observer: Observer) -> dict[str, np.ndarray]:
        return observer.observe("agentview", (64, 64), rgb=False, segmentation=True).masks

    cache = SceneCache()
    kept = cache.open(TASK, [build("object_scale:scale=0.3")], init_state=1, seed=1)
    observer = Observer(kept)
    try:
        shrunk = kept.render("agentview", (64, 64))
        observe(observer)
        scene = cache.open(TASK, [build("object_scale:scale=1.0")], init_state=1, seed=1)
        assert scene is kept
        frame, masks = scene.render("agentview", (64, 64)), observe(observer)
    finally:
        observer.close()
        cache.close()
    fresh = open_scene(TASK, [build("object_scale:scale=1.0")], init_state=1, seed=1)
    fresh_observer = Observer(fresh)
    try:
        assert not np.array_equal(fresh.render("agentview", (64, 64)), shrunk)
        assert np.array_equal(frame, fresh.render("agentview", (64, 64)))
        expected = observe(fresh_observer)
        assert masks.keys() == expected.keys()
        for name, mask in masks.items():
            assert np.array_equal(mask, expected[name]), name
    finally:
        fresh_observer.close()
        fresh.close()
