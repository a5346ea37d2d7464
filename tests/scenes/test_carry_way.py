"""The way a carried object goes around or over what is on its way (`tether.scenes.carry_way`)."""

from itertools import pairwise

import numpy as np
import pytest

from tether.scenes.carry_way import ARM_REACH, MARGIN, RISE, carry_way

TABLE = 0.90
LOW, HIGH = np.array([-0.03, -0.03, 1.00]), np.array([0.03, 0.03, 1.06])  # a bowl, lifted
START = np.array([0.0, 0.0, 1.05])  # the end effector, 5 cm above the bowl's bottom
GOAL = np.array([0.0, -0.40, 1.05])


def block(top: float, x: tuple[float, float], y: tuple[float, float]):
    """The floor under xy points: the table, and a block of height `top` over `x` by `y`."""
    def floor_at(points: np.ndarray) -> float:
        return max(top if x[0] <= p[0] <= x[1] and y[0] <= p[1] <= y[1] else TABLE
                   for p in points)
    return floor_at


WALL = (-1.0, 1.0), (-0.25, -0.15)  # across the way, too long to go around
PILLAR = (-0.05, 0.10), (-0.25, -0.15)  # on the way, with room on its -x side


def open_sky(points: np.ndarray) -> float:
    return float("inf")


def _clear(way: list[np.ndarray], floor_at) -> bool:
    """Whether the bowl's bottom keeps the margin over the floor all along the way."""
    points = [START, *way, GOAL]
    for a, b in pairwise(points):
        for t in np.linspace(0, 1, 50):
            eef = a + t * (b - a)
            bottom = LOW[2] + eef[2] - START[2]
            corners = np.array([[x, y] for x in (LOW[0], HIGH[0]) for y in (LOW[1], HIGH[1])])
            if floor_at(corners + eef[:2]) + MARGIN > bottom + 1e-9 and t < 1:
                return False
    return True


def test_nothing_on_the_way_is_the_straight_line():
    assert carry_way(START, GOAL, LOW, HIGH, block(0.95, *WALL), open_sky) == []


def test_a_pillar_on_the_way_is_gone_around_at_the_same_height():
    way = carry_way(START, GOAL, LOW, HIGH, block(1.10, *PILLAR), open_sky)
    assert way and all(p[2] == START[2] for p in way)
    assert all(p[0] < -0.05 for p in way)  # the side with room
    assert _clear(way, block(1.10, *PILLAR))


def test_a_carry_down_to_a_lower_target_goes_level_first_then_down():
    """Lifted high (off a cabinet's top) and carried down to a target lower than it started, the
    bowl would sink into a block that stands between, lower than it starts: it goes across at
    its height, then straight down."""
    goal = GOAL - [0, 0, 0.06]  # the bowl's bottom 4 cm over the table there
    floor_at = block(0.95, *WALL)  # the bowl passes it 5 cm over, level; 2-4 cm coming down
    assert carry_way(START, GOAL, LOW, HIGH, floor_at, open_sky) == []  # level: room
    assert carry_way(START, goal, LOW, HIGH, floor_at, open_sky) == [
        pytest.approx([*goal[:2], START[2]])]
    assert carry_way(START, goal, LOW, HIGH, block(0.90, *WALL), open_sky) == []  # room


def test_a_carry_up_to_a_higher_target_rises_first_unless_something_is_over_it():
    """To a target 15 cm higher (a cabinet's top) the bowl goes straight up first, then across:
    coming up diagonally it would meet the edge of what it is set down on. Under a roof (lifted
    in a drawer) it does not rise first."""
    goal = GOAL + [0, 0, 0.15]
    way = carry_way(START, goal, LOW, HIGH, block(0.95, *WALL), open_sky)
    assert way == [pytest.approx([*START[:2], goal[2]])]

    def roof(points: np.ndarray) -> float:
        return HIGH[2] + 0.05
    assert carry_way(START, goal, LOW, HIGH, block(0.95, *WALL), roof) == []


def test_a_way_around_stays_within_the_arms_reach():
    """With the robot's base off to +x, the pillar's -x side (the shorter way) is out of the
    arm's reach: the way goes round its +x side."""
    base = np.array([0.70, -0.20])
    assert np.linalg.norm(base - [-0.08, -0.20]) > ARM_REACH  # the -x side's way
    way = carry_way(START, GOAL, LOW, HIGH, block(1.10, *PILLAR), open_sky, base=base)
    assert way and all(p[0] > 0.10 for p in way)
    assert all(np.linalg.norm(p[:2] - base) <= ARM_REACH for p in way)
    assert _clear(way, block(1.10, *PILLAR))


def test_a_wall_across_the_way_is_crossed_straight_up_over_and_down():
    up, across = carry_way(START, GOAL, LOW, HIGH, block(1.10, *WALL), open_sky)
    height = START[2] + 1.10 + MARGIN - LOW[2]
    assert up == pytest.approx([*START[:2], height]) and across == pytest.approx(
        [*GOAL[:2], height])


def test_a_wall_too_high_to_reach_over_is_the_straight_line():
    assert carry_way(START, GOAL, LOW, HIGH, block(LOW[2] + RISE + 0.01, *WALL), open_sky) == []


def test_with_something_over_the_object_it_does_not_rise():
    def roof(points: np.ndarray) -> float:  # a cabinet's top 5 cm over the bowl in its drawer
        return HIGH[2] + 0.05
    assert carry_way(START, GOAL, LOW, HIGH, block(1.10, *WALL), roof) == []
