"""Tick contracts of the analytic primitives (`behaviours/primitives.py`), compiled from YAML and
run through the real tick loop against a `KinematicScene`."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.trees.harness import (
    BOWL,
    BOXES,
    CHEESE,
    PLATE,
    Status,
    compile_node,
    errors,
    move_box,
    run,
    scene,
    statuses,
)
from tether.behaviours.primitives import Release, Target
from tether.scenes.handles import Handle
from tether.scenes.kinematic import KinematicScene
from tether.scenes.robot import CLOSE, OPEN
from tether.trees.source import TreeError

RUNNING, SUCCESS, FAILURE = Status.RUNNING, Status.SUCCESS, Status.FAILURE


def _yaw(robot) -> float:
    return robot.eef_pose().yaw


# --- move_to -----------------------------------------------------------------------------------
def test_move_to_is_running_across_ticks_commanding_once_per_tick_until_within_tolerance(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "move_to: {target: [0.1, 0.0, 0.2], name: go}", robot)
    result, frames = run(root, robot)

    assert result.tree_status == "SUCCESS"
    assert len(frames) > 3
    *moving, last = frames
    assert all(f.status["go"] == RUNNING and f.commander == "go" for f in moving)
    assert [f.steps for f in moving] == list(range(1, len(moving) + 1))  # one step per tick
    assert last.status["go"] == SUCCESS
    assert np.linalg.norm(last.eef - [0.1, 0.0, 0.2]) <= 0.01


def test_move_to_does_not_command_on_the_tick_it_succeeds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "move_to: {target: [0.0, 0.0, 0.25], name: go}", robot)
    _, frames = run(root, robot)
    assert frames[-1].status["go"] == SUCCESS
    assert frames[-1].action is None
    assert frames[-1].steps == frames[-2].steps  # the episode ended without another step


def test_move_to_tolerance_is_the_success_radius(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "move_to: {target: [0.0, 0.0, 0.2], tolerance: 0.05}", robot)
    _, frames = run(root, robot)
    distance = np.linalg.norm(frames[-1].eef - [0.0, 0.0, 0.2])
    assert 0.01 < distance <= 0.05


def test_move_to_an_object_with_offset_goes_to_its_centre_plus_the_offset(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"move_to: {{object: {BOWL}, offset: [0, 0, 0.1]}}", robot)
    _, frames = run(root, robot)
    assert np.linalg.norm(frames[-1].eef - [0.10, 0.0, 0.12]) <= 0.01


@pytest.mark.parametrize(("at", "z"), [("top", 0.04 + 0.05), ("bottom", 0.0 + 0.05),
                                       ("center", 0.02 + 0.05)])
def test_move_to_at_picks_the_top_bottom_or_centre_of_the_object(tmp_path, at, z):
    robot = scene()
    root = compile_node(
        tmp_path, f"move_to: {{object: {BOWL}, at: {at}, offset: [0, 0, 0.05]}}", robot)
    _, frames = run(root, robot)
    assert np.linalg.norm(frames[-1].eef - [0.10, 0.0, z]) <= 0.01


def test_move_to_with_room_goes_to_the_spot_the_scene_finds_once(tmp_path):
    """`room`: the point moves, as the node starts, to where the scene finds the carried
    object and the hand's rectangle beside it room (`Robot.spot_with_room`)."""

    class Crowded(type(scene())):
        asked = []

        def spot_with_room(self, carried, near, room, keep_out=None):
            assert keep_out is None  # no `clear_of`
            self.asked.append((carried, tuple(np.round(near, 3)), np.asarray(room).tolist()))
            return np.asarray(near) + [0.0, 0.1]

    robot = Crowded(BOXES)
    root = compile_node(tmp_path, f"""
        sequence:
          - move_to: {{object: {BOWL}, at: grasp}}
          - set_gripper: close
          - move_to: {{object: {PLATE}, offset: [0, 0, 0.08], carrying: {BOWL},
                       room: [[-0.1, -0.2], [0.1, -0.05]]}}
        """, robot)
    _, frames = run(root, robot)
    plate = robot.pose_of(PLATE).pos
    assert Crowded.asked == [(BOWL, tuple(np.round(plate[:2], 3)), [[-0.1, -0.2], [0.1, -0.05]])]
    bowl = robot.extent_of(BOWL)
    bottom = np.array([(bowl[0][0] + bowl[1][0]) / 2, (bowl[0][1] + bowl[1][1]) / 2, bowl[0][2]])
    assert np.linalg.norm(bottom - (plate + [0.0, 0.1, 0.08])) <= 0.015


def test_move_to_accepts_an_alias_of_the_object_name(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "move_to: {object: black bowl, offset: [0, 0, 0.1]}", robot)
    assert BOWL in root.name
    _, frames = run(root, robot)
    assert np.linalg.norm(frames[-1].eef - [0.10, 0.0, 0.12]) <= 0.01


def test_move_to_relative_target_is_an_offset_from_where_the_node_started(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - move_to: [0.1, 0.1, 0.2]
          - move_to: {relative: [0, 0, 0.05]}
        """, robot)
    _, frames = run(root, robot)
    assert np.linalg.norm(frames[-1].eef - [0.1, 0.1, 0.25]) <= 0.01


def test_move_to_re_reads_its_target_every_tick_so_a_moving_object_is_followed(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"move_to: {{object: {BOWL}, offset: [0, 0, 0.1]}}", robot)
    # 8.5 cm a tick, to (-0.2, -0.3): as a pushed object's camera estimate jumps from look to look
    slide = {k: move_box(BOWL, [0.10 - 0.06 * k, -0.06 * k, 0.02]) for k in range(1, 6)}
    result, frames = run(root, robot, events=slide)
    assert result.tree_status == "SUCCESS" and not errors()
    assert np.linalg.norm(frames[-1].eef - [-0.2, -0.3, 0.12]) <= 0.01


def test_move_to_searches_its_grasp_point_again_only_when_something_but_the_arm_moved(
        tmp_path, monkeypatch):
    robot = scene()
    root = compile_node(tmp_path, f"move_to: {{object: {BOWL}, at: grasp_clear, "
                                  "offset: [0, 0, 0.1], name: go}", robot)
    searched = []
    grasp = Target.grasp
    monkeypatch.setattr(Target, "grasp", lambda self, robot: searched.append(robot.steps) or
                        grasp(self, robot))
    result, frames = run(root, robot, events={3: move_box(BOWL, [0.11, 0.0, 0.02])})
    assert result.tree_status == "SUCCESS" and len(frames) > 6
    assert searched == [0, 3]  # as the node starts, and the tick after the bowl moved
    assert np.linalg.norm(frames[-1].eef - [0.11, 0.0, 0.12]) <= 0.01


def test_move_to_a_grasp_fails_target_moved_when_its_object_jumps_and_does_not_chase_it(
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"move_to: {{object: {BOWL}, at: grasp_clear, "
                                  "offset: [0, 0, 0.1], name: go}", robot)
    result, frames = run(root, robot, events={2: move_box(BOWL, [0.10, -0.06, 0.02])})
    assert statuses(frames, "go") == [RUNNING] * 2 + [FAILURE]  # moved right after tick 2
    assert frames[-1].action is None
    assert [(e["code"], e["message"]) for e in errors()] == [
        ("TARGET_MOVED", f"{BOWL} moved 6.0 cm at once")]


def test_move_to_carrying_puts_the_carried_objects_bottom_at_the_target(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - move_to: {{object: {BOWL}}}
          - set_gripper: close
          - move_to: {{object: {PLATE}, at: top, offset: [0, 0, 0.05], carrying: {BOWL}}}
        """, robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    low, high = robot.extent_of(BOWL)
    plate_top = robot.extent_of(PLATE)[1][2]
    assert abs(low[2] - (plate_top + 0.05)) <= 0.01
    assert np.linalg.norm((low + high)[:2] / 2 - [0.25, 0.0]) <= 0.01


@pytest.mark.parametrize("start, over", [(0.30, 0.25), (0.20, 0.20), (0.05, 0.10)])
def test_a_rising_target_is_raised_up_to_its_rise_but_never_above_the_start(tmp_path, start,
                                                                              over):
    """Over the plate 10 cm up, rising up to 15 cm: from 30 cm up it comes over at 25, from 20
    at 20 (no climb), from 5 cm at 10 (never below the point itself)."""
    robot = scene()
    plate_top = robot.extent_of(PLATE)[1][2]  # heights are the end effector's above it
    root = compile_node(tmp_path, f"""
        sequence:
          - move_to: {{target: [0.0, 0.0, {plate_top + start}], tolerance: 0.002}}
          - move_to: {{object: {PLATE}, at: top, offset: [0, 0, 0.1], rise: 0.15, name: carry}}
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    plate = robot.pose_of(PLATE).pos
    assert np.linalg.norm(frames[-1].eef[:2] - plate[:2]) <= 0.01
    assert abs(frames[-1].eef[2] - (plate_top + over)) <= 0.01
    if start >= over:
        assert max(f.eef[2] for f in frames if f.commander == "carry") <= plate_top + start + 0.005


def test_move_to_fails_unreachable_after_max_steps_ticks(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "move_to: {target: [0.4, 0.4, 0.3], max_steps: 5, name: go}",
                        robot)
    result, frames = run(root, robot)
    assert statuses(frames, "go") == [RUNNING] * 5 + [FAILURE]
    assert frames[-1].action is None
    assert [e["code"] for e in errors()] == ["UNREACHABLE"]
    assert result.steps == 5


class _BlockedArm(KinematicScene):
    """An arm that does not move whatever it is commanded (a collision, a jammed joint)."""

    def _apply(self, action):
        pass


def test_move_to_fails_stuck_after_stuck_steps_ticks_without_progress(tmp_path):
    robot = _BlockedArm(BOXES)
    root = compile_node(tmp_path, "move_to: {target: [0.1, 0, 0.1], stuck_steps: 4, name: go}",
                        robot)
    result, frames = run(root, robot)
    assert result.tree_status == "FAILURE"
    assert [e["code"] for e in errors()] == ["STUCK"]
    # the first tick sets the best distance, then 4 ticks without 2 mm of progress
    assert len(frames) == 5 and result.steps == 4


def test_move_to_yaw_turns_the_wrist_to_that_world_yaw_while_moving(tmp_path):
    robot = scene()
    assert _yaw(robot) == pytest.approx(0.0)
    root = compile_node(tmp_path, "move_to: {target: [0.0, 0.0, 0.1], yaw: 0.5}", robot)
    run(root, robot)
    # success is judged on position only; over a 20 cm move the wrist has turned too
    assert _yaw(robot) == pytest.approx(0.5, abs=0.03)


def test_move_to_without_yaw_keeps_the_orientation_it_started_with(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{rotate: 0.3}, {move_to: [0.1, 0.1, 0.1]}]", robot)
    run(root, robot)
    assert _yaw(robot) == pytest.approx(0.3, abs=0.03)


def _approach_a_grasp_tilted(tmp_path, pitch: float):
    """The hand pitched by `pitch` rad, then turned toward the cheese's grasp at yaw 0.3."""
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - rotate: {{yaw: {pitch}, axis: y}}
          - move_to: {{object: {CHEESE}, at: grasp_clear, offset: [0, 0, 0.1], yaw: 0.3}}
        """, robot)
    result, _ = run(root, robot)
    return result, robot


def test_an_approach_to_a_grasp_rights_a_tilted_hand_to_point_straight_down(tmp_path):
    """A hand tilted 25 degrees by an earlier contact comes down on a grasp point pointing
    straight down, at the grasp's yaw: tilted, one fingertip reaches the table first."""
    result, robot = _approach_a_grasp_tilted(tmp_path, -0.44)
    assert result.tree_status == "SUCCESS"
    assert np.allclose(_pointing(robot), [0.0, 0.0, -1.0], atol=0.05)
    assert _yaw(robot) == pytest.approx(0.3, abs=0.05)


def test_an_approach_to_a_grasp_keeps_a_hand_tilted_a_few_degrees(tmp_path):
    """A tilt within TILT_TOLERANCE (the start pose's few degrees, which a reach to a raised
    object may need) is kept: only a hand tilted further, by an earlier contact, is righted."""
    result, robot = _approach_a_grasp_tilted(tmp_path, -0.08)
    assert result.tree_status == "SUCCESS"
    assert 3.0 < np.degrees(np.arccos(-_pointing(robot)[2])) < 10.0  # kept, not righted to 0
    assert _yaw(robot) == pytest.approx(0.3, abs=0.05)


class WalledScene(KinematicScene):
    """The harness scene with a wall between the bowl and the plate, which a carry crosses
    12 cm higher than it starts (`Robot.carry_way`); it keeps what each carry may pass over."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pasts, self.carried = [], []

    def carry_way(self, carried, start, goal, *, past):
        self.carried.append(carried)
        self.pasts.append(past)
        return [np.array([*start[:2], start[2] + 0.12]), np.array([*goal[:2], start[2] + 0.12])]


def _carry_bowl_to_plate(tmp_path, robot, offset=(0, 0, 0.05)):
    """Close the gripper on the bowl and carry it to `offset` from the plate's top by an
    `avoid` target: the frames, and the end effector's positions while the carry commanded."""
    root = compile_node(tmp_path, f"""
        sequence:
          children:
            - set_gripper: close
            - name: over
              move_to: {{target: {{object: plate_1, at: top, offset: {list(offset)},
                                  carrying: akita_black_bowl_1, avoid: true}}}}
        """, robot)
    _, frames = run(root, robot)
    return frames, np.array([f.eef for f in frames if f.commander == "over"])


def test_a_carry_follows_its_way_up_across_and_down(tmp_path):
    robot = WalledScene(BOXES, goal=[("on", BOWL, PLATE)], eef=(0.10, 0.0, 0.02))
    frames, way = _carry_bowl_to_plate(tmp_path, robot)
    assert frames[-1].status["over"] == SUCCESS
    up = int(np.argmax(way[:, 2] >= 0.14 - 0.02))  # where it passes the way's first point
    assert up > 3 and np.allclose(way[:up, :2], [0.10, 0.0], atol=0.01)  # straight up first
    assert way[:, 2].max() == pytest.approx(0.14, abs=0.01)
    assert frames[-1].eef == pytest.approx([0.25, 0.0, 0.08], abs=0.01)  # then down to it
    assert robot.pasts == [PLATE]  # set down on the plate: the plate is not in its way
    assert robot.carried == [BOWL]


def test_an_open_hand_with_avoid_follows_the_way_of_its_fingertips(tmp_path):
    """Without `carrying`, an `avoid` target asks the scene for the open fingertips' way
    (`Robot.carry_way` with None) and follows it up, across and down."""
    robot = WalledScene(BOXES, goal=[("on", BOWL, PLATE)], eef=(0.10, 0.0, 0.02))
    root = compile_node(tmp_path, """
        name: over
        move_to: {target: {object: plate_1, at: top, offset: [0, 0, 0.05], avoid: true}}
        """, robot)
    _, frames = run(root, robot)
    way = np.array([f.eef for f in frames if f.commander == "over"])
    assert frames[-1].status["over"] == SUCCESS and robot.carried == [None]
    assert way[:, 2].max() == pytest.approx(0.14, abs=0.01)
    top = np.array([*robot.pose_of(PLATE).pos[:2], robot.extent_of(PLATE)[1][2] + 0.05])
    assert frames[-1].eef == pytest.approx(top, abs=0.01)


def test_a_carry_to_beside_its_target_keeps_the_target_in_its_way(tmp_path):
    """A carry to a point off the target's footprint (a mug staged in front of a microwave)
    goes around the target too: only what the object is set down on is passed over."""
    robot = WalledScene(BOXES, goal=[("on", BOWL, PLATE)], eef=(0.10, 0.0, 0.02))
    frames, _ = _carry_bowl_to_plate(tmp_path, robot, offset=(0.0, -0.12, 0.05))
    assert frames[-1].status["over"] == SUCCESS
    assert robot.pasts == [None]


def test_a_carry_with_nothing_on_its_way_goes_straight(tmp_path):
    robot = scene(eef=(0.10, 0.0, 0.02))
    frames, way = _carry_bowl_to_plate(tmp_path, robot)
    assert frames[-1].status["over"] == SUCCESS
    assert way[:, 2].max() <= 0.08 + 0.005  # never above where it goes


# --- rotate ------------------------------------------------------------------------------------
def test_rotate_turns_the_wrist_by_yaw_relative_to_where_it_started_holding_position(tmp_path):
    robot = scene()
    start_yaw, start = _yaw(robot), robot.eef_pose().pos.copy()
    root = compile_node(tmp_path, "rotate: {yaw: 0.3, name: turn}", robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert statuses(frames, "turn")[:-1] == [RUNNING] * (len(frames) - 1)
    assert abs(_yaw(robot) - start_yaw - 0.3) <= 0.03
    assert np.allclose(robot.eef_pose().pos, start, atol=1e-6)


def test_rotate_with_relative_false_turns_the_wrist_to_an_absolute_yaw(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - rotate: 0.4
          - rotate: {yaw: -0.2, relative: false}
        """, robot)
    run(root, robot)
    assert abs(_yaw(robot) - -0.2) <= 0.03


def test_rotate_fails_unreachable_after_max_steps(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "rotate: {yaw: 1.5, max_steps: 3}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "FAILURE" and result.steps == 3
    assert [e["code"] for e in errors()] == ["UNREACHABLE"]


def test_rotate_with_handle_turns_a_held_object_until_its_handle_points_at_the_heading(tmp_path):
    robot = scene()
    start = _yaw(robot)

    def handle_of(name):  # a held mug whose handle points +y, turning with the hand
        heading = np.pi / 2 + _yaw(robot) - start
        return Handle(np.zeros(3), np.zeros(3), np.array([np.cos(heading), np.sin(heading), 0]))

    robot.handle_of = handle_of
    root = compile_node(tmp_path, f"rotate: {{yaw: -1.5708, handle: {BOWL}}}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    outward = handle_of(BOWL).outward
    assert np.arctan2(outward[1], outward[0]) == pytest.approx(-np.pi / 2, abs=0.03)


def test_rotate_with_handle_goes_the_other_way_round_where_the_wrist_stops_short(tmp_path):
    robot = scene()
    start = _yaw(robot)
    wrist = {"turned": 0.0}  # a wrist whose last joint stops it 60 degrees round the positive way
    apply = robot._apply

    def _apply(action):
        before, quat = _yaw(robot), robot.quat.copy()
        apply(action)
        turn = (_yaw(robot) - before + np.pi) % (2 * np.pi) - np.pi
        if wrist["turned"] + turn > np.radians(60):
            robot.quat = quat
        else:
            wrist["turned"] += turn

    def handle_of(name):  # the handle points 100 degrees round from -y: the shorter way is +
        heading = -np.pi / 2 - np.radians(100) + _yaw(robot) - start
        return Handle(np.zeros(3), np.zeros(3), np.array([np.cos(heading), np.sin(heading), 0]))

    robot._apply, robot.handle_of = _apply, handle_of
    root = compile_node(tmp_path, f"rotate: {{yaw: -1.5708, handle: {BOWL}}}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert wrist["turned"] == pytest.approx(np.radians(100 - 360), abs=0.03)  # round the other way
    outward = handle_of(BOWL).outward
    assert np.arctan2(outward[1], outward[0]) == pytest.approx(-np.pi / 2, abs=0.03)


def test_rotate_with_handle_is_about_z_only_and_says_where(tmp_path):
    with pytest.raises(TreeError, match=r"tree.yaml:\d+:\d+: .*`handle` turns about the world's z"):
        compile_node(tmp_path, f"rotate: {{yaw: 0.5, handle: {BOWL}, axis: x}}", scene())


def test_rotate_with_handle_fails_at_once_when_the_object_shows_none(tmp_path):
    robot = scene()  # no geometry: no handle
    root = compile_node(tmp_path, f"rotate: {{yaw: -1.5708, handle: {BOWL}}}", robot)
    result, _ = run(root, robot)
    assert result.tree_status == "FAILURE" and result.steps == 0
    assert [e["code"] for e in errors()] == ["CONDITION_FAILED"]


def _pointing(robot) -> np.ndarray:
    """Where the fingers point: the end effector's z axis in the world."""
    return Rotation.from_quat(robot.eef_pose().quat).apply([0.0, 0.0, 1.0])


def test_rotate_about_x_pitches_the_wrist_and_later_moves_keep_the_pitch(tmp_path):
    robot = scene()
    down = _pointing(robot)
    root = compile_node(tmp_path, """
        sequence:
          - rotate: {yaw: -1.5708, axis: x}
          - move_to: [0.1, 0.1, 0.2]
        """, robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert np.allclose(_pointing(robot), Rotation.from_euler("x", -1.5708).apply(down), atol=0.05)


def test_rotate_with_relative_false_sets_that_axis_euler_angle_so_repeating_it_is_a_no_op(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - rotate: {yaw: 1.5708, axis: x, relative: false}
          - rotate: {yaw: -0.7854, axis: y, relative: false}
        """, robot)
    run(root, robot)
    once = robot.eef_pose().quat.copy()
    again = compile_node(tmp_path, "rotate: {yaw: -0.7854, axis: y, relative: false, name: again}",
                         robot)
    result, frames = run(again, robot)
    assert result.tree_status == "SUCCESS" and len(frames) <= 1
    assert abs(np.dot(robot.eef_pose().quat, once)) == pytest.approx(1.0, abs=1e-3)

# --- set_gripper and release -------------------------------------------------------------------
def test_set_gripper_close_commands_close_holding_the_arm_until_the_fingers_stop(tmp_path):
    robot = scene()
    start = robot.eef_pose().pos.copy()
    root = compile_node(tmp_path, "set_gripper: {state: close, name: grip}", robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    *closing, last = frames
    assert all(f.status["grip"] == RUNNING and f.action[6] == CLOSE for f in closing)
    assert last.action is None
    assert robot.gripper_width() == 0.0
    assert np.allclose(robot.eef_pose().pos, start, atol=1e-9)


def test_set_gripper_close_at_an_object_grasps_it_and_check_grasped_then_holds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - move_to: {{object: {BOWL}}}
          - set_gripper: close
          - check: {{predicate: grasped, object: {BOWL}}}
        """, robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert robot.gripper_width() == pytest.approx(0.04)  # stopped by the bowl


def test_set_gripper_open_commands_open(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "sequence: [{set_gripper: close}, {set_gripper: open}]", robot)
    _, frames = run(root, robot)
    assert frames[-2].action[6] == OPEN
    assert robot.gripper_width() == pytest.approx(0.08)


def test_release_opens_the_gripper_then_retreats_lift_straight_up(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - move_to: {{object: {CHEESE}}}
          - set_gripper: close
          - release: {{lift: 0.08, name: let go}}
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    releasing = [f for f in frames if f.commander in ("let go/open", "let go")]
    assert all(f.action[6] == OPEN for f in releasing)
    heights = [f.eef[2] for f in releasing]
    grasp_height = heights[0]
    # the fingers open first, the arm holds while the gripper's command ramps open
    assert heights[:Release.OPEN_STEPS] == [grasp_height] * Release.OPEN_STEPS
    assert heights == sorted(heights)  # then it only goes up
    assert not robot.is_grasped(CHEESE)
    assert robot.pose_of(CHEESE).pos[2] == pytest.approx(0.02)  # dropped back onto the table
    assert np.linalg.norm(robot.eef_pose().pos - [-0.10, 0.10, grasp_height + 0.08]) <= 0.01


def test_release_stopped_after_it_commanded_takes_its_command_back(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        parallel:
          synchronise: false
          children:
            - release: {{lift: 0.1, name: let go}}
            - check: {{predicate: near, object: {BOWL}, target: {PLATE}, distance: 0.2}}
        """, robot)
    _, frames = run(root, robot, events={2: move_box(BOWL, [-0.2, 0.0, 0.02])})
    assert [f.commander for f in frames[:2]] == ["let go/open"] * 2
    assert frames[2].status["let go"] == Status.INVALID
    assert frames[2].action is None  # its opener had commanded on behalf of the stopped release


# --- wait --------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 5])
def test_wait_n_lets_exactly_n_steps_pass_without_commanding(tmp_path, n):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - wait: {{steps: {n}, name: pause}}
          - move_to: {{target: [0.1, 0, 0.3], name: go}}
        """, robot)
    _, frames = run(root, robot)
    assert statuses(frames, "pause")[:n + 1] == [RUNNING] * n + [SUCCESS]
    assert all(f.action is None for f in frames[:n])
    assert frames[n].commander == "go"  # the tick wait succeeds, the next leaf already commands
    assert frames[n].steps == n + 1


def test_wait_holds_the_robot_where_it_is(tmp_path):
    robot = scene()
    start = robot.eef_pose().pos.copy()
    root = compile_node(tmp_path, "wait: 4", robot)
    result, frames = run(root, robot)
    assert result.steps == 4
    assert all(f.holds_since(start) for f in frames)
