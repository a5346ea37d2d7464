"""insert.yaml: an object wider than a compartment is leaned into it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig
from tether.trees.compiler import LIBRARY

TREE = LIBRARY / "insert.yaml"
TASK = "libero_10_task/5"  # the yellow and white mug into the caddy's back compartment


@pytest.mark.slow
def test_insert_takes_a_mug_by_the_wall_the_fingers_close_across_and_leans_it_in(tmp_path: Path):
    """At init state 4 the mug, 10.6 cm across for a 5.5 cm compartment, was lost on the way
    when the fingers came down on its rim from across; pinched at its wall nearer the robot, it
    is carried over, leaned in and let go resting in the compartment."""
    record = run(RunConfig(TREE, SessionConfig(TASK, seed=4, init_state=4, runs=tmp_path),
                           given={"object": "white_yellow_mug_1",
                                  "target": "desk_caddy_1_back_contain_region"}))
    assert record.result.tree_status == "SUCCESS", record.result.errors
    assert record.result.success
    # one attempt: the only stop is the one meant, the hand going down until the mug rests
    assert {e["node"] for e in record.result.errors} <= {"down until it stops"}
