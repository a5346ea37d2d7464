"""Perception isolation (`scenes/isolation.py`): a privileged read under enforced isolation fails
loudly at the node that made it; declared exceptions pass and are counted."""

from __future__ import annotations

import pytest

from tests.trees.harness import BOWL, compile_node, run, scene
from tether.errors import TickError
from tether.scenes.isolation import IsolationError, privileged
from tether.scenes.kinematic import KinematicScene


class Guarded(KinematicScene):
    """The test table with its object state marked privileged, as the LIBERO scene's is."""

    pose_of = privileged(KinematicScene.pose_of)
    extent_of = privileged(KinematicScene.extent_of)


def guarded() -> Guarded:
    base = scene()
    return Guarded({n: (list(b.pos), list(b.half)) for n, b in base.boxes.items()},
                   goal=base.goal())


def test_a_privileged_read_under_isolation_raises_and_names_the_read():
    robot = guarded()
    assert robot.pose_of(BOWL).pos[0] == pytest.approx(0.10)  # off by default
    with robot.isolation.enforced(), pytest.raises(IsolationError, match=(
            rf"perception isolation: pose_of\('{BOWL}'\) reads the simulator's object state")):
        robot.pose_of(BOWL)
    assert robot.pose_of(BOWL).pos[0] == pytest.approx(0.10)  # restored on exit


def test_declared_exceptions_pass_and_are_counted_once_per_outer_call():
    robot = guarded()
    with robot.isolation.enforced():
        with robot.isolation.allowed("static layout"):
            robot.pose_of(BOWL)
            robot.extent_of(BOWL)
        with robot.isolation.allowed("outcome"):
            robot.success()
        with pytest.raises(IsolationError):
            robot.extent_of(BOWL)
    assert dict(robot.isolation.reads) == {"static layout": 2}  # success reads none guarded


def test_a_tree_that_reads_the_simulator_under_isolation_fails_at_that_node(tmp_path):
    robot = guarded()
    root = compile_node(tmp_path, f"""
        sequence:
          name: pick
          children:
            - wait: 2
            - name: near the bowl?
              check: {{predicate: within_reach, object: {BOWL}, target: gripper}}
        """, robot)
    with robot.isolation.enforced(), pytest.raises(TickError) as err:
        run(root, robot)
    assert "in 'pick/near the bowl?'" in str(err.value)
    assert isinstance(err.value.__cause__, IsolationError)
    assert robot.steps == 2  # the waits ran; the read stopped the episode
