"""`tether.scenes.placing`: where in a region a carried object goes down, whether the wrist
turns."""

from __future__ import annotations

import numpy as np
import pytest

from tether.scenes.placing import ROOM_MARGIN, SEARCH, set_down, spot_with_room, top_of


def box(low, high):
    return np.array(low, float), np.array(high, float)


# libero_10's "to the right of the plate" region (init state 0), the chocolate pudding in the
# gripper (8.3 cm along x, fingers closing along y) and the plate and mug left of the region
REGION = box([0.10, 0.05, 0.403], [0.20, 0.15, 0.417])
PUDDING = box([-0.081, 0.092, 0.50], [0.002, 0.142, 0.53])
PLATE = box([0.08, -0.063, 0.437], [0.218, 0.075, 0.456])
MUG = box([0.10, -0.06, 0.456], [0.20, 0.07, 0.57])
MIDDLE = np.array([0.15, 0.10])


def test_a_free_region_takes_the_object_in_its_middle_unturned():
    spot, turn = set_down(REGION, PUDDING, [], "y", MIDDLE)
    assert np.allclose(spot, [0.15, 0.10]) and not turn


def test_the_object_moves_off_a_low_neighbour_just_as_far_as_it_must():
    spot, turn = set_down(REGION, PUDDING, [PLATE], "y", MIDDLE)
    assert not turn
    assert spot[1] - 0.025 > PLATE[1][1]  # the pudding's footprint clears the plate...
    assert REGION[0][1] < spot[1] < REGION[1][1]  # ...inside the region
    assert np.allclose(spot, [0.15, 0.11])


def test_the_wrist_turns_when_the_hand_would_come_down_on_a_tall_neighbour():
    # unturned, the hand (20 cm along y) reaches over the mug wherever the pudding goes;
    # turned, the hand lies along x and the pudding's long side along y
    spot, turn = set_down(REGION, PUDDING, [PLATE, MUG], "y", MIDDLE)
    assert turn
    assert spot[1] - 0.03 > MUG[1][1]  # the hand's side clears the mug
    assert spot[1] < REGION[1][1]


def test_things_below_the_surface_do_not_count():
    table = box([-0.5, -0.5, 0.0], [0.5, 0.5, 0.41])
    spot, turn = set_down(REGION, PUDDING, [table], "y", MIDDLE)
    assert np.allclose(spot, [0.15, 0.10]) and not turn


def test_a_full_region_gives_the_least_covered_spot():
    left = box([0.0, 0.0, 0.40], [0.16, 0.2, 0.44])  # covers all but the region's right strip
    spot, _ = set_down(REGION, PUDDING, [left], "x", MIDDLE)
    assert np.isclose(spot[0], 0.18)  # as far right as the grid goes inside the region


def test_a_second_object_goes_beside_the_first_nearest_the_point_asked_for():
    # libero_10's cook region and two moka pots (8 x 15 cm): the first stands 5 cm before the
    # middle, the second is asked for 5 cm beyond it and moves just clear of the first
    region = box([-0.119, -0.274, 0.903], [0.031, -0.124, 0.908])
    pot = np.array([0.081, 0.151, 0.154])
    first = box([-0.084 - 0.04, -0.274, 0.903], [-0.084 + 0.041, -0.123, 1.057])
    held = box([0.3, 0.3, 1.0], [0.3, 0.3, 1.0] + pot)
    spot, turn = set_down(region, held, [first], "y", np.array([0.006, -0.199]))
    assert not turn
    assert spot[0] - pot[0] / 2 > first[1][0]  # clear of the first pot
    assert np.isclose(spot[1], -0.199) and spot[0] < region[1][0]


def test_the_wrist_turns_an_object_to_fit_a_narrow_region():
    # a book held with its 11 cm along x, over a caddy compartment 5.5 cm along x, 12 cm along y
    slot = box([0.0, 0.0, 0.90], [0.055, 0.12, 0.95])
    book = box([0.2, 0.2, 1.0], [0.31, 0.23, 1.15])
    spot, turn = set_down(slot, book, [], "y", np.array([0.0275, 0.06]))
    assert turn and np.allclose(spot, [0.0275, 0.06])
    assert not set_down(slot, box([0.2, 0.2, 1.0], [0.23, 0.31, 1.15]), [], "y",
                        np.array([0.0275, 0.06]))[1]  # already along the slot: no turn


def test_the_wrist_turns_rather_than_moving_the_object_off_the_point_asked_for():
    # libero_goal_swap's bowl (init state 2) with the wine rack's box behind it: unturned, the
    # hand (20 cm along y) reaches over the rack unless the cheese moves 3 cm off the bowl's
    # middle onto its slope; turned a quarter, the hand clears the rack right over the middle
    bowl = box([-0.242, -0.104, 0.898], [-0.131, 0.007, 0.951])
    rack = box([-0.402, -0.385, 0.918], [-0.132, -0.12, 1.248])
    cheese = box([-0.45, 0.17, 0.91], [-0.38, 0.22, 0.96])
    middle = np.array([-0.186, -0.048])
    spot, turn = set_down(bowl, cheese, [rack], "y", middle)
    assert turn and np.allclose(spot, middle)


def test_on_another_object_the_centre_stays_within_2_cm_of_its_origin():
    # LIBERO's On(bowl, plate) holds only with the bowl's origin within 3 cm of the plate's: a
    # cabinet's box over the plate's back half moves the bowl just 1 cm, and the hand turns
    plate = box([0.009, -0.032, 0.90], [0.146, 0.106, 0.919])
    origin = np.array([0.078, 0.036, 0.91])
    cabinet = box([-0.13, -0.415, 0.91], [0.228, -0.003, 1.128])
    bowl = box([0.3, 0.3, 1.0], [0.41, 0.41, 1.05])
    region = top_of(origin, plate)
    assert np.isclose(region[1][2], 0.919)
    spot, turn = set_down(region, bowl, [cabinet], "y", origin[:2])
    assert turn and np.allclose(spot, [0.078, 0.046])
    assert np.linalg.norm(spot - origin[:2]) < 0.03


# `spot_with_room`: a table at z 0.9 with boxes standing on it, seen from above as rays would
TABLE = 0.9
MUG_HALF = np.array([0.05, 0.05])
HAND_ROOM = np.array([[-0.105, -0.215], [0.105, -0.05]])  # the level hand, behind the handle
BASE = np.array([-0.66, 0.0])


def heights_of(*boxes, table=TABLE, edge=None):
    """Heights over a table (ending at x `edge`, floor 0 beyond) with `boxes` on it."""
    def heights(points):
        top = np.full(len(points), table)
        if edge is not None:
            top[points[:, 0] > edge] = 0.0
        for (x0, y0), (x1, y1), z in boxes:
            inside = (points[:, 0] >= x0) & (points[:, 0] <= x1) \
                & (points[:, 1] >= y0) & (points[:, 1] <= y1)
            top[inside] = np.maximum(top[inside], z)
        return top
    return heights


def clear_of(spot, box):
    """Whether the mug's footprint and the hand's room at `spot` miss `box` (with the margin)."""
    (x0, y0), (x1, y1), _ = box
    for lo, hi in ((-MUG_HALF, MUG_HALF), HAND_ROOM):
        a, b = spot + lo - ROOM_MARGIN, spot + hi + ROOM_MARGIN
        if a[0] <= x1 and x0 <= b[0] and a[1] <= y1 and y0 <= b[1]:
            return False
    return True


@pytest.mark.parametrize("table", [TABLE, 0.9051, 0.0])  # 0.9051: a centimetre's edge
def test_a_bare_table_keeps_the_point_asked_for(table):
    near = np.array([-0.05, 0.14])
    found = spot_with_room(near, MUG_HALF, HAND_ROOM, heights_of(table=table), BASE)
    assert np.allclose(found, near)


def test_a_mug_in_the_hands_room_moves_the_spot_just_clear_of_it():
    # libero_10_task/9: the other mug stands where the level hand would come down
    other = ((-0.042, -0.067), (0.064, 0.074), 1.005)
    near = np.array([-0.05, 0.14])
    spot = spot_with_room(near, MUG_HALF, HAND_ROOM, heights_of(other), BASE)
    assert spot is not None and clear_of(spot, other)
    nudged = spot + 0.02 * (near - spot) / np.linalg.norm(near - spot)
    assert not clear_of(nudged, other)  # nearer the point asked for, the room is taken


def test_thin_walls_and_low_things_count_and_the_table_must_bear_the_object():
    wall = ((-0.1175, 0.0), (-0.1125, 0.30), 1.10)  # 5 mm thick, between two 1 cm rays
    plate = ((0.0, 0.05), (0.10, 0.15), TABLE + 0.02)
    near = np.array([-0.05, 0.14])
    spot = spot_with_room(near, MUG_HALF, HAND_ROOM, heights_of(wall, plate), BASE)
    assert spot is not None and clear_of(spot, wall) and clear_of(spot, plate)
    # the table ends 3 cm past the point asked for: the mug stays on it, the hand may reach out
    edge = spot_with_room(near, MUG_HALF, HAND_ROOM, heights_of(edge=-0.02), BASE)
    assert edge is not None and edge[0] + MUG_HALF[0] + ROOM_MARGIN <= -0.02 + 1e-9


def test_no_spot_within_search_or_reach_gives_none():
    near = np.array([-0.05, 0.14])
    # free only beyond the search radius
    block = ((near[0] - SEARCH, near[1] - SEARCH), (near[0] + SEARCH, near[1] + SEARCH), 1.0)
    assert spot_with_room(near, MUG_HALF, HAND_ROOM, heights_of(block), BASE) is None
    # free only farther from the arm's base than it reaches (past the blocked table's far side)
    block = ((-0.3, -0.35), (0.12, 0.35), 1.0)
    assert spot_with_room(np.array([0.0, 0.0]), MUG_HALF, HAND_ROOM, heights_of(block),
                          BASE) is None
    spot = spot_with_room(np.array([0.0, 0.0]), MUG_HALF, HAND_ROOM, heights_of(block),
                          np.array([-0.3, 0.0]))
    assert spot is not None and spot[0] > 0.12 and clear_of(spot, block)


def test_a_spot_kept_out_of_a_drawers_way_is_the_nearest_bare_one_past_it():
    # the object, lifted, leaves bare table under the drawer: the spot asked for, 3 cm past
    # where the drawer comes, is taken by something else, and the nearest bare spot is not back
    # under the drawer but farther out
    way = (np.array([-0.1, -0.33]), np.array([0.1, 0.03]))
    other = ((-0.2, 0.06), (0.1, 0.2), 0.92)  # a box just past the drawer's way
    near = np.array([-0.08, 0.03 + 0.03 + 0.05])
    assert spot_with_room(near, MUG_HALF, np.zeros((2, 2)), heights_of(other), BASE)[1] < 0.03
    spot = spot_with_room(near, MUG_HALF, np.zeros((2, 2)), heights_of(other), BASE, way)
    assert spot is not None and clear_of(spot, other)
    assert not (np.all(spot - MUG_HALF < way[1]) and np.all(spot + MUG_HALF > way[0]))


def test_the_area_covered_is_summed_box_after_box():
    """Covered areas add up one box after another, so the cost of a spot (and thus the spot a
    tie is broken to) does not depend on how many boxes are summed at once."""
    from tether.scenes.placing import _footprints, _overlap

    rng = np.random.default_rng(3)
    for _ in range(300):
        centres, half = rng.uniform(-0.3, 0.3, (40, 2)), rng.uniform(0.01, 0.1, 2)
        boxes = [(low, low + rng.uniform(0, 0.2, 3)) for low in rng.uniform(-0.3, 0.3, (6, 3))]
        total = np.zeros(len(centres))
        for b in boxes:
            total = total + _overlap(centres, half, _footprints([b]))
        assert np.array_equal(_overlap(centres, half, _footprints(boxes)), total)
    assert np.array_equal(_overlap(np.zeros((3, 2)), np.ones(2), _footprints([])), np.zeros(3))
