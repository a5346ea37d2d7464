"""`LiberoScene`: real LIBERO tasks behind the `Robot` interface (simulated, so marked slow)."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes.libero_scene import LiberoScene
from tether.scenes.predicates import evaluate
from tether.scenes.robot import CLOSE, OPEN, Robot

pytestmark = pytest.mark.slow

BOWL, PLATE = "akita_black_bowl_1", "plate_1"


@pytest.fixture(scope="module")
def goal_scene():
    scene = LiberoScene("libero_goal/put_the_bowl_on_the_plate", init_state=0, seed=0)
    yield scene
    scene.close()


@pytest.fixture(scope="module")
def spatial_scene():
    scene = LiberoScene("libero_spatial/0", init_state=0, seed=0)
    yield scene
    scene.close()


@pytest.fixture
def scene(goal_scene):
    goal_scene.reset(0, 0)
    return goal_scene


def _snapshot(scene: LiberoScene) -> np.ndarray:
    poses = [scene.pose_of(n) for n in scene.entities()] + [scene.eef_pose()]
    return np.concatenate([np.r_[p.pos, p.quat] for p in poses] + [[scene.gripper_width()]])


def _random_actions(n: int) -> np.ndarray:
    return np.random.default_rng(7).uniform(-1, 1, (n, 7))


def test_entities_are_the_tasks_objects_fixtures_and_regions(scene):
    entities = scene.entities()
    assert entities[:4] == [BOWL, "cream_cheese_1", "wine_bottle_1", PLATE]
    assert {"wooden_cabinet_1", "flat_stove_1", "wine_rack_1"} <= set(entities)
    assert {"main_table_plate_region", "wooden_cabinet_1_top_region"} <= set(entities)


def test_after_settling_the_bowl_rests_on_the_table_and_is_the_start_pose(scene):
    bowl = scene.pose_of(BOWL)
    assert bowl.pos[2] == pytest.approx(0.898, abs=0.01)
    assert np.linalg.norm(bowl.quat) == pytest.approx(1.0)
    assert np.array_equal(scene.start_pose_of(BOWL).pos, bowl.pos)
    assert scene.pose_of(PLATE).pos[2] == pytest.approx(0.90, abs=0.01)


def test_quaternions_are_xyzw(scene):
    # the bowl stands upright, turned about z only: x = y = 0 and w is the 4th component
    q = scene.pose_of(BOWL).quat
    assert abs(q[0]) < 1e-3 and abs(q[1]) < 1e-3
    # the gripper points down: its z axis is the world's -z
    from scipy.spatial.transform import Rotation

    z_axis = Rotation.from_quat(scene.eef_pose().quat).as_matrix()[:, 2]
    assert z_axis[2] < -0.99


def test_extent_of_a_body_is_a_tight_world_box_around_it(scene):
    low, high = scene.extent_of(BOWL)
    pos = scene.pose_of(BOWL).pos
    assert np.all(low[:2] < pos[:2]) and np.all(pos[:2] < high[:2])
    assert low[2] == pytest.approx(pos[2], abs=0.005)  # the bowl's origin is its base
    radius = (high[:2] - low[:2]) / 2
    assert np.allclose(radius, 0.0555, atol=0.005)  # the rim, not a loose geom_aabb box
    assert 0.04 < high[2] - low[2] < 0.07


def test_a_region_is_posed_and_bounded_by_its_site(scene):
    region = scene.pose_of("main_table_plate_region")
    low, high = scene.extent_of("main_table_plate_region")
    assert np.allclose((low + high) / 2, region.pos)
    assert np.all(high > low)


def test_goal_literals_are_tuples_of_canonical_names(scene):
    assert scene.goal() == [("on", BOWL, PLATE)]


def test_success_is_false_at_the_start_and_agrees_with_libero(scene):
    assert scene.success() is False
    assert not scene._env.check_success()
    assert scene.goal_predicate("on", [BOWL, PLATE]) is False
    assert evaluate(scene, "task_success", {}) is False


def test_an_unknown_goal_predicate_says_did_you_mean(scene):
    with pytest.raises(TetherError, match="did you mean 'open'"):
        scene.goal_predicate("opne", ["wooden_cabinet_1_top_region"])


def test_aliases_resolve_against_the_scenes_entities(scene):
    assert scene.resolve("black bowl") == BOWL
    assert scene.resolve("plate") == PLATE
    assert np.array_equal(scene.pose_of("bowl").pos, scene.pose_of(BOWL).pos)
    with pytest.raises(TetherError, match="did you mean"):
        scene.pose_of("plat")


def test_the_gripper_starts_open_and_grasps_nothing(scene):
    assert scene.gripper_width() == pytest.approx(0.078, abs=0.003)
    assert evaluate(scene, "gripper_open", {})
    assert scene.is_grasped(BOWL) is False
    with pytest.raises(TetherError, match="region"):
        scene.is_grasped("main_table_plate_region")


def test_settling_does_not_count_and_each_step_is_one_control_period(scene):
    assert scene.steps == 0 and scene.control_dt == pytest.approx(0.05)
    scene.step(np.zeros(7))
    assert scene.steps == 1 and scene.sim_time == pytest.approx(0.05)


def test_hold_keeps_the_end_effector_still(scene):
    start = scene.eef_pose()
    for _ in range(30):
        scene.hold()
    end = scene.eef_pose()
    assert scene.steps == 30
    assert np.linalg.norm(end.pos - start.pos) < 0.001
    assert abs(np.dot(end.quat, start.quat)) > 0.9999


def test_the_surface_of_a_region_is_what_bears_it_and_of_an_object_its_top(scene):
    # the stove's cook region is a thin box 0.5 cm above the table; a pot set there stands on
    # the burner's collision box (fully transparent), 3 cm above the table, not on the stove's
    # top under it; a table region's surface is the table's top
    cook, front = "flat_stove_1_cook_region", "main_table_stove_front_region"
    assert scene.extent_of(cook)[1][2] == pytest.approx(0.908, abs=0.002)
    assert scene.surface(cook) == pytest.approx(0.9305, abs=0.002)
    assert scene.surface(front) == pytest.approx(0.900, abs=0.002)
    assert scene.surface(PLATE) == scene.extent_of(PLATE)[1][2]


def test_observe_gives_robot_state_and_no_images_without_cameras(scene):
    obs = scene.observe()
    assert obs["eef_pos"].shape == (3,) and obs["eef_quat"].shape == (4,)
    assert obs["gripper_qpos"].shape == (2,) and obs["joint_pos"].shape == (7,)
    assert "images" not in obs


def test_same_task_init_state_and_seed_give_identical_poses_after_identical_steps(scene):
    actions = _random_actions(25)
    for a in actions:
        scene.step(a)
    first = _snapshot(scene)
    scene.reset(0, 0)
    for a in actions:
        scene.step(a)
    assert np.array_equal(_snapshot(scene), first)
    other = LiberoScene("libero_goal/put_the_bowl_on_the_plate", init_state=0, seed=0)
    try:
        for a in actions:
            other.step(a)
        assert np.array_equal(_snapshot(other), first)
    finally:
        other.close()


def test_a_reset_places_the_fixtures_the_same_whatever_ran_before():
    """The wooden cabinet (no joint of its own: the init state does not pose it) stands where
    LIBERO's seeded placement puts it, the same at every reset of one init state and seed."""
    scene = LiberoScene("libero_spatial/4", init_state=4, seed=4)
    try:
        first, cabinet = _snapshot(scene), scene.pose_of("wooden_cabinet_1").pos
        for k in (1, 4):
            scene.reset(k, k)
            assert np.array_equal(_snapshot(scene), first) == (k == 4)
        other = LiberoScene("libero_spatial/4", init_state=1, seed=1)
        other.reset(4, 4)
        assert np.array_equal(other.pose_of("wooden_cabinet_1").pos, cabinet)
        other.close()
    finally:
        scene.close()


def test_another_init_state_starts_elsewhere(scene):
    first = scene.pose_of(BOWL).pos
    scene.reset(init_state=1)
    assert not np.allclose(scene.pose_of(BOWL).pos, first)
    with pytest.raises(TetherError, match="initial states 0..49"):
        scene.reset(init_state=50)


def test_cameras_render_images_of_the_requested_size():
    scene = LiberoScene("libero_goal/8", cameras=("agentview",), image_size=(64, 96))
    try:
        image = scene.observe()["images"]["agentview"]
        assert image.shape == (64, 96, 3) and image.dtype == np.uint8
        assert image.std() > 10  # a real scene, not a blank frame
    finally:
        scene.close()


def test_two_bowls_make_bowl_ambiguous(spatial_scene):
    assert {BOWL, "akita_black_bowl_2"} <= set(spatial_scene.entities())
    with pytest.raises(TetherError, match="ambiguous"):
        spatial_scene.resolve("bowl")
    assert spatial_scene.goal() == [("on", BOWL, PLATE)]


def _goto(robot: Robot, pos: np.ndarray, quat: np.ndarray, gripper: float, trace: list) -> None:
    for _ in range(80):
        if np.linalg.norm(robot.eef_pose().pos - pos) < 0.005:
            return
        robot.step(robot.servo(pos, quat, gripper))
        trace.append(robot)


def _wait(robot: Robot, quat: np.ndarray, gripper: float, trace: list, n: int = 10) -> None:
    here = robot.eef_pose().pos.copy()
    for _ in range(n):
        robot.step(robot.servo(here, quat, gripper))
        trace.append(robot)


class _Agreement(list):
    """Records, after every step, whether `success()` agreed with LIBERO's `check_success()`."""

    def append(self, scene) -> None:
        super().append((scene.success(), scene._env.check_success()))


def test_a_scripted_rim_grasp_places_the_bowl_and_success_agrees_with_libero(spatial_scene):
    scene, trace = spatial_scene, _Agreement()
    scene.reset(0, 0)
    quat = scene.eef_pose().quat
    rim = scene.pose_of(BOWL).pos + [0.0, 0.045, 0.0]  # fingers close along y: pinch the wall
    _goto(scene, rim + [0, 0, 0.10], quat, OPEN, trace)
    _goto(scene, rim + [0, 0, 0.03], quat, OPEN, trace)
    _wait(scene, quat, CLOSE, trace)
    _goto(scene, scene.eef_pose().pos + [0, 0, 0.15], quat, CLOSE, trace)
    assert evaluate(scene, "lifted", {"object": BOWL, "height": 0.08})
    assert scene.is_grasped(BOWL)
    above = scene.pose_of(PLATE).pos + [0.0, 0.045, 0.0]
    _goto(scene, np.r_[above[:2], scene.eef_pose().pos[2]], quat, CLOSE, trace)
    _goto(scene, above + [0, 0, 0.06], quat, CLOSE, trace)
    _wait(scene, quat, OPEN, trace)
    _goto(scene, scene.eef_pose().pos + [0, 0, 0.10], quat, OPEN, trace)
    assert scene.success() and scene._env.check_success()
    assert all(ours == libero for ours, libero in trace)
    assert (True, True) in trace and (False, False) in trace


def test_the_microwaves_door_hinge_is_read_from_its_joint():
    scene = LiberoScene("libero_10/9", init_state=0, seed=0)
    try:
        hinge = scene.hinge_of("microwave")  # an alias works too
        # the hinge stands at the opening's left edge; the door is open a quarter turn, toward -y
        assert hinge.anchor == pytest.approx([-0.181, 0.252, 1.016], abs=0.005)
        assert hinge.closing == 1  # it shuts counter-clockwise seen from above
        along, out = hinge.frame()
        assert along[1] < -0.95 and out[0] < -0.95  # pushed shut from its -x side
        assert not scene.goal_predicate("close", ["microwave_1"])
        with pytest.raises(TetherError, match="'porcelain_mug_1' has no hinged door"):
            scene.hinge_of("porcelain_mug_1")
    finally:
        scene.close()


@pytest.mark.parametrize("task, mug, moves", [
    ("libero_10/9", "white_yellow_mug_1", False),
    ("libero_10_task/9", "porcelain_mug_1", True),  # the other mug stands where the hand would
])
def test_a_mug_is_staged_before_the_microwave_where_the_level_hand_has_room(task, mug, moves):
    scene = LiberoScene(task, init_state=0, seed=0)
    try:
        room = np.array([[-0.105, -0.215], [0.105, -0.05]])  # slide_in's level hand
        near = scene.pose_of("microwave_1_heating_region").pos[:2] + [-0.04, -0.21]
        spot = scene.spot_with_room(mug, near, room)
        assert bool(np.linalg.norm(spot - near) > 0.05) == moves
        table = scene.pose_of(mug).pos[2] + 0.01

        def bare(at):  # the hand's rectangle seen from above, a point every cm
            xs, ys = (np.arange(at[i] + room[0][i], at[i] + room[1][i] + 1e-9, 0.01)
                      for i in (0, 1))
            return scene.clear_from_above([np.array([x, y, table]) for x in xs for y in ys],
                                          ignore=mug)

        assert bare(spot) and bare(near) != moves
    finally:
        scene.close()


def test_joints_are_read_from_the_model():
    """A drawer's region moves on its slide (out toward +y for the wooden cabinet as LIBERO
    stands it), the stove's knob on a hinge whose bar's near end lies toward -x, turning on toward
    -y."""
    scene = LiberoScene("libero_goal/turn_on_the_stove", init_state=0, seed=0)
    try:
        drawer = scene.joint_of("wooden_cabinet_1_top_region")
        assert drawer.kind == "slide" and drawer.travel == pytest.approx(0.16)
        assert drawer.opening() == pytest.approx([0.0, 1.0, 0.0], abs=1e-6)
        assert drawer.origin == pytest.approx(scene.pose_of("wooden_cabinet_1_top_region").pos)
        assert drawer.frame() == pytest.approx(np.eye(3), abs=1e-6)
        knob = scene.joint_of("flat_stove_1")
        assert knob.kind == "hinge" and knob.open == pytest.approx(0.0, abs=1e-6)
        assert knob.arm == pytest.approx([-1.0, 0.0, 0.0], abs=0.01)
        assert knob.opening() == pytest.approx([0.0, -1.0, 0.0], abs=0.01)
        # turning off: the same end, pushed the other way (a mirror image)
        assert knob.frame(closing=True)[:, :2].T == pytest.approx(
            np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), abs=0.01)
        with pytest.raises(TetherError, match="'plate_1' has no joint"):
            scene.joint_of("plate_1")
        assert scene.headroom("wooden_cabinet_1_top_region") == pytest.approx(0.035, abs=0.005)
        # the drawer's body (walls, front and handle) sweeps out 16 cm past the cabinet's front
        low, high = scene.swept("wooden_cabinet_1_top_region")
        cabinet = scene.extent_of("wooden_cabinet_1")
        assert high[1] == pytest.approx(cabinet[1][1] + 0.16, abs=0.005)
        assert low[1] == pytest.approx(cabinet[0][1], abs=0.03)
        assert low[2] > scene.extent_of("wooden_cabinet_1_middle_region")[1][2]
        with pytest.raises(TetherError, match="no sliding part"):
            scene.swept("flat_stove_1")
    finally:
        scene.close()


def test_clear_from_above_passes_the_hand_and_the_ignored_object_by_as_a_cast_that_skips_them(
        scene):
    """One ray per point with the hand and the ignored object out of sight answers as casting
    past each of their hits again; the model's geom groups are left as they were."""
    model = scene._env.env.sim.model._model
    groups = model.geom_group.copy()
    hand = scene.eef_pose().pos
    low, high = scene.extent_of(BOWL)
    points = [np.array([x, y, z]) for x in np.linspace(low[0] - 0.03, high[0] + 0.03, 5)
              for y in np.linspace(low[1] - 0.03, high[1] + 0.03, 5)
              for z in (low[2] + 0.01, high[2] - 0.005, high[2] + 0.02)]
    points += [hand + [dx, dy, -dz] for dx in (-0.02, 0.0, 0.02) for dy in (-0.04, 0.0, 0.04)
               for dz in (0.03, 0.08, 0.15)]  # the hand's fingers lie on these rays
    answers = {}
    for ignore in (BOWL, PLATE):
        skip = set(scene._extents.geoms[ignore]) | scene._robot_geoms
        for point in points:
            with scene._opaque():
                skipping = scene._cast(point + [0, 0, scene.CLEARANCE], -1.0, skip)
            answer = scene.clear_from_above([point], ignore=ignore)
            assert answer == (skipping > scene.CLEARANCE)
            answers[ignore, answer] = answers.get((ignore, answer), 0) + 1
    assert np.array_equal(model.geom_group, groups)
    assert answers[BOWL, True] > answers.get((PLATE, True), 0) > 0 and answers[PLATE, False] > 0
    with scene._opaque():  # rays from above the hand meet it when it is not skipped
        assert scene._cast(hand + [0, 0, scene.CLEARANCE], -1.0, set()) < scene.CLEARANCE


def test_a_transparent_collision_box_is_in_the_way_of_what_comes_down():
    # libero_goal/5's cream cheese collides as a box that is fully transparent, which `mj_ray`
    # passes over: the cast sees it all the same, for grasp clearance and carry ways alike
    scene = LiberoScene("libero_goal/push_the_plate_to_the_front_of_the_stove", init_state=0,
                        seed=0)
    try:
        low, high = scene.extent_of("cream_cheese_1")
        inside = np.array([*(low[:2] + high[:2]) / 2, high[2] - 0.005])
        assert not scene.clear_from_above([inside], ignore=PLATE)
        assert scene.clear_from_above([inside], ignore="cream_cheese_1")
    finally:
        scene.close()


def test_a_carry_past_a_cabinet_goes_around_its_corner_and_one_in_the_open_straight(
        monkeypatch):
    # LIBERO-PRO's libero_spatial_swap/6: the wooden cabinet (its top at 1.13 m) stands between
    # the bowl and the plate on the stove; nothing stands between the bowl and the cookie box
    scene = LiberoScene("libero_spatial_swap/6", init_state=0, seed=0)
    try:
        low, high = scene.extent_of(BOWL)
        lifted = (low + [0, 0, 0.15], high + [0, 0, 0.15])  # as the grasp leaves it
        extent_of = scene.extent_of
        monkeypatch.setattr(scene, "extent_of", lambda n: lifted if n == BOWL else extent_of(n))
        start = np.array([*(low[:2] + high[:2]) / 2, lifted[1][2] + 0.02])
        over_plate = scene.pose_of(PLATE).pos + [0, 0, 0.15]
        cabinet = extent_of("wooden_cabinet_1")
        way = scene.carry_way(BOWL, start, over_plate, past=PLATE)
        assert way and all(p[2] == start[2] for p in way)  # around, at the carry's height
        half = (high[1] - low[1]) / 2
        assert all(p[1] - half > cabinet[1][1] or p[0] + half < cabinet[0][0] for p in way)
        over_box = scene.pose_of("cookies_1").pos + [0, 0, 0.15]
        assert scene.carry_way(BOWL, start, over_box, past="cookies_1") == []
    finally:
        scene.close()


def test_the_open_hand_comes_over_a_basket_rim_and_straight_through_the_open():
    # LIBERO-PRO's libero_10_swap/1: from over the basket (a cream cheese just let go in it) to
    # over the butter beside it, the open fingertips would cross the rim coming down; from the
    # start pose nothing stands between
    scene = LiberoScene("libero_10_swap/1", init_state=0, seed=0)
    try:
        low, high = scene.extent_of("basket_1")
        butter_low, butter_high = scene.extent_of("butter_1")
        goal = np.array([*(butter_low[:2] + butter_high[:2]) / 2, butter_high[2] + 0.07])
        for above in (0.0, 0.08):
            start = np.array([*(low[:2] + high[:2]) / 2, high[2] + above])
            way = scene.carry_way(None, start, goal, past="butter_1")
            assert way and np.allclose(way[-1][:2], goal[:2])  # across, then straight down
            assert all(p[2] >= start[2] and p[2] - 0.01 >= high[2] for p in way)
        assert scene.carry_way(None, scene.eef_pose().pos, goal, past="butter_1") == []
    finally:
        scene.close()


def test_set_down_on_an_object_keeps_the_hand_off_a_tall_neighbour():
    """"the cream cheese on the bowl": in libero_goal the bowl's middle is free for the hand;
    swapped beside the wine rack (init state 2) the wrist turns a quarter over the middle, so
    that the hand (20 cm along the axis its fingers close on) clears the rack."""
    for task, turned in (("libero_goal/put_the_cream_cheese_in_the_bowl", False),
                         ("libero_goal_swap/put_the_cream_cheese_in_the_bowl", True)):
        scene = LiberoScene(task, init_state=2, seed=0)
        try:
            middle = scene.pose_of(BOWL).pos[:2]
            spot, turn = scene.set_down(BOWL, "cream_cheese_1", middle)
            assert turn == turned and np.allclose(spot, middle)
        finally:
            scene.close()


def test_a_cartons_gable_of_thin_panels_is_its_thin_top_and_a_bottles_cap_is_not():
    scene = LiberoScene("libero_object/9", init_state=0, seed=0)
    try:
        assert scene.thin_top("orange_juice_1") == pytest.approx(0.032, abs=0.002)
        for solid in ("ketchup_1", "salad_dressing_1", "bbq_sauce_1", "butter_1"):
            assert scene.thin_top(solid) == 0.0
    finally:
        scene.close()
