"""Perturbations: each changes what it claims; same seed, same scene; located errors on bad specs.

Scene-stage kinds are checked on the edited BDDL problem (fast); reset and run-time kinds in
LIBERO scenes (slow).
"""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes.bddl import read_problem
from tether.scenes.catalogue import get_task
from tether.scenes.perturbations import REGISTRY, build
from tether.scenes.perturbations.scene import perturb_task
from tether.scenes.robot import Pose

GOAL8 = "libero_goal/put_the_bowl_on_the_plate"


def perturbed(task: str, *specs: str, seed: int = 0):
    return perturb_task(get_task(task), [build(s) for s in specs], seed)


def test_there_are_at_least_twelve_kinds_each_with_a_summary_and_a_stage():
    assert len(REGISTRY) >= 12
    assert all(cls.summary and cls.stage in ("scene", "reset", "run") for cls in REGISTRY.values())


@pytest.mark.parametrize(("spec", "message"), [
    ("distractor", "unknown perturbation 'distractor' (did you mean 'distractors'?)"),
    ("distractors:m=2", "has no parameter 'm'"),
    ("distractors:n=two", "n must be int, got 'two'"),
    ("distractors:n", "'n' is not key=value"),
    ("unseen_names:mode=klingon", "mode is 'synonym' or 'invented'"),
    ("pose_noise:sigma=nan", "perturbation 'pose_noise': sigma must be a finite number, got nan"),
    ("pose_noise:sigma=-inf", "sigma must be a finite number, got -inf"),
    ("pose_noise:sigma=1e999", "sigma must be a finite number, got inf"),
])
def test_a_bad_spec_is_a_clear_error(spec, message):
    with pytest.raises(TetherError) as err:
        build(spec)
    assert message in str(err.value)


def test_same_seed_gives_the_same_task_and_instruction_and_other_seeds_differ():
    specs = ("distractors:n=3", "noisy_instruction", "identical_copies")
    a, _, pa = perturbed(GOAL8, *specs, seed=4)
    b, _, pb = perturbed(GOAL8, *specs, seed=4)
    c, _, pc = perturbed(GOAL8, *specs, seed=5)
    assert a.bddl_file == b.bddl_file and a.language == b.language
    assert pa.to_bddl() == pb.to_bddl()
    assert pa.to_bddl() != pc.to_bddl() and a.language != c.language


def test_distractors_add_n_objects_at_free_spots():
    task, original, problem = perturbed(GOAL8, "distractors:n=3")
    added = [o for o in problem.object_names() if o not in original.object_names()]
    assert len(added) == 3
    assert read_problem(task.bddl_file).object_names() == problem.object_names()
    assert problem.goal == original.goal and task.language == get_task(GOAL8).language


def test_identical_copies_add_the_main_objects_own_asset():
    _, original, problem = perturbed(GOAL8, "identical_copies:n=2")
    assert len(problem.objects["akita_black_bowl"]) == 3 and problem.goal == original.goal


def test_occlusion_stands_a_tall_object_on_the_camera_side_of_the_target():
    _, _, problem = perturbed(GOAL8, "occlusion")
    assert problem.objects["milk"] == ["milk_1"]
    region = next(r for r in problem.regions if r.name == "milk_1_init_region")
    bowl = next(r for r in problem.regions if r.name == "akita_black_bowl_region")
    assert region.ranges[0][0] > bowl.ranges[0][0] + 0.1  # +x: toward the agent-view camera
    assert abs(region.ranges[0][1] - bowl.ranges[0][1]) < 0.08


def test_task_rebind_names_another_object_in_goal_and_instruction():
    task, _, problem = perturbed(GOAL8, "task_rebind:object=cream_cheese_1")
    assert problem.goal == [("on", "cream_cheese_1", "plate_1")]
    assert task.language == "put the cream cheese on the plate"


def test_unseen_names_change_the_words_not_the_goal():
    task, original, problem = perturbed(GOAL8, "unseen_names")
    assert problem.goal == original.goal
    assert "bowl" not in task.language and "plate" not in task.language
    invented, _, _ = perturbed(GOAL8, "unseen_names:mode=invented")
    assert "bowl" not in invented.language


def test_noisy_instruction_adds_fillers_and_typos():
    task, _, _ = perturbed(GOAL8, "noisy_instruction:typo_rate=0.2")
    assert task.language != get_task(GOAL8).language
    quiet, _, _ = perturbed(GOAL8, "noisy_instruction:typo_rate=0,filler=false")
    assert quiet.language == get_task(GOAL8).language


def test_object_replace_changes_the_asset_but_keeps_the_name():
    _, original, problem = perturbed(GOAL8, "object_replace:category=white_bowl")
    assert problem.category_of("akita_black_bowl_1") == "white_bowl"
    assert problem.object_names() == original.object_names() and problem.goal == original.goal


def test_actuation_noise_perturbs_the_arm_but_not_the_gripper():
    p = build("actuation_noise:sigma=0.2")
    action = np.array([0, 0, 0, 0, 0, 0, 1.0])
    noisy = p.on_action(None, action, np.random.default_rng(0))
    assert np.all(noisy[:6] != 0) and noisy[6] == 1.0


def test_pose_noise_offsets_reported_positions_by_about_sigma():
    p = build("pose_noise:sigma=0.02")
    pos = np.array([0.1, 0.2, 0.9])
    offsets = [p.perceive("x", Pose(pos), np.random.default_rng(i)).pos - pos for i in range(200)]
    assert 0.015 < np.std(offsets) < 0.025


def body_chain(model, geom: int) -> list[int]:
    """The bodies from `geom`'s body up to (not including) the world."""
    chain, b = [], int(model.geom_bodyid[geom])
    while b != 0:
        chain.append(b)
        b = int(model.body_parentid[b])
    return chain


@pytest.mark.slow
def test_reset_kinds_change_the_live_scene_and_added_objects_keep_recorded_states():
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.perturbations.appearance import _object_geoms
    from tether.scenes.perturbations.scene import PerturbedScene

    base = LiberoScene(GOAL8, init_state=0, seed=0)
    try:
        before = {n: base.pose_of(n).pos for n in ("akita_black_bowl_1", "plate_1",
                                                    "cream_cheese_1")}
        model = base._env.env.sim.model._model
        cam, light = model.cam_pos[model.camera("agentview").id].copy(), model.light_diffuse.copy()
        arm = base._data.qpos[list(base._robot._ref_joint_pos_indexes)].copy()
        root = base._bodies["akita_black_bowl_1"]
        bowl_geoms = [g for g in range(model.ngeom) if root in body_chain(model, g)]
        friction = model.geom_friction[bowl_geoms, 0].copy()
        masses = {model.body(b).name: float(model.body_mass[b])
                  for b in {*(int(model.geom_bodyid[g]) for g in bowl_geoms), root}}
    finally:
        base.close()
    specs = ["distractors:n=2", "position_swap:a=akita_black_bowl_1,b=plate_1", "lighting",
             "camera_angle:yaw=25", "recolour:rgb=1 0 0", "friction_mass:friction=0.2,mass=2",
             "robot_init_pose"]
    scene = PerturbedScene(GOAL8, [build(s) for s in specs], init_state=0, seed=0)
    try:
        m = scene.model
        assert len(scene.added_objects()) == 2
        # recorded state transplanted: an object no perturbation touched starts where it did
        assert np.allclose(scene.pose_of("cream_cheese_1").pos, before["cream_cheese_1"],
                           atol=0.01)
        assert np.allclose(scene.pose_of("akita_black_bowl_1").pos[:2],
                           before["plate_1"][:2], atol=0.03)
        assert np.allclose(scene.pose_of("plate_1").pos[:2],
                           before["akita_black_bowl_1"][:2], atol=0.03)
        assert not np.allclose(m.cam_pos[m.camera("agentview").id], cam)
        assert np.all(m.light_diffuse >= light) and np.any(m.light_diffuse > light)
        geoms = _object_geoms(scene, "akita_black_bowl_1")
        assert all(m.geom_matid[g] == -1 and tuple(m.geom_rgba[g, :3]) == (1, 0, 0)
                   for g in geoms)

        def bowl_dynamics():
            """The bowl's sliding frictions and body masses as `friction`, `masses` hold them."""
            return m.geom_friction[geoms, 0].copy(), {
                name: float(m.body_mass[m.body(name).id]) for name in masses}

        scaled_friction, scaled_masses = bowl_dynamics()
        assert len(geoms) == len(friction) and np.allclose(scaled_friction, 0.2 * friction)
        assert scaled_masses == pytest.approx({n: 2 * mass for n, mass in masses.items()})
        moved = scene._data.qpos[list(scene._robot._ref_joint_pos_indexes)]
        assert np.abs(moved - arm).max() > 0.02
        state = scene._env.get_sim_state().copy()
        scene.reset()
        assert np.array_equal(state, scene._env.get_sim_state())  # same seed, same start
        again_friction, again_masses = bowl_dynamics()  # scaled once, not again on each reset
        assert np.allclose(again_friction, scaled_friction) and again_masses == scaled_masses
    finally:
        scene.close()


@pytest.mark.slow
@pytest.mark.parametrize("spec, seed", [("identical_copies", 0), ("distractors", 6),
                                        ("occlusion", 9)])
def test_added_objects_are_set_down_clear_and_knock_nothing_over(spec, seed):
    """Seeds whose added objects used to land on a fixture or a neighbour: a copy thrown off
    the table, a wine bottle knocked off it, a milk carton fallen onto the plate."""
    from tether.scenes.perturbations.scene import PerturbedScene

    scene = PerturbedScene(GOAL8, [build(spec)], init_state=seed, seed=seed)
    try:
        start = {n: scene.true_pose_of(n).pos for n in scene.objects()}
        for _ in range(30):
            scene.step(np.zeros(7))
        regions = {lit[1]: lit[2] for lit in scene.problem.init if lit[0] == "on"}
        for name in scene.added_objects():  # resting on the table, where it was added
            bottom = scene.extent_of(name)[0][2]
            assert abs(bottom - scene.extent_of(regions[name])[1][2]) < 0.01, name
        for name, pos in start.items():  # nothing fell, slid or tipped as the scene settled
            assert np.linalg.norm(scene.true_pose_of(name).pos - pos) < 0.01, name
    finally:
        scene.close()


@pytest.mark.slow
def test_object_move_displaces_the_target_when_the_gripper_comes_within_the_trigger():
    from tether.scenes.perturbations.scene import PerturbedScene

    scene = PerturbedScene("tether/put_the_middle_bowl_on_the_plate",
                           [build("object_move:fallback_step=0")], init_state=0, seed=0)
    try:
        bowl = scene.pose_of("middle bowl").pos
        goal = bowl + np.array([0, 0, 0.05])
        quat = scene.eef_pose().quat
        for _ in range(150):
            if scene.perturbation_state["object_move"]["moved_at"] is not None:
                break
            assert np.linalg.norm(scene.eef_pose().pos - bowl) >= 0.09 - 0.02
            scene.step(scene.servo(goal, quat, -1.0))
        state = scene.perturbation_state["object_move"]
        assert state["moved_at"] is not None
        assert np.linalg.norm(scene.pose_of("middle bowl").pos[:2] - bowl[:2]) > 0.06
    finally:
        scene.close()


@pytest.mark.slow
def test_object_move_sets_the_object_down_clear_of_its_neighbours():
    """The seeded direction at this init state would put the bowl half onto the plate (the
    plate then flew off the table as the two came apart); the move takes the nearest clear
    turn of it instead, as LIBERO-PRO's runtime move does."""
    from tether.scenes.perturbations.scene import PerturbedScene

    scene = PerturbedScene("libero_goal/put_the_bowl_on_the_plate",
                           [build("object_move:at_step=1")], init_state=15, seed=15)
    try:
        plate = scene.true_pose_of("plate_1").pos
        bowl = scene.true_pose_of("akita_black_bowl_1").pos
        for _ in range(20):
            scene.step(np.zeros(7))
        state = scene.perturbation_state["object_move"]
        assert state["moved_at"] == 1
        assert np.linalg.norm(state["to"][:2] - bowl[:2]) >= 0.08
        assert np.linalg.norm(scene.true_pose_of("plate_1").pos - plate) < 0.002
        assert abs(scene.true_pose_of("akita_black_bowl_1").pos[2] - bowl[2]) < 0.01
    finally:
        scene.close()


def test_every_kind_is_documented():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "perturbations.md").read_text()
    assert all(f"| `{name}` |" in doc for name in REGISTRY)
