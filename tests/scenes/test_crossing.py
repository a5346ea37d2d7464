"""How high a carry goes to pass over what is on its way (`tether.scenes.crossing`)."""

import numpy as np
import pytest

from tether.scenes.crossing import MARGIN, RISE, crossing_height

TABLE = 0.90
LOW, HIGH = np.array([-0.03, -0.03, 1.00]), np.array([0.03, 0.03, 1.06])  # a bowl, lifted
START = np.array([0.0, 0.0, 1.05])  # the end effector, 5 cm above the bowl's bottom
GOAL = np.array([0.0, -0.40, 1.05])


def wall(top: float, y: tuple[float, float] = (-0.25, -0.15)):
    """The floor under xy points: the table, and a wall across the way between `y`."""
    def floor_at(points: np.ndarray) -> float:
        return max(top if y[0] <= p[1] <= y[1] else TABLE for p in points)
    return floor_at


def open_sky(points: np.ndarray) -> float:
    return float("inf")


def test_nothing_on_the_way_keeps_the_height():
    assert crossing_height(START, GOAL, LOW, HIGH, wall(0.95), open_sky) == START[2]


def test_a_wall_on_the_way_is_crossed_with_the_margin_under_the_bowl():
    height = crossing_height(START, GOAL, LOW, HIGH, wall(1.10), open_sky)
    assert height == pytest.approx(1.10 + MARGIN + (START[2] - LOW[2]))


def test_a_wall_beside_the_way_is_no_obstacle():
    beside = wall(1.10, y=(0.2, 0.3))
    assert crossing_height(START, GOAL, LOW, HIGH, beside, open_sky) == START[2]


def test_what_lies_beyond_the_goal_is_no_obstacle():
    beyond = wall(1.10, y=(-0.60, -0.45))
    assert crossing_height(START, GOAL, LOW, HIGH, beyond, open_sky) == START[2]


def test_a_wall_too_high_to_reach_over_keeps_the_height():
    assert crossing_height(START, GOAL, LOW, HIGH, wall(LOW[2] + RISE + 0.01), open_sky) \
        == START[2]


def test_no_room_above_the_object_keeps_the_height():
    def roof(points: np.ndarray) -> float:  # a cabinet's top 5 cm over the bowl in its drawer
        return HIGH[2] + 0.05
    assert crossing_height(START, GOAL, LOW, HIGH, wall(1.10), roof) == START[2]
