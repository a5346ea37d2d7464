"""swing_open.yaml: a door standing part way open is swung wide, one open far enough is left."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig
from tether.trees.compiler import LIBRARY

TREE = LIBRARY / "swing_open.yaml"
TASK = "libero_10_task/9"  # the white mug into the microwave, whose door starts part way open


@pytest.mark.slow
@pytest.mark.parametrize(("init_state", "swung"), [(2, True), (0, False)])
def test_swing_open_swings_a_door_open_less_than_its_share_wide(init_state: int, swung: bool,
                                                                 tmp_path: Path):
    """At init state 2 the microwave's door stands 63% open, its leaf square to the front; at
    init state 0, 82% (more than `share`: left as it is)."""
    opened: list[float] = []

    @contextlib.contextmanager
    def door(root, robot):
        joint = robot.joint_of("microwave_1")
        opened.append(joint.open / joint.travel)
        yield
        joint = robot.joint_of("microwave_1")
        opened.append(joint.open / joint.travel)

    record = run(RunConfig(TREE, SessionConfig(TASK, seed=init_state, init_state=init_state,
                                               runs=tmp_path), given={"door": "microwave_1"}),
                 observers=(door,))
    assert record.result.tree_status == "SUCCESS", record.result.errors
    before, after = opened
    if swung:
        assert before < 0.65 and after > 0.8  # pushed round until it stops, past its share
    else:
        assert 0.75 < before == pytest.approx(after, abs=0.01) and record.result.steps <= 1
