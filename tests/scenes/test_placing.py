"""`tether.scenes.placing`: where in a region a carried object goes down, whether the wrist
turns."""

from __future__ import annotations

import numpy as np

from tether.scenes.placing import set_down


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
