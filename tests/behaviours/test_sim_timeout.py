"""`timeout` (`behaviours/sim_timeout.py`): budgets in control steps or simulated seconds, never
wall-clock time."""

from __future__ import annotations

import time

import py_trees
import pytest

from tests.trees.harness import (
    FAILURE,
    INVALID,
    RUNNING,
    SUCCESS,
    compile_node,
    errors,
    run,
    scene,
    statuses,
)
from tether.behaviours.sim_timeout import SimTimeout

SLOW_MOVE = "move_to: {target: [0.3, 0.3, 0.3], name: slow}"


def test_timeout_steps_lets_the_child_run_n_ticks_then_fails_without_it_commanding(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"timeout: {{steps: 4, name: limit, child: {{{SLOW_MOVE}}}}}",
                        robot)
    result, frames = run(root, robot)
    assert statuses(frames, "slow") == [RUNNING] * 4 + [INVALID]
    assert statuses(frames, "limit") == [RUNNING] * 4 + [FAILURE]
    assert [f.commander for f in frames] == ["slow"] * 4 + [None]
    assert result.steps == 4


def test_timeout_writes_timeout_to_errors_last(tmp_path):
    robot = scene()
    run(compile_node(tmp_path, f"timeout: {{steps: 2, name: limit, child: {{{SLOW_MOVE}}}}}",
                     robot), robot)
    assert [(e["code"], e["node"], e["step"]) for e in errors()] == [("TIMEOUT", "limit", 2)]


def test_timeout_holds_the_robot_on_the_tick_it_fires(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - timeout: {{steps: 3, child: {{{SLOW_MOVE}}}}}
          - wait: {{steps: 2, name: fallback}}
        """, robot)
    _, frames = run(root, robot)
    assert frames[3].status["slow"] == INVALID and frames[3].status["fallback"] == RUNNING
    assert frames[3].holds_since(frames[2])


@pytest.mark.parametrize(("seconds", "control_dt", "steps"),
                         [(0.2, 0.05, 4), (0.21, 0.05, 5), (0.3, 0.1, 3), (0.05, 0.05, 1)])
def test_timeout_seconds_is_simulated_time_rounded_up_to_whole_control_steps(
        tmp_path, seconds, control_dt, steps):
    robot = scene()
    robot.control_dt = control_dt
    root = compile_node(
        tmp_path, f"timeout: {{seconds: {seconds}, name: limit, child: {{{SLOW_MOVE}}}}}", robot)
    result, frames = run(root, robot)
    assert statuses(frames, "limit") == [RUNNING] * steps + [FAILURE]
    assert result.sim_time == pytest.approx(steps * control_dt)


def test_timeout_never_reads_the_wall_clock(tmp_path, monkeypatch):
    robot = scene()
    root = compile_node(tmp_path, f"timeout: {{seconds: 0.2, name: limit, child: {{{SLOW_MOVE}}}}}",
                        robot)
    clock = iter(range(0, 10**9, 3600))  # every call to the wall clock: another hour has passed
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(time, "time", lambda: float(next(clock)))
    _, frames = run(root, robot)
    assert statuses(frames, "limit") == [RUNNING] * 4 + [FAILURE]


def test_timeout_passes_a_child_success_through(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "timeout: {steps: 5, name: limit, child: {wait: 2}}", robot)
    result, frames = run(root, robot)
    assert statuses(frames, "limit") == [RUNNING, RUNNING, SUCCESS]
    assert result.tree_status == "SUCCESS" and errors() == []


def test_timeout_child_succeeding_on_its_last_allowed_tick_succeeds(tmp_path):
    robot = scene()
    # wait 2 succeeds on its third tick: exactly the budget
    root = compile_node(tmp_path, "timeout: {steps: 3, name: limit, child: {wait: 2}}", robot)
    assert run(root, robot)[0].tree_status == "SUCCESS"


def test_timeout_passes_a_child_failure_through_without_writing_timeout(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        timeout: {steps: 5, child: {check: {predicate: grasped, object: plate_1}}}
        """, robot)
    assert run(root, robot)[0].tree_status == "FAILURE"
    assert errors() == []


def test_timeout_restarts_its_count_each_time_it_is_entered_again(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        retry:
          n: 3
          child: {{timeout: {{steps: 2, name: limit, child: {{{SLOW_MOVE}}}}}}}
        """, robot)
    result, frames = run(root, robot)
    # each attempt: 2 ticks running, the 3rd tick times out (and the retry starts over)
    assert statuses(frames, "limit") == [RUNNING, RUNNING, FAILURE] * 3
    assert [e["code"] for e in errors()] == ["TIMEOUT"] * 3
    assert result.tree_status == "FAILURE"


@pytest.mark.parametrize("kwargs", [{}, {"steps": 3, "seconds": 1.0}])
def test_sim_timeout_takes_exactly_one_of_steps_or_seconds(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        SimTimeout("t", py_trees.behaviours.Running(), **kwargs)
