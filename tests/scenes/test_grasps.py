"""Grasp points and the room around them (`scenes/grasps.py`): the hand's footprint is probed,
solid objects slide along to where it is clear, and a turned grasp turns less than a quarter when
the open fingers cannot span the object across."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.trees.harness import compile_node, run
from tether.behaviours.primitives import Target
from tether.scenes.grasps import (
    BODY_DEPTH,
    EDGE_REACH,
    FINGERS_UNDER_TOP,
    HAND_HALF_LENGTH,
    HANDLE_DEPTH,
    HANDLE_INSET,
    MAX_SPAN,
    MOVED,
    RIM_DEPTH,
    RIM_FLOOR,
    RIM_INSET,
    SAME_PLACE,
    SAME_YAW,
    STALLS,
    TURNED_YAWS,
    NoGraspLeft,
    Stall,
    by_handle,
    clear_grasp,
    clear_handle_grasp,
    finger_probes,
    fold,
    grasp_box,
    grasp_point,
    handle_grasps,
    rim_grasps,
    slot_yaw,
    span,
    square_yaw,
    turned_grasp,
)
from tether.scenes.kinematic import KinematicScene
from tether.scenes.predicates import evaluate

BOWLS = ("akita_black_bowl_1",)  # the open-topped boxes of a scene
# LIBERO's cream cheese lying flat: 8.3 cm along x, 4.3 cm along y, 1.9 cm high.
CHEESE = ([0.0, 0.0, 0.0095], [0.0415, 0.0215, 0.0095])


class BoxesFromAbove(KinematicScene):
    """A kinematic scene whose `clear_from_above` is exact for its boxes: a point has no room
    when another box lies over it, below `CLEARANCE` above it; the boxes named in `hollow` are
    open-topped."""

    def __init__(self, boxes: dict, hollow: tuple[str, ...] = ()):
        super().__init__(boxes)
        self.hollow = set(hollow)

    def is_hollow(self, name: str) -> bool:
        return name in self.hollow

    def clear_from_above(self, points: list[np.ndarray], *, ignore: str) -> bool:
        for name, b in self.boxes.items():
            if name == ignore:
                continue
            for p in points:
                inside = np.all(np.abs(p[:2] - b.pos[:2]) <= b.half[:2])
                if inside and p[2] <= b.pos[2] + b.half[2] <= p[2] + self.CLEARANCE:
                    return False
        return True


def test_finger_probes_cover_the_hand_above_the_fingertips_along_the_closing_axis():
    point = np.zeros(3)
    along_y = np.array(finger_probes(point, 0.0))
    assert np.abs(along_y[:, 1]).max() == pytest.approx(HAND_HALF_LENGTH)
    assert np.abs(along_y[:, 0]).max() < 0.05
    assert along_y[:, 2].max() > 0.02  # the hand's underside, above the fingertips
    along_x = np.array(finger_probes(point, np.pi / 2))
    assert np.abs(along_x[:, 0]).max() == pytest.approx(HAND_HALF_LENGTH)


def test_a_tall_neighbour_under_the_hand_but_clear_of_the_fingertips_slides_the_grasp_away():
    """The hand, 20 cm long along y, would land on an 8 cm can 10 cm off the cheese's side; the
    fingertips would not. The grasp slides along the cheese (-x) as little as clears it."""
    can = ([0.055, -0.10, 0.04], [0.033, 0.035, 0.04])
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE, "tomato_sauce_1": can})
    centre = grasp_point(*robot.extent_of("cream_cheese_1"), hollow=False)
    tips = finger_probes(centre, 0.0)[:6]
    assert robot.clear_from_above(tips, ignore="cream_cheese_1")
    assert not robot.clear_from_above(finger_probes(centre, 0.0), ignore="cream_cheese_1")

    point, clear = clear_grasp(robot, "cream_cheese_1", 0.0)
    assert clear and evaluate(robot, "grasp_clear", {"object": "cream_cheese_1", "yaw": 0.0})
    assert point[1:] == pytest.approx(centre[1:])
    assert -0.02 < point[0] < 0.0  # slid away from the can, fingertips still on the cheese


def test_a_bowl_is_not_slid_along_its_rim():
    bowl = ([0.0, 0.0, 0.025], [0.055, 0.055, 0.025])
    wall = ([0.055, 0.11, 0.05], [0.035, 0.01, 0.05])  # a 1 cm slide along -x would clear it
    robot = BoxesFromAbove({"akita_black_bowl_1": bowl, "wall": wall}, BOWLS)
    point, clear = clear_grasp(robot, "akita_black_bowl_1", 0.0)
    assert not clear
    assert point == pytest.approx(grasp_point(*robot.extent_of("akita_black_bowl_1"), hollow=True))


def test_span_is_the_chord_along_the_closing_axis_through_the_middle():
    low, high = np.array([0.0, 0.0, 0.0]), np.array([0.083, 0.043, 0.019])
    assert span(low, high, 0.0) == pytest.approx(0.043)
    assert span(low, high, np.pi / 2) == pytest.approx(0.083)
    assert span(low, high, -np.pi / 6) == pytest.approx(0.043 / np.cos(np.pi / 6))


def test_the_turned_grasp_of_an_object_too_long_to_span_turns_less_than_a_quarter():
    """A milk carton under one end of the hand at yaw 0 (as in libero_10/1), too far along the
    cheese to slide clear of; a quarter turn would close the fingers across its 8.3 cm length."""
    milk = ([-0.0325, 0.075, 0.07], [0.0275, 0.025, 0.07])
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE, "milk_1": milk})
    assert not clear_grasp(robot, "cream_cheese_1", 0.0)[1]
    low, high = robot.extent_of("cream_cheese_1")
    assert span(low, high, np.pi / 2) > MAX_SPAN

    point, yaw = turned_grasp(robot, "cream_cheese_1")
    assert 0.0 < abs(yaw) < np.pi / 2 and span(low, high, yaw) <= MAX_SPAN
    assert robot.clear_from_above(finger_probes(point, yaw), ignore="cream_cheese_1")


def test_with_no_room_anywhere_the_last_resort_closes_across_the_cheese_not_along_it():
    """A shelf just over the cream cheese: no grasp has room. The last resort must still be one
    the open fingers span (as in libero_10_task/0: closing along its 8.3 cm, the fingers
    stayed open on it, wedged, and carried it out of the basket again when they opened)."""
    shelf = ([0.0, 0.0, 0.04], [0.2, 0.2, 0.005])
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE, "shelf": shelf})
    low, high = robot.extent_of("cream_cheese_1")
    assert not any(clear_grasp(robot, "cream_cheese_1", yaw)[1]
                   for yaw in (0.0, *TURNED_YAWS))
    point, yaw = turned_grasp(robot, "cream_cheese_1")
    assert yaw == TURNED_YAWS[1] and span(low, high, yaw) <= MAX_SPAN
    assert point == pytest.approx(grasp_point(low, high, "y", hollow=False))
    stalled = [Stall.of(low, high, point, yaw)] * STALLS
    with pytest.raises(NoGraspLeft):
        turned_grasp(robot, "cream_cheese_1", stalled)


def test_a_plate_is_pinched_at_its_rim_above_its_dish_floor_and_a_bowl_deeper_down():
    """The fingertips go `RIM_DEPTH` under a rim, but no lower than `RIM_FLOOR` over the
    object's bottom: a plate 1.9 cm high (its dish floor 0.8 cm up) is pinched 0.7 cm under its
    rim, not on the table; a bowl 5.3 cm high at `RIM_DEPTH`, around its rim alike."""
    plate = (np.array([-0.069, -0.069, 0.90]), np.array([0.069, 0.069, 0.919]))
    bowl = (np.array([-0.055, -0.055, 0.90]), np.array([0.055, 0.055, 0.953]))
    assert grasp_point(*plate, hollow=True)[2] == pytest.approx(0.90 + RIM_FLOOR)
    assert {round(p[2], 6) for p, _ in rim_grasps(*plate)} == {0.90 + RIM_FLOOR}
    assert grasp_point(*plate, hollow=True)[1] == pytest.approx(0.069 - RIM_INSET)
    assert grasp_point(*bowl, hollow=True)[2] == pytest.approx(0.953 - RIM_DEPTH)
    assert {round(p[2], 6) for p, _ in rim_grasps(*bowl)} == {round(0.953 - RIM_DEPTH, 6)}


BOWL = ([0.0, 0.0, 0.025], [0.055, 0.055, 0.025])  # 11 cm across, rim at 5 cm
RIM = 0.055 - RIM_INSET  # from the bowl's middle to the middle of its wall (m)


def _rim(degrees: float) -> np.ndarray:
    return np.array([RIM * np.cos(np.radians(degrees)), RIM * np.sin(np.radians(degrees)),
                     0.05 - RIM_DEPTH])


@pytest.mark.parametrize("above_rim, raised", [(0.006, 0.0), (0.008, 0.002), (0.013, 0.008),
                                                (0.02, None)])
def test_a_bowl_is_taken_higher_on_its_rim_when_a_wall_beyond_it_is_just_under_the_hand(
        above_rim, raised):
    """A wall 5 cm beyond the bowl's +y side, `above_rim` higher than its rim: the hand, 3 cm
    above the fingertips, passes over it with the grasp raised a little, up to RIM_RAISE, and
    a taller one leaves no room at yaw 0 (`raised` None)."""
    wall = ([0.0, 0.115, (0.05 + above_rim) / 2], [0.1, 0.01, (0.05 + above_rim) / 2])
    robot = BoxesFromAbove({"akita_black_bowl_1": BOWL, "wall": wall}, BOWLS)
    point, clear = clear_grasp(robot, "akita_black_bowl_1", 0.0)
    assert clear == (raised is not None)
    assert point == pytest.approx(_rim(90) + [0, 0, raised or 0.0])


def test_rim_grasps_close_the_fingers_across_the_wall_least_turned_first():
    grasps = rim_grasps(*BoxesFromAbove({"akita_black_bowl_1": BOWL}, BOWLS).extent_of(
        "akita_black_bowl_1"))
    assert len(grasps) == 22  # every 15 degrees but the two with the wrist unturned
    turns = [round(abs(yaw), 6) for _, yaw in grasps]
    assert turns == sorted(turns) and turns[0] == pytest.approx(np.pi / 12, abs=1e-6)
    for point, yaw in grasps:  # the closing axis runs through the bowl's middle
        closing = np.array([-np.sin(yaw), np.cos(yaw)])
        assert closing[0] * point[1] - closing[1] * point[0] == pytest.approx(0.0, abs=1e-9)
        assert np.linalg.norm(point[:2]) == pytest.approx(RIM)
    assert grasps[0][0] == pytest.approx(_rim(105))  # of the least turned, the one nearer -x


def test_the_turned_grasp_of_a_bowl_with_room_around_it_is_the_quarter_turn_at_its_near_rim():
    robot = BoxesFromAbove({"akita_black_bowl_1": BOWL}, BOWLS)
    point, yaw = turned_grasp(robot, "akita_black_bowl_1")
    assert yaw == pytest.approx(np.pi / 2)
    low, high = robot.extent_of("akita_black_bowl_1")
    assert point == pytest.approx(grasp_point(low, high, "x", hollow=True))


def test_a_bowl_in_a_drawer_is_taken_at_the_rim_point_whose_gap_holds_the_outer_finger():
    """A bowl in a drawer it nearly fills, as in LIBERO's wooden cabinet: gaps of 1.5 cm front
    and back, 3 cm on the robot's side (-x), 6.5 cm on the far side, the drawer's walls above
    its rim. The quarter turn and the rim grasps turned less put a finger on a wall; the first
    with room closes 60 degrees turned, on the far side."""
    walls = {"front": ([0.0, 0.135, 0.026], [0.2, 0.065, 0.026]),
             "back": ([0.0, -0.135, 0.026], [0.2, 0.065, 0.026]),
             "near": ([-0.1425, 0.0, 0.026], [0.0575, 0.07, 0.026]),
             "far": ([0.16, 0.0, 0.026], [0.04, 0.07, 0.026])}
    robot = BoxesFromAbove({"akita_black_bowl_1": BOWL, **walls}, BOWLS)
    point, yaw = turned_grasp(robot, "akita_black_bowl_1")
    assert yaw == pytest.approx(-np.pi / 3)
    assert point == pytest.approx(_rim(30))
    assert robot.clear_from_above(finger_probes(point, yaw, outer=True),
                                  ignore="akita_black_bowl_1")
    low, high = robot.extent_of("akita_black_bowl_1")
    less_turned = [(p, y) for p, y in rim_grasps(low, high) if abs(y) < np.pi / 3 - 1e-6]
    assert len(less_turned) == 12
    assert not any(robot.clear_from_above(finger_probes(p, y, outer=True),
                                          ignore="akita_black_bowl_1") for p, y in less_turned)
    assert not clear_grasp(robot, "akita_black_bowl_1", 0.0)[1]
    assert not clear_grasp(robot, "akita_black_bowl_1", np.pi / 2)[1]


def test_a_bowl_with_no_rim_point_clear_falls_back_to_the_quarter_turn_at_its_near_rim():
    lid = {"shelf": ([0.0, 0.0, 0.08], [0.3, 0.3, 0.005])}  # over the whole bowl, under the hand
    robot = BoxesFromAbove({"akita_black_bowl_1": BOWL, **lid}, BOWLS)
    point, yaw = turned_grasp(robot, "akita_black_bowl_1")
    assert yaw == pytest.approx(np.pi / 2)
    low, high = robot.extent_of("akita_black_bowl_1")
    assert point == pytest.approx(grasp_point(low, high, "x", hollow=True))


def test_move_to_a_turned_grasp_turns_the_wrist_on_the_approach_and_keeps_it_coming_down(tmp_path):
    robot = KinematicScene({"cream_cheese_1": CHEESE}, eef=(0.0, 0.0, 0.3))
    root = compile_node(tmp_path, """
        sequence:
          - move_to: {object: cream_cheese_1, at: grasp_turned, offset: [0, 0, 0.1]}
          - rotate: 0.1
          - move_to: {target: {object: cream_cheese_1, at: grasp_turned}, tolerance: 0.005}
        """, robot)
    run(root, robot)
    point, yaw = turned_grasp(robot, "cream_cheese_1")
    assert yaw == pytest.approx(-np.pi / 6)  # the first of TURNED_YAWS the fingers span
    assert robot.eef_pose().yaw == pytest.approx(yaw + 0.1, abs=0.03)
    assert robot.eef_pose().pos == pytest.approx(point, abs=0.005)


@pytest.mark.parametrize("turn", [-130.0, -108.0, -20.0, 0.0, 30.0, 80.0])
def test_square_yaw_closes_the_fingers_across_an_upright_books_thin_side(turn):
    """A book 3 cm thick (its own x) and 11 cm wide (its own y), turned by `turn`: the fingers
    (closing along (-sin yaw, cos yaw)) close along its own x, whatever its world box."""
    t = np.radians(turn)
    half = np.abs([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ [0.015, 0.055]
    low, high = np.array([*-half, 0.0]), np.array([*half, 0.138])
    yaw = square_yaw(Rotation.from_euler("z", t).as_quat(), low, high)
    fingers = np.array([-np.sin(yaw), np.cos(yaw)])
    assert abs(fingers @ [np.cos(t), np.sin(t)]) == pytest.approx(1.0)
    assert -np.pi / 2 <= yaw < np.pi / 2


def test_slot_yaw_lines_the_fingers_up_with_the_regions_narrow_side():
    """The caddy's back compartment is 5.5 cm along x: the fingers close along x, at the
    quarter turn nearer the wrist's yaw; along y for a region narrow along y."""
    low, high = np.array([-0.452, -0.204, 0.912]), np.array([-0.397, -0.08, 1.033])
    assert slot_yaw(low, high, np.radians(-30)) == pytest.approx(-np.pi / 2)
    assert slot_yaw(low, high, np.radians(40)) == pytest.approx(np.pi / 2)
    assert slot_yaw(low[[1, 0, 2]], high[[1, 0, 2]], np.radians(-30)) == pytest.approx(0.0)


def test_a_square_grasp_of_an_open_topped_object_pinches_the_wall_the_fingers_close_across():
    """A mug 10.6 cm across, 14 cm along y with its handle: the fingers close along x, its thinner
    side, so they pinch its -x wall at the rim, not straddle the +y wall's rim (nor come down
    inside it)."""
    mug = ([0.0, 0.0, 0.0525], [0.053, 0.07, 0.0525])
    robot = BoxesFromAbove({"mug": mug}, ("mug",))
    target = Target(object="mug", at="grasp_square")
    low, high = robot.extent_of("mug")
    assert abs(np.sin(target.yaw(robot))) == pytest.approx(1.0)  # closing along x
    assert target.position(robot, np.zeros(3)) == pytest.approx(
        [low[0] + RIM_INSET, 0.0, high[2] - RIM_DEPTH])


def test_a_turned_grasp_that_stalled_twice_is_passed_over_for_the_next_candidate():
    """The cream cheese beside a milk carton: the first turned grasp stalled on its way down;
    once may be a passing contact, so it is tried again; after `STALLS` the next is another (a
    point at least `SAME_PLACE` along the object, or another yaw)."""
    milk = ([-0.0325, 0.075, 0.07], [0.0275, 0.025, 0.07])
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE, "milk_1": milk})
    low, high = robot.extent_of("cream_cheese_1")
    first = turned_grasp(robot, "cream_cheese_1")
    stall = Stall.of(low, high, *first)
    assert stall.matches(low, high, *first)
    assert STALLS == 2
    again = turned_grasp(robot, "cream_cheese_1", (stall,))
    assert np.array_equal(again[0], first[0]) and again[1] == first[1]

    point, yaw = turned_grasp(robot, "cream_cheese_1", (stall, stall))
    assert not stall.matches(low, high, point, yaw)
    assert np.linalg.norm(point - first[0]) >= SAME_PLACE or abs(fold(yaw - first[1])) >= SAME_YAW
    assert robot.clear_from_above(finger_probes(point, yaw), ignore="cream_cheese_1")


def test_a_stall_no_longer_counts_once_the_object_has_moved():
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE})
    low, high = robot.extent_of("cream_cheese_1")
    point, yaw = turned_grasp(robot, "cream_cheese_1")
    stall = Stall.of(low, high, point, yaw)
    shift = np.array([0.0, 1.1 * MOVED, 0.0])
    assert not stall.matches(low + shift, high + shift, point + shift, yaw)
    assert stall.matches(low + shift / 2, high + shift / 2, point + shift / 2, yaw)


def test_when_every_turned_grasp_has_stalled_no_grasp_is_left():
    """Each stalled grasp recorded in turn: the candidates run out after a finite number of
    attempts, each one new, and then `turned_grasp` says so instead of repeating one."""
    milk = ([-0.0325, 0.075, 0.07], [0.0275, 0.025, 0.07])
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE, "milk_1": milk})
    low, high = robot.extent_of("cream_cheese_1")
    stalls: list[Stall] = []
    with pytest.raises(NoGraspLeft, match="every grasp of 'cream_cheese_1'"):
        for _ in range(100):
            point, yaw = turned_grasp(robot, "cream_cheese_1", stalls)
            assert sum(s.matches(low, high, point, yaw) for s in stalls) < STALLS
            stalls.append(Stall.of(low, high, point, yaw))
    assert 2 * STALLS <= len(stalls) < 100


def test_a_clear_grasp_that_stalled_is_passed_over_along_the_object():
    robot = BoxesFromAbove({"cream_cheese_1": CHEESE})
    low, high = robot.extent_of("cream_cheese_1")
    first, clear = clear_grasp(robot, "cream_cheese_1", 0.0)
    assert clear
    stalled = (Stall.of(low, high, first, 0.0),) * STALLS
    point, clear = clear_grasp(robot, "cream_cheese_1", 0.0, stalled)
    assert clear and np.linalg.norm(point - first) >= SAME_PLACE


# --- handles: a pan's, from its geometry ------------------------------------------------------
def _pan_parts(handle_top: float) -> list:
    """A pan 22 cm across and 4 cm deep (a floor and a ring of wall boxes) with a 16 cm bar
    along +y, 2.6 cm wide, whose top is `handle_top` m above the floor: its own frame."""
    from tests.scenes.test_handles import _ring

    floor = (np.array([-0.1, -0.1, 0.0]), np.array([0.1, 0.1, 0.01]))
    wall = [(lo * [2.7, 2.7, 0.4], hi * [2.7, 2.7, 0.4]) for lo, hi in _ring(n=24)]
    bar = (np.array([-0.013, 0.105, handle_top - 0.03]), np.array([0.013, 0.265, handle_top]))
    return [floor, *wall, bar]


class WithHandles(BoxesFromAbove):
    """`BoxesFromAbove` whose objects named in `parts` are made of those boxes (own frame, at
    the object's box `low` corner offset by `origin`): their handle is `find_handle`'s."""

    def __init__(self, boxes: dict, hollow: tuple[str, ...], parts: dict):
        super().__init__(boxes, hollow)
        self.parts = parts

    def handle_of(self, name: str):
        from tether.scenes.handles import Handle, find_handle

        if name not in self.parts:
            return None
        origin, boxes = self.parts[name]
        found = find_handle(boxes)
        return None if found is None else Handle(found.low + origin, found.high + origin,
                                                 found.outward)


def _pan_scene(handle_top: float, neighbour: dict | None = None) -> WithHandles:
    parts = _pan_parts(handle_top)
    low = np.min([lo for lo, _ in parts], axis=0)
    high = np.max([hi for _, hi in parts], axis=0)
    half = (high - low) / 2.0
    pan = ((half - half).tolist(), half.tolist())  # its box centred at the origin ...
    origin = -half - low  # ... and its parts moved with it
    return WithHandles({"pan": pan, **(neighbour or {})}, ("pan",), {"pan": (origin, parts)})


def test_a_pan_whose_handle_rises_to_its_top_is_taken_by_the_handle_across_its_end():
    robot = _pan_scene(0.06)
    handle = by_handle(robot, "pan")
    assert handle is not None and np.allclose(handle.outward, [0.0, 1.0, 0.0])
    point, yaw = clear_handle_grasp(robot, "pan")
    assert point[1] == pytest.approx(handle.high[1] - HANDLE_INSET)  # near its outer end
    assert point[2] == pytest.approx(handle.high[2] - HANDLE_DEPTH)
    assert abs(np.sin(yaw)) == pytest.approx(1.0)  # the fingers close along x, across the bar
    assert evaluate(robot, "grasp_by_handle", {"object": "pan"})


def test_a_handle_grasp_slides_toward_the_body_to_where_the_hand_has_room():
    """A tall pot beside the handle's outer end, under the 20 cm hand there."""
    pot = {"pot": ([0.09, 0.19, 0.08], [0.03, 0.02, 0.08])}
    robot = _pan_scene(0.06, pot)
    handle = by_handle(robot, "pan")
    end = handle_grasps(handle)[0]
    assert not robot.clear_from_above(finger_probes(*end), ignore="pan")
    point, yaw = clear_handle_grasp(robot, "pan")
    assert point[1] < end[0][1] - SAME_PLACE and point[1] > handle.low[1]
    assert robot.clear_from_above(finger_probes(point, yaw), ignore="pan")


def test_a_mug_like_body_whose_handle_is_below_its_rim_is_not_taken_by_the_handle():
    robot = _pan_scene(0.03)  # the bar's top 1 cm under the 4 cm rim
    assert robot.handle_of("pan") is not None
    assert by_handle(robot, "pan") is None and clear_handle_grasp(robot, "pan") is None
    assert not evaluate(robot, "grasp_by_handle", {"object": "pan"})


class FromABase(BoxesFromAbove):
    """`BoxesFromAbove` with the arm's base at `base` (x, y)."""

    def __init__(self, boxes: dict, hollow: tuple[str, ...], base: tuple[float, float]):
        super().__init__(boxes, hollow)
        self.base = np.array(base)

    def reach(self, pos: np.ndarray) -> float:
        return float(np.linalg.norm(np.asarray(pos)[:2] - self.base))


@pytest.mark.parametrize(("reach", "unturned"), [(EDGE_REACH - 0.05, True),
                                                 (EDGE_REACH + 0.05, False)])
def test_a_bowl_at_the_edge_of_the_arms_reach_is_taken_at_the_wall_nearer_the_robot(reach,
                                                                                   unturned):
    """With the fingers along y the rim point lies as far out as the bowl's middle; beyond
    `EDGE_REACH` only the turned grasp at the near (-x) wall is taken, a rim's inset nearer."""
    robot = FromABase({"akita_black_bowl_1": BOWL}, BOWLS, base=(-reach, 0.0))
    assert clear_grasp(robot, "akita_black_bowl_1", 0.0)[1] is unturned
    assert evaluate(robot, "grasp_clear", {"object": "akita_black_bowl_1", "yaw": 0.0}) is unturned
    point, yaw = turned_grasp(robot, "akita_black_bowl_1")
    assert yaw == pytest.approx(np.pi / 2)
    assert robot.reach(point) < reach - 0.04
    solid = FromABase({"cream_cheese_1": (BOWL[0], [0.03, 0.02, 0.01])}, (), base=(-reach, 0.0))
    assert clear_grasp(solid, "cream_cheese_1", 0.0)[1]  # a solid object is taken across anyway


def test_a_solid_object_is_measured_from_below_its_thin_top_and_a_hollow_one_from_its_rim():
    """A carton's gable of thin panels (3.2 cm) is no top for its grasp; a bowl keeps its rim."""
    class Gabled(BoxesFromAbove):
        def thin_top(self, name: str) -> float:
            return 0.032

    robot = Gabled({"milk_1": ([0.0, 0.0, 0.072], [0.027, 0.027, 0.072]), BOWLS[0]: BOWL},
                   hollow=BOWLS)
    low, high = grasp_box(robot, "milk_1")  # lowered as far as the fingers reach
    assert high == pytest.approx([0.027, 0.027, 0.144 - (FINGERS_UNDER_TOP - BODY_DEPTH)])
    assert low == pytest.approx(robot.extent_of("milk_1")[0])
    assert grasp_point(low, high, hollow=False)[2] == pytest.approx(0.144 - FINGERS_UNDER_TOP)
    assert grasp_box(robot, BOWLS[0])[1] == pytest.approx(robot.extent_of(BOWLS[0])[1])
