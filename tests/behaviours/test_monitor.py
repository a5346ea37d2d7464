"""Tick contract of `monitor` (`behaviours/monitor.py`): periodic checks counted in steps, the
child preempted on a contradiction, verdicts applied at a fixed lag whatever the model's
latency."""

from __future__ import annotations

import numpy as np

from tests.behaviours.verifier_fakes import EyeBackend, holding_scene, slip
from tests.trees.harness import (
    BOWL,
    FAILURE,
    INVALID,
    PLATE,
    RUNNING,
    SUCCESS,
    compile_node,
    errors,
    move_box,
    run,
    scene,
    statuses,
)
from tether.behaviours.services import Services
from tether.behaviours.verifier import VLMVerifier
from tether.models.vlm_judge import VLMJudge

CARRY = "move_to: {target: [0.4, 0.4, 0.3], name: carry}"


def monitored(child: str, *, every: int, lag: int = 0, verifier: str = "sim",
              predicate: str = f"grasped, object: {BOWL}", extra: str = "") -> str:
    return (f"monitor: {{predicate: {predicate}, every: {every}, lag: {lag}, "
            f"verifier: {verifier}, name: watch{extra}, child: {{{child}}}}}")


def test_monitor_preempts_the_running_child_when_the_grasp_is_lost(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored(CARRY, every=1), robot)
    result, frames = run(root, robot, events={4: slip})
    assert statuses(frames, "carry") == [RUNNING] * 4 + [INVALID]
    assert statuses(frames, "watch") == [RUNNING] * 4 + [FAILURE]
    assert frames[-1].commander is None  # the stopped move did not command on that tick
    [error] = errors()
    assert (error["code"], error["node"], error["step"]) == ("PREEMPTED", "watch", 4)
    assert error["message"] == (f"grasped({BOWL}) contradicted by sim at step 4; carry "
                                f"preempted at step 4")
    assert result.tree_status == "FAILURE"


def test_monitor_holds_the_robot_on_the_tick_it_preempts_and_recovery_takes_over(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, f"""
        selector:
          - {monitored(CARRY, every=1)}
          - sequence: [{{error_is: PREEMPTED}}, {{wait: {{steps: 2, name: recover}}}}]
        """, robot)
    _, frames = run(root, robot, events={3: slip})
    assert frames[3].status["carry"] == INVALID and frames[3].status["recover"] == RUNNING
    assert frames[3].holds_since(frames[2])


def test_monitor_does_not_preempt_while_the_expectation_holds(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored("wait: {steps: 12, name: pause}", every=2), robot)
    result, frames = run(root, robot)
    assert statuses(frames, "watch") == [RUNNING] * 12 + [SUCCESS]
    assert result.tree_status == "SUCCESS" and errors() == []


def test_monitor_checks_only_every_n_steps(tmp_path):
    robot = holding_scene()
    checked: list[int] = []
    is_grasped = robot.is_grasped  # what the `grasped` predicate asks the robot
    robot.is_grasped = lambda name: (checked.append(robot.steps), is_grasped(name))[1]
    root = compile_node(tmp_path, monitored("wait: {steps: 12, name: pause}", every=5), robot)
    run(root, robot)
    assert checked == [0, 5, 10]


def test_monitor_notices_a_contradiction_only_at_its_next_check(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored(CARRY, every=5), robot)
    _, frames = run(root, robot, events={6: slip})  # after step 6; checks at steps 0, 5, 10
    assert statuses(frames, "carry") == [RUNNING] * 10 + [INVALID]
    assert [e["step"] for e in errors()] == [10]


def test_monitor_with_lag_acts_on_the_verdict_lag_steps_after_the_observation(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored(CARRY, every=5, lag=3), robot)
    _, frames = run(root, robot, events={6: slip})
    assert statuses(frames, "carry") == [RUNNING] * 13 + [INVALID]
    [error] = errors()
    assert error["step"] == 13 and "contradicted by sim at step 10;" in error["message"]


def test_monitor_holds_false_preempts_when_the_predicate_becomes_true(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, monitored(
        "wait: {steps: 20, name: pause}", every=1,
        predicate=f"near, object: {BOWL}, target: {PLATE}, distance: 0.05", extra=", holds: false"),
        robot)
    _, frames = run(root, robot, events={7: move_box(BOWL, [0.25, 0.0, 0.03])})
    assert statuses(frames, "pause") == [RUNNING] * 7 + [INVALID]
    assert errors()[0]["message"].startswith(f"not near({BOWL}, {PLATE}, 0.05) contradicted")


def test_monitor_drops_checks_in_flight_when_the_child_finishes(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored("wait: {steps: 3, name: pause}", every=1, lag=5),
                        robot)
    result, _ = run(root, robot, events={1: slip})  # would be seen at steps 1..3, due at 6..8
    assert result.tree_status == "SUCCESS" and errors() == []


def _vlm_episode(tmp_path, backend: EyeBackend):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored(CARRY, every=4, lag=3, verifier="vlm"), robot)
    verifier = VLMVerifier(VLMJudge(backend))
    try:
        result, frames = run(root, robot, events={6: slip}, services=Services(verifier=verifier))
    finally:
        verifier.close()
    return result, frames, errors()


def test_a_slow_and_a_fast_vlm_verifier_give_the_same_episode(tmp_path):
    fast = _vlm_episode(tmp_path, EyeBackend(delay=0.0))
    slow = _vlm_episode(tmp_path, EyeBackend(delay=0.05))
    (fast_result, fast_frames, fast_errors), (slow_result, slow_frames, slow_errors) = fast, slow
    assert fast_errors == slow_errors
    [error] = fast_errors  # observed at step 8 (checks at 0, 4, 8), acted on at 8 + 3
    assert (error["code"], error["step"]) == ("PREEMPTED", 11)
    assert error["message"] == (f"grasped({BOWL}) contradicted by vlm:eye at step 8; carry "
                                f"preempted at step 11")
    assert fast_result.steps == slow_result.steps == 11
    assert [f.commander for f in fast_frames] == [f.commander for f in slow_frames]
    assert all(np.array_equal(a.eef, b.eef) and a.status == b.status
               for a, b in zip(fast_frames, slow_frames, strict=True))


def test_monitor_fails_with_verifier_error_on_an_unparseable_answer(tmp_path):
    robot = holding_scene()
    root = compile_node(tmp_path, monitored(CARRY, every=2, verifier="vlm"), robot)
    verifier = VLMVerifier(VLMJudge(EyeBackend(yes_word="I think the bowl is held")))
    result, frames = run(root, robot, services=Services(verifier=verifier))
    verifier.close()
    assert statuses(frames, "watch") == [FAILURE]
    [error] = errors()
    assert error["code"] == "VERIFIER_ERROR"
    assert "unparseable verifier answer 'I think the bowl is held' (expected yes or no)" \
        in error["message"]


def test_monitor_with_verifier_vlm_and_no_vlm_verifier_fails_clearly(tmp_path):
    robot = holding_scene()
    run(compile_node(tmp_path, monitored(CARRY, every=2, verifier="vlm"), robot), robot)
    assert [(e["code"], e["message"]) for e in errors()] == [(
        "VERIFIER_ERROR", "verifier: vlm, but this run has no VLM verifier; carry preempted at "
        "step 0")]
