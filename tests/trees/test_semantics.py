"""Tick-level semantics of every composite and decorator, as compiled from YAML (BT.CPP style:
each test is named for the rule it proves). Leaves and conditions have their own tests under
tests/behaviours/."""

from __future__ import annotations

import pytest

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
from tether.blackboard.episode import storage

BOWL_NEAR_PLATE = (f"check: {{predicate: near, object: {BOWL}, target: {PLATE}, distance: 0.2, "
                   "name: bowl near plate}")
BOWL_ON_PLATE = f"check: {{predicate: on, object: {BOWL}, target: {PLATE}, name: bowl on plate}}"
REACH = "move_to: {target: [0.2, 0.2, 0.25], name: reach}"
PUSH_BOWL_AWAY = move_box(BOWL, [-0.2, 0.0, 0.02])
PUT_BOWL_ON_PLATE = move_box(BOWL, [0.25, 0.0, 0.03])


# --- sequence and reactive_sequence ------------------------------------------------------------
def test_sequence_resumes_the_running_child_without_re_checking_earlier_children(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"sequence: [{{{BOWL_NEAR_PLATE}}}, {{{REACH}}}]", robot)
    result, frames = run(root, robot, events={2: PUSH_BOWL_AWAY})
    assert result.tree_status == "SUCCESS"  # the condition stopped holding after tick 2
    assert [("bowl near plate" in f.visited) for f in frames[:3]] == [True, False, False]
    assert statuses(frames, "reach")[-1] == SUCCESS


def test_reactive_sequence_re_checks_earlier_conditions_every_tick(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"reactive_sequence: [{{{BOWL_NEAR_PLATE}}}, {{{REACH}}}]",
                        robot)
    _, frames = run(root, robot, events={5: PUSH_BOWL_AWAY})
    assert all("bowl near plate" in f.visited for f in frames)
    assert statuses(frames, "bowl near plate") == [SUCCESS] * 5 + [FAILURE]


def test_reactive_sequence_stops_the_running_child_when_an_earlier_condition_fails_and_the_robot_holds(  # noqa: E501
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - reactive_sequence: [{{{BOWL_NEAR_PLATE}}}, {{{REACH}}}]
          - wait: {{steps: 2, name: fallback}}
        """, robot)
    _, frames = run(root, robot, events={2: PUSH_BOWL_AWAY})
    assert statuses(frames, "reach") == [RUNNING, RUNNING, INVALID, INVALID, INVALID]
    assert [f.commander for f in frames[:2]] == ["reach", "reach"]
    assert frames[2].status["fallback"] == RUNNING
    assert frames[2].holds_since(frames[1])


def test_sequence_fails_at_the_first_failing_child_and_never_ticks_the_rest(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"sequence: [{{wait: 1}}, {{{BOWL_ON_PLATE}}}, {{{REACH}}}]",
                        robot)
    result, frames = run(root, robot)
    assert result.tree_status == "FAILURE"
    assert all(f.status["reach"] == INVALID and "reach" not in f.visited for f in frames)


def test_sequence_succeeds_when_every_child_succeeds_in_order(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence: [{wait: {steps: 1, name: a}}, {wait: {steps: 2, name: b}}]
        """, robot)
    result, frames = run(root, robot)
    assert statuses(frames, "a") == [RUNNING, SUCCESS, SUCCESS, SUCCESS]
    assert statuses(frames, "b") == [INVALID, RUNNING, RUNNING, SUCCESS]
    assert result.tree_status == "SUCCESS"


# --- selector and reactive_selector ------------------------------------------------------------
def test_selector_tries_children_in_order_until_one_does_not_fail(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector: [{{{BOWL_ON_PLATE}}}, {{wait: {{steps: 1, name: a}}}}, {{wait: {{steps: 1, name: b}}}}]
        """, robot)  # noqa: E501
    result, frames = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert statuses(frames, "a") == [RUNNING, SUCCESS]
    assert all(f.status["b"] == INVALID for f in frames)


def test_selector_fails_when_every_child_fails(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - {BOWL_ON_PLATE}
          - check: {{predicate: grasped, object: {BOWL}, name: holding}}
        """, robot)
    result, frames = run(root, robot)
    assert result.tree_status == "FAILURE" and len(frames) == 1
    assert frames[0].visited >= {"bowl on plate", "holding"}


def test_selector_resumes_the_running_child_even_when_a_higher_priority_child_would_now_succeed(
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - sequence: [{{{BOWL_ON_PLATE}}}, {{wait: {{steps: 3, name: celebrate}}}}]
          - {REACH}
        """, robot)
    result, frames = run(root, robot, events={2: PUT_BOWL_ON_PLATE})
    assert statuses(frames, "reach")[-1] == SUCCESS
    assert all(f.status["celebrate"] == INVALID for f in frames)
    assert all("bowl on plate" not in f.visited for f in frames[1:])


def test_reactive_selector_higher_priority_branch_preempts_the_running_primitive_and_the_robot_holds(  # noqa: E501
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        reactive_selector:
          - sequence: [{{{BOWL_ON_PLATE}}}, {{wait: {{steps: 3, name: celebrate}}}}]
          - {REACH}
        """, robot)
    result, frames = run(root, robot, events={2: PUT_BOWL_ON_PLATE})
    assert statuses(frames, "reach")[:3] == [RUNNING, RUNNING, INVALID]
    assert [f.commander for f in frames[:2]] == ["reach", "reach"]
    assert frames[2].status["celebrate"] == RUNNING
    assert frames[2].holds_since(frames[1])  # preempted: no command, the arm did not move
    assert all(f.holds_since(frames[1]) for f in frames[2:])
    assert result.tree_status == "SUCCESS" and result.success


def test_reactive_selector_re_checks_higher_priority_branches_every_tick(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"reactive_selector: [{{{BOWL_ON_PLATE}}}, {{{REACH}}}]", robot)
    _, frames = run(root, robot)
    assert all("bowl on plate" in f.visited for f in frames)


def test_reactive_selector_preempting_branch_may_command_in_the_same_tick(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        reactive_selector:
          - sequence:
              - {BOWL_ON_PLATE}
              - move_to: {{target: [0.0, 0.0, 0.4], name: back off}}
          - {REACH}
        """, robot)
    _, frames = run(root, robot, events={2: PUT_BOWL_ON_PLATE})
    assert frames[2].status["reach"] == INVALID
    assert frames[2].commander == "back off"  # one commander: no CommandConflict


# --- parallel ----------------------------------------------------------------------------------
TWO_WAITS = "[{wait: {steps: 2, name: short}}, {wait: {steps: 4, name: long}}]"


def test_parallel_ticks_every_child_every_tick(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"parallel: [{{{REACH}}}, {{wait: {{steps: 3, name: w}}}}]",
                        robot)
    _, frames = run(root, robot)
    assert all({"reach", "w"} <= f.visited for f in frames[:3])
    assert [f.commander for f in frames[:3]] == ["reach"] * 3


def test_parallel_success_on_all_succeeds_when_every_child_has_succeeded(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"parallel: {TWO_WAITS}", robot)
    result, frames = run(root, robot)
    assert [f.root for f in frames] == [RUNNING] * 4 + [SUCCESS]
    assert result.steps == 4


def test_parallel_synchronise_does_not_re_tick_children_that_already_succeeded(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"parallel: {TWO_WAITS}", robot)
    _, frames = run(root, robot)
    assert ["short" in f.visited for f in frames] == [True, True, True, False, False]


def test_parallel_without_synchronise_re_ticks_children_that_succeeded(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        parallel: {{synchronise: false, children: {TWO_WAITS}}}
        """, robot)
    _, frames = run(root, robot, budget=12)
    assert all("short" in f.visited for f in frames)
    # short restarts after each success, so both never succeed in the same tick
    assert statuses(frames, "short")[:6] == [RUNNING, RUNNING, SUCCESS, RUNNING, RUNNING, SUCCESS]


def test_parallel_success_on_one_succeeds_with_the_first_success_and_stops_the_others(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"parallel: {{success_on: one, children: {TWO_WAITS}}}",
                        robot)
    result, frames = run(root, robot)
    assert [f.root for f in frames] == [RUNNING, RUNNING, SUCCESS]
    assert frames[-1].status["long"] == INVALID


@pytest.mark.parametrize(("selected", "ticks"), [("[long]", 5), ("[short]", 3),
                                                 ("[short, long]", 5)])
def test_parallel_success_on_selected_children_succeeds_when_those_named_children_have(
        tmp_path, selected, ticks):
    robot = scene()
    root = compile_node(
        tmp_path, f"parallel: {{success_on: {selected}, children: {TWO_WAITS}}}", robot)
    _, frames = run(root, robot)
    assert [f.root for f in frames] == [RUNNING] * (ticks - 1) + [SUCCESS]


def test_parallel_fails_as_soon_as_one_child_fails_and_stops_the_others(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        parallel:
          - wait: {{steps: 5, name: w}}
          - reactive_sequence: [{{{BOWL_NEAR_PLATE}}}, {{wait: 10}}]
        """, robot)
    result, frames = run(root, robot, events={2: PUSH_BOWL_AWAY})
    assert [f.root for f in frames] == [RUNNING, RUNNING, FAILURE]
    assert frames[-1].status["w"] == INVALID


def test_parallel_monitor_failing_after_a_primitive_commanded_withdraws_that_command(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - parallel:
              synchronise: false  # else the monitor, once it succeeded, is never ticked again
              children: [{{{REACH}}}, {{{BOWL_NEAR_PLATE}}}]
          - wait: {{steps: 2, name: fallback}}
        """, robot)
    _, frames = run(root, robot, events={2: PUSH_BOWL_AWAY})
    # tick 3: reach is ticked first and commands, then the monitor fails and reach is stopped
    assert statuses(frames, "reach")[:3] == [RUNNING, RUNNING, INVALID]
    assert frames[2].holds_since(frames[1])


def test_a_primitive_stopped_after_commanding_leaves_the_tick_to_the_branch_that_replaces_it(
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        selector:
          - parallel:
              synchronise: false
              children: [{{{REACH}}}, {{{BOWL_NEAR_PLATE}}}]
          - move_to: {{target: [0.0, 0.0, 0.4], name: back off}}
        """, robot)
    _, frames = run(root, robot, events={2: PUSH_BOWL_AWAY})
    assert frames[2].status["reach"] == INVALID
    assert frames[2].commander == "back off"  # not a CommandConflict with the stopped `reach`


def test_two_commanders_in_one_parallel_raise_command_conflict_at_the_second(tmp_path):
    from tether.blackboard.episode import CommandConflict
    from tether.errors import TickError

    robot = scene()
    root = compile_node(tmp_path, """
        parallel:
          - move_to: {target: [0.1, 0, 0.3], name: left}
          - move_to: {target: [-0.1, 0, 0.3], name: right}
        """, robot)
    with pytest.raises(TickError) as caught:
        run(root, robot)
    assert caught.value.node == "parallel/right"
    assert str(caught.value).endswith("two leaves commanded the robot in one tick: 'left' and "
                                      "'right'")
    assert isinstance(caught.value.__cause__, CommandConflict)


# --- retry and repeat --------------------------------------------------------------------------
FAILING_CHECK = f"check: {{predicate: grasped, object: {BOWL}, error: EMPTY_GRASP, name: holding}}"


@pytest.mark.parametrize("n", [1, 3])
def test_retry_n_runs_a_failing_child_n_times_then_fails(tmp_path, n):
    robot = scene()
    root = compile_node(tmp_path, f"retry: {{n: {n}, name: again, child: {{{FAILING_CHECK}}}}}",
                        robot)
    result, frames = run(root, robot)
    assert len(errors()) == n
    assert statuses(frames, "again") == [RUNNING] * (n - 1) + [FAILURE]
    assert result.steps == n - 1  # the robot held while the retry waited for the next tick


def test_retry_succeeds_as_soon_as_the_child_succeeds(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"retry: {{n: 5, name: again, child: {{{BOWL_ON_PLATE}}}}}",
                        robot)
    result, frames = run(root, robot, events={2: PUT_BOWL_ON_PLATE})
    assert statuses(frames, "again") == [RUNNING, RUNNING, SUCCESS]


def test_retry_restarts_the_child_from_scratch_on_each_attempt(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        retry:
          n: 2
          child:
            sequence: [{{wait: {{steps: 2, name: w}}}}, {{{FAILING_CHECK}}}]
        """, robot)
    _, frames = run(root, robot)
    assert statuses(frames, "w") == [RUNNING, RUNNING, SUCCESS, RUNNING, RUNNING, SUCCESS]


@pytest.mark.parametrize("n", [1, 3])
def test_repeat_n_succeeds_on_the_childs_nth_success(tmp_path, n):
    robot = scene()
    root = compile_node(tmp_path, f"repeat: {{n: {n}, name: again, child: {{wait: 1}}}}", robot)
    result, frames = run(root, robot)
    # each run of `wait: 1` takes two ticks; between runs the repeat is RUNNING
    assert [f.root for f in frames] == [RUNNING] * (2 * n - 1) + [SUCCESS]
    assert result.tree_status == "SUCCESS"


def test_repeat_fails_at_the_childs_first_failure(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"repeat: {{n: 3, child: {{{FAILING_CHECK}}}}}", robot)
    result, frames = run(root, robot)
    assert result.tree_status == "FAILURE" and len(frames) == 1 and len(errors()) == 1


# --- invert, force_success, force_failure ------------------------------------------------------
@pytest.mark.parametrize(("decorator", "child", "expected"), [
    ("invert", BOWL_ON_PLATE, "SUCCESS"),
    ("invert", "wait: 0", "FAILURE"),
    ("force_success", BOWL_ON_PLATE, "SUCCESS"),
    ("force_success", "wait: 0", "SUCCESS"),
    ("force_failure", BOWL_ON_PLATE, "FAILURE"),
    ("force_failure", "wait: 0", "FAILURE"),
])
def test_status_decorators_map_the_childs_result(tmp_path, decorator, child, expected):
    robot = scene()
    root = compile_node(tmp_path, f"{decorator}: {{{child}}}", robot)
    assert run(root, robot)[0].tree_status == expected


@pytest.mark.parametrize("decorator", ["invert", "force_success", "force_failure"])
def test_status_decorators_leave_running_as_running(tmp_path, decorator):
    robot = scene()
    root = compile_node(tmp_path, f"{decorator}: {{wait: 2}}", robot)
    _, frames = run(root, robot)
    assert [f.root for f in frames][:2] == [RUNNING, RUNNING]


def test_decorator_shorthand_and_child_form_compile_to_the_same_tree(tmp_path):
    short = compile_node(tmp_path, "invert: {wait: 2}")
    (tmp_path / "long").mkdir()
    full = compile_node(tmp_path / "long", "invert: {child: {wait: 2}, name: not waiting}")
    assert type(short) is type(full)
    assert [c.name for c in short.children] == [c.name for c in full.children] == ["wait 2"]
    assert full.name == "not waiting"


# --- once --------------------------------------------------------------------------------------
def test_once_runs_its_child_to_completion_once_and_then_returns_that_result_without_ticking_it(
        tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"retry: {{n: 3, child: {{once: {{{FAILING_CHECK}}}}}}}", robot)
    result, frames = run(root, robot)
    assert len(errors()) == 1  # without `once` the check would run (and fail) three times
    assert ["holding" in f.visited for f in frames] == [True, False, False]
    assert result.tree_status == "FAILURE"


def test_once_remembers_success_and_does_not_re_run_a_running_child(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        repeat:
          n: 3
          child:
            once: {wait: {steps: 2, name: w}}
        """, robot)
    _, frames = run(root, robot)
    # the first run takes 3 ticks; the second and third are answered by `once` in one tick each
    assert statuses(frames, "w")[:3] == [RUNNING, RUNNING, SUCCESS]
    assert [("w" in f.visited) for f in frames] == [True, True, True, False, False]


# --- set and blackboard references ------------------------------------------------------------
def test_set_writes_relative_keys_under_user_and_absolute_keys_as_written(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - set: {key: attempts, value: 2}
          - set: {key: /notes/target, value: [0.1, 0.2, 0.3]}
          - set: {key: plan/next, value: {step: grasp}}
        """, robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS" and result.steps == 0
    store = storage()
    assert store["/user/attempts"] == 2
    assert store["/notes/target"] == [0.1, 0.2, 0.3]
    assert store["/user/plan/next"] == {"step": "grasp"}


def test_set_overwrites_a_key_each_time_it_runs(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - set: {key: phase, value: approach}
          - set: {key: phase, value: grasp}
        """, robot)
    run(root, robot)
    assert storage()["/user/phase"] == "grasp"


def test_set_value_that_is_a_reference_copies_that_key_when_it_runs(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        sequence:
          - set: {key: first, value: 1}
          - set: {key: copy, value: "${/user/first}"}
          - set: {key: first, value: 2}
        """, robot)
    run(root, robot)
    assert storage()["/user/copy"] == 1


def test_blackboard_references_in_targets_are_read_at_run_time(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: goal_object, value: {PLATE}}}
          - move_to: {{target: {{object: "${{/user/goal_object}}", offset: [0, 0, 0.1]}}, name: go}}
        """, robot)
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert robot.eef_pose().pos == pytest.approx([0.25, 0.0, 0.105], abs=0.01)
