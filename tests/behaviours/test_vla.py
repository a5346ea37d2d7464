"""Tick contract of the `vla` leaf (`behaviours/vla.py`) and the stuck detector
(`behaviours/stuck.py`), with fake policies on a `KinematicScene` through the real tick loop."""

from __future__ import annotations

import numpy as np
import pytest

from tests.trees.harness import BOWL, Status, compile_node, run, scene
from tether.behaviours.stuck import StuckConfig, StuckDetector
from tether.blackboard import trace_events
from tether.models.observation import CameraSpec, Observation
from tether.models.policies import POLICIES, register_policy
from tether.scenes.robot import CLOSE, OPEN

RUNNING, SUCCESS, FAILURE = Status.RUNNING, Status.SUCCESS, Status.FAILURE


class Scripted:
    """A fake policy: returns the chunks it was given, in turn (the last one forever)."""

    cameras: tuple[CameraSpec, ...] = ()

    def __init__(self, *chunks, raises: Exception | None = None):
        self.chunks, self.raises = [np.asarray(c, float) for c in chunks], raises
        self.calls: list[Observation] = []
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def infer(self, obs: Observation) -> np.ndarray:
        self.calls.append(obs)
        if self.raises:
            raise self.raises
        return self.chunks[min(len(self.calls) - 1, len(self.chunks) - 1)]


class Reacher:
    """A fake closed-loop policy: servo to the bowl in chunks of 3, then close the gripper."""

    cameras = (CameraSpec("robot0_eye_in_hand", (8, 8), "image2"),)

    def __init__(self, robot):
        self.robot = robot
        self.calls = 0

    def reset(self) -> None:
        self.calls = 0

    def infer(self, obs: Observation) -> np.ndarray:
        self.calls += 1
        goal = self.robot.pose_of(BOWL).pos
        here = self.robot.eef_pose()
        close = np.linalg.norm(goal - here.pos) < 0.01
        action = self.robot.servo(goal, here.quat, CLOSE if close else OPEN)
        action[:6] *= 0.4  # three steps of this chunk do not overshoot
        return np.stack([action] * 3)


@pytest.fixture
def policy():
    """Register a fake under the name `fake`; yields a setter for it."""
    holder: dict = {}
    register_policy("fake", lambda robot: holder["policy"])
    yield lambda p: holder.__setitem__("policy", p)
    POLICIES.unregister("fake")


def vla(extra: str = "", predicate: str = f"{{predicate: grasped, object: {BOWL}}}") -> str:
    body = predicate.strip("{}")
    return f"vla: {{policy: fake, name: act, {body}{', ' + extra if extra else ''}}}"


def codes(result) -> list[str]:
    return [e["code"] for e in result.errors]


def vla_actions(frames) -> list[np.ndarray]:
    return [f.action for f in frames if f.commander == "act"]


def test_vla_commands_one_action_per_tick_and_requests_a_chunk_when_the_queue_empties(
        tmp_path, policy):
    robot = scene()
    fake = Scripted(np.full((3, 7), 0.5) * [1, 0, 0, 0, 0, 0, -2])
    policy(fake)
    root = compile_node(tmp_path, vla("max_steps: 7, continue_steps: 0, stuck: false"), robot)
    result, frames = run(root, robot, budget=20)
    actions = vla_actions(frames)
    assert len(actions) == 7 and all(f.status["act"] == RUNNING for f in frames[:7])
    assert [f.steps for f in frames[:7]] == list(range(1, 8))
    assert len(fake.calls) == 3  # chunks of 3: ticks 1, 4, 7
    assert fake.resets == 1
    assert codes(result) == ["BUDGET_EXHAUSTED"]


def test_vla_succeeds_without_commanding_once_the_stop_predicate_holds(tmp_path, policy):
    robot = scene()
    policy(Reacher(robot))
    result, frames = run(compile_node(tmp_path, vla(), robot), robot)
    assert result.tree_status == "SUCCESS"
    assert robot.is_grasped(BOWL)
    assert frames[-1].action is None and frames[-1].status["act"] == SUCCESS


def test_vla_renders_the_policy_cameras_and_templates_the_instruction(tmp_path, policy):
    robot = scene()
    reacher = Reacher(robot)
    seen: list[Observation] = []
    infer = reacher.infer
    reacher.infer = lambda obs: (seen.append(obs), infer(obs))[1]
    policy(reacher)
    node = vla("instruction: 'grasp it: ${/task/instruction}'")
    run(compile_node(tmp_path, node, robot), robot, instruction="put the bowl on the plate")
    assert seen[0].instruction == "grasp it: put the bowl on the plate"
    assert seen[0].images["image2"].shape == (8, 8, 3)  # the kinematic scene: black frames
    assert seen[0].state.shape == (8,)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_action_never_reaches_the_robot(tmp_path, policy, bad):
    robot = scene()
    good = np.full((4, 7), 0.3) * [1, 0, 0, 0, 0, 0, -3]
    poisoned = good.copy()
    poisoned[2, 1] = bad
    policy(Scripted(good, poisoned))
    result, frames = run(compile_node(tmp_path, vla("stuck: false"), robot), robot)
    actions = vla_actions(frames)
    assert len(actions) == 4  # the first chunk ran; nothing of the poisoned one did
    assert all(np.all(np.isfinite(a)) for a in actions)
    assert result.tree_status == "FAILURE" and codes(result) == ["POLICY_ERROR"]
    assert "non-finite action at row 2" in result.errors[0]["message"]


def test_a_policy_exception_fails_the_leaf_and_nothing_is_commanded(tmp_path, policy):
    robot = scene()
    policy(Scripted(np.zeros((1, 7)), raises=RuntimeError("server went away")))
    result, frames = run(compile_node(tmp_path, vla(), robot), robot)
    assert vla_actions(frames) == [] and robot.steps == 0
    assert codes(result) == ["POLICY_ERROR"]
    assert "RuntimeError: server went away" in result.errors[0]["message"]


def test_a_malformed_chunk_is_a_policy_error(tmp_path, policy):
    robot = scene()
    policy(Scripted(np.zeros((2, 6))))
    result, _ = run(compile_node(tmp_path, vla(), robot), robot)
    assert codes(result) == ["POLICY_ERROR"] and "(n, 7)" in result.errors[0]["message"]


def test_vla_fails_stuck_when_the_policy_stops_moving(tmp_path, policy):
    robot = scene()
    still = np.zeros((5, 7))
    still[:, 6] = -1
    policy(Scripted(still))
    result, frames = run(compile_node(tmp_path, vla(), robot), robot)
    assert len(vla_actions(frames)) == 7  # the 8th action completes the window: not commanded
    assert codes(result) == ["STUCK"] and "weak motion" in result.errors[0]["message"]


def test_vla_budget_in_chunks(tmp_path, policy):
    robot = scene()
    fake = Scripted(np.full((2, 7), 0.4) * [0, 1, 0, 0, 0, 0, -2.5])
    policy(fake)
    result, frames = run(compile_node(tmp_path, vla("max_chunks: 3, continue_steps: 0"), robot),
                         robot)
    assert len(vla_actions(frames)) == 6 and len(fake.calls) == 3
    assert codes(result) == ["BUDGET_EXHAUSTED"] and "3 chunks" in result.errors[0]["message"]


def test_vla_continues_past_its_budget_while_progressing_then_stops(tmp_path, policy):
    robot = scene()
    policy(Scripted(np.full((1, 7), 0.5) * [1, 0, 0, 0, 0, 0, -2]))  # keeps moving in x
    node = vla("max_steps: 15, continue_steps: 10, stuck: false")
    result, frames = run(compile_node(tmp_path, node, robot), robot)
    assert len(vla_actions(frames)) == 25
    assert codes(result) == ["BUDGET_EXHAUSTED"]


def test_vla_does_not_continue_past_its_budget_when_not_progressing(tmp_path, policy):
    robot = scene()
    policy(Scripted(np.full((1, 7), 0.01) * [1, 0, 0, 0, 0, 0, -100]))  # creeps 0.2 mm/step
    node = vla("max_steps: 15, continue_steps: 10, stuck: false")
    result, frames = run(compile_node(tmp_path, node, robot), robot)
    assert len(vla_actions(frames)) == 15


def test_vla_emits_a_trace_event_per_chunk(tmp_path, policy):
    robot = scene()
    policy(Scripted(np.full((2, 7), 0.5) * [1, 0, 0, 0, 0, 0, -2]))
    events: list[dict] = []
    root = compile_node(tmp_path, vla("max_steps: 4, continue_steps: 0, stuck: false"), robot)
    run(root, robot, events={t: lambda r: events.extend(trace_events.drain()) for t in range(6)})
    assert [(e["kind"], e["node"], e["size"]) for e in events] == [("vla_chunk", "act", 2)] * 2
    assert np.array_equal(events[0]["actions"], [[0.5, 0, 0, 0, 0, 0, -1.0]] * 2)


def test_vla_n_action_steps_uses_only_the_head_of_each_chunk(tmp_path, policy):
    robot = scene()
    fake = Scripted(np.full((10, 7), 0.5) * [1, 0, 0, 0, 0, 0, -2])
    policy(fake)
    run(compile_node(tmp_path, vla("max_steps: 6, n_action_steps: 2, continue_steps: 0, "
                                   "stuck: false"), robot), robot)
    assert len(fake.calls) == 3


def test_an_unknown_policy_name_is_a_clear_error(tmp_path):
    from tether.errors import TetherError

    robot = scene()
    root = compile_node(tmp_path, "vla: {policy: grasp_akt, predicate: grasped, object: bowl}",
                        robot)
    with pytest.raises(TetherError, match="did you mean 'grasp_act'"):
        run(root, robot)


# --- the stuck detector ------------------------------------------------------------------------
def feed(actions) -> list[str | None]:
    detector = StuckDetector(StuckConfig())
    return [detector.update(a) for a in actions]


def test_stuck_detector_fires_on_a_still_sequence_only_when_the_window_is_full():
    still = [np.array([0.005, -0.01, 0.0, 0.01, 0.0, 0.0, -1.0])] * 8
    assert feed(still) == [None] * 7 + ["weak motion"]


def test_stuck_detector_fires_on_an_oscillation():
    wiggle = [np.array([0.3 * (-1) ** i, 0, 0, 0, 0, 0, 1.0]) for i in range(8)]
    assert feed(wiggle)[-1] == "oscillation"


def test_stuck_detector_stays_quiet_on_a_moving_sequence():
    rng = np.random.default_rng(0)
    moving = [np.concatenate([[0.0, 0.0, -0.5], rng.normal(0, 0.01, 3), [-1.0]]) + rng.normal(
        0, 0.005, 7) for _ in range(30)]
    assert set(feed(moving)) == {None}


def test_stuck_detector_stays_quiet_while_the_gripper_closes():
    closing = [np.array([0, 0, 0, 0, 0, 0, -1.0 if i < 4 else 1.0]) for i in range(8)]
    assert feed(closing)[-1] is None


def test_stuck_detector_stays_quiet_on_a_slow_but_steady_motion():
    slow = [np.array([0.015, 0.015, 0.0, 0, 0, 0, -1.0])] * 8  # 0.021 per step: above 0.02
    assert feed(slow)[-1] is None


@pytest.mark.parametrize("direction,actions", [(-1, 25), (1, 15)])
def test_vla_with_toward_continues_only_while_closing_in_on_it(tmp_path, policy, direction,
                                                                actions):
    """Down onto the bowl it continues to the end of `continue_steps`; up and away from it, it
    moves just as much but stops at its budget."""
    robot = scene()
    policy(Scripted(np.full((1, 7), 0.3) * [0, 0, direction, 0, 0, 0, -3]))
    node = vla(f"max_steps: 15, continue_steps: 10, stuck: false, toward: {BOWL}")
    result, frames = run(compile_node(tmp_path, node, robot), robot)
    assert len(vla_actions(frames)) == actions
    assert codes(result) == ["BUDGET_EXHAUSTED"]
    assert robot.eef_pose().pos[2] > robot.extent_of(BOWL)[1][2]  # never reached it


def test_vla_with_toward_continues_at_the_entity_while_the_robot_moves(tmp_path, policy):
    """At the bowl (within 3 cm of its box) any progress counts: here a sideways sweep."""
    robot = scene()
    robot.boxes[BOWL].pos = robot.eef_pose().pos.copy()
    policy(Scripted(np.full((1, 7), 0.1) * [0, 1, 0, 0, 0, 0, -3]))  # 2 mm a step along y
    node = vla(f"max_steps: 12, continue_steps: 8, stuck: false, toward: {BOWL}")
    result, frames = run(compile_node(tmp_path, node, robot), robot)
    assert len(vla_actions(frames)) == 20
    assert codes(result) == ["BUDGET_EXHAUSTED"]
