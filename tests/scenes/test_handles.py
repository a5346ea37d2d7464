"""An object's handle found from its collision boxes (`scenes/handles.py`)."""

from __future__ import annotations

import numpy as np

from tether.scenes.handles import find_handle


def _ring(radius: float = 0.04, n: int = 16, half: float = 0.006) -> list:
    """A mug's wall: small boxes around a vertical axis at the origin, 10 cm high."""
    boxes = []
    for a in np.linspace(0, 2 * np.pi, n, endpoint=False):
        c = np.array([radius * np.cos(a), radius * np.sin(a), 0.05])
        boxes.append((c - [half, half, 0.05], c + [half, half, 0.05]))
    return boxes


# the handle: an outer bar and two arms joining it to the wall, along -y, 1.6 cm thick along x
HANDLE = [(np.array([-0.008, -0.075, 0.02]), np.array([0.008, -0.067, 0.085])),
          (np.array([-0.008, -0.07, 0.075]), np.array([0.008, -0.045, 0.085])),
          (np.array([-0.008, -0.07, 0.02]), np.array([0.008, -0.045, 0.03]))]


def test_a_mug_s_handle_is_the_narrow_part_beyond_its_round_body():
    handle = find_handle(_ring() + HANDLE)
    assert handle is not None
    assert np.allclose(handle.outward, [0.0, -1.0, 0.0])
    assert np.allclose(handle.low, [-0.008, -0.075, 0.02])
    assert np.allclose(handle.high, [0.008, -0.045, 0.085])


def test_a_handle_along_plus_x_points_along_plus_x():
    turned = [(np.array([lo[1] * -1, lo[0], lo[2]]), np.array([hi[1] * -1, hi[0], hi[2]]))
              for lo, hi in HANDLE]  # turned a quarter: -y becomes +x
    turned = [(np.minimum(a, b), np.maximum(a, b)) for a, b in turned]
    handle = find_handle(_ring() + turned)
    assert handle is not None and np.allclose(handle.outward, [1.0, 0.0, 0.0])


def test_a_round_body_without_a_handle_has_none():
    assert find_handle(_ring()) is None


def test_a_long_box_made_of_parts_has_no_handle():
    parts = [(np.array([x, -0.02, 0.0]), np.array([x + 0.05, 0.02, 0.05]))
             for x in (0.0, 0.05, 0.10)]  # 15 x 4 cm: longer one way, but as wide all along
    assert find_handle(parts) is None


def test_one_box_has_no_handle():
    assert find_handle([(np.zeros(3), np.array([0.1, 0.04, 0.04]))]) is None
