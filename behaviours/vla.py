"""The `vla` leaf: a learned policy driven one action per tick, in chunks, inside a harness.

The leaf asks its policy (a `tether.models.policy.Policy`, named in the tree: see
`tether.models.policies`) for a chunk of actions when its queue is empty, then commands one action
per tick, so guards and reactive composites above it re-check their conditions every control step.
Around the policy it puts the harness the research relies on (Harness VLA, VLA²): a stop predicate,
budgets in steps and chunks, a continuation while the robot is still making progress, a stuck
detector, and a safety screen that keeps a non-finite action or a policy exception from ever
reaching the robot.

Observations are built only when a chunk is requested (`tether.models.observation.observe`: the
policy's cameras are rendered then, never in between). Input interventions (`behaviours.
interventions`) are decorators that register observation filters on the `vla` leaf below them;
the filters transform the images and instruction the policy sees, outermost decorator first.
The policy call is synchronous: in simulation the scene does not advance while the policy
thinks, so a run's result never depends on model latency.

Tick contract (`VLA`):
- `initialise`: `reset` the policy, empty the queue, zero the counters and the stuck window.
- each tick, in order:
  1. SUCCESS (no command) when the stop predicate holds;
  2. when `max_steps` actions have been commanded (or `max_chunks` chunks used and the queue is
     empty): continue for up to `continue_steps` more actions while the end effector moved at
     least `PROGRESS_DISTANCE` m (or the fingers `PROGRESS_WIDTH` m) over the last
     `PROGRESS_WINDOW` steps and, with `toward`, came `PROGRESS_DISTANCE` m closer to that
     entity's bounding box over them or is within `AT_ENTITY` m of it; otherwise FAILURE with
     BUDGET_EXHAUSTED;
  3. with an empty queue: observe, apply the filters, call the policy; an exception, a chunk that
     is not (n, 7), or any NaN/inf in it is FAILURE with POLICY_ERROR (nothing is commanded);
     emits a `vla_chunk` trace event;
  4. pops the next action; FAILURE with STUCK when the stuck detector (`tether.behaviours.stuck`)
     fires on the window ending with it (it is not commanded);
  5. commands the action (clipped to [-1, 1]) and returns RUNNING.
- `terminate`: drops the queued actions; stopped (INVALID) it also withdraws this tick's action.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import py_trees

from tether.behaviours.conditions import PredicateCall
from tether.behaviours.leaf import RobotLeaf
from tether.behaviours.stuck import StuckConfig, StuckDetector
from tether.blackboard.episode import BUDGET_EXHAUSTED, POLICY_ERROR, STUCK
from tether.blackboard.references import Ref, deref, render
from tether.blackboard.trace_events import emit
from tether.models.observation import Observation, observe
from tether.models.policies import policy_for
from tether.models.policy import Policy, check_chunk
from tether.scenes.predicates import box_distance

Status = py_trees.common.Status
ObservationFilter = Callable[[Observation, Any], Observation]

PROGRESS_WINDOW = 10  # steps over which progress is measured
PROGRESS_DISTANCE = 0.01  # m of end-effector travel in the window that counts as progress
PROGRESS_WIDTH = 0.005  # m of finger travel in the window that counts as progress
AT_ENTITY = 0.03  # m from `toward`'s bounding box within which any progress counts


class VLA(RobotLeaf):
    """Run a policy in chunks until `stop` holds; see the module docstring for the contract."""

    def __init__(self, name: str, *, policy: str | Policy, instruction: str, stop: PredicateCall,
                 max_steps: int, max_chunks: int | None, n_action_steps: int | None,
                 continue_steps: int, stuck: StuckConfig | None, toward: str | Ref | None = None):
        super().__init__(name)
        self.policy_ref, self.instruction, self.stop_when = policy, instruction, stop
        self.max_steps, self.max_chunks = max_steps, max_chunks
        self.n_action_steps, self.continue_steps = n_action_steps, continue_steps
        self.toward = toward  # the object the continuation must be closing in on
        self.detector = StuckDetector(stuck) if stuck is not None else None
        self.filters: list[ObservationFilter] = []
        self.last_observation: Observation | None = None

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self.policy = (policy_for(self.policy_ref, self.robot)
                       if isinstance(self.policy_ref, str) else self.policy_ref)

    def add_filter(self, fn: ObservationFilter) -> None:
        """Register an intervention's filter; filters registered later run earlier (a decorator
        set up after the ones inside it is further out)."""
        self.filters.insert(0, fn)

    def initialise(self) -> None:
        self.policy.reset()
        self.queue: deque[np.ndarray] = deque()
        self.actions = self.chunks = 0
        self.trail: deque[tuple[np.ndarray, float, float]] = deque(maxlen=PROGRESS_WINDOW + 1)
        if self.detector:
            self.detector.reset()

    def update(self) -> Status:
        if self.stop_when(self.robot):
            self.feedback_message = f"{self.stop_when} after {self.actions} steps"
            return Status.SUCCESS
        self.trail.append(self.where())
        if self.actions >= self.max_steps + self.continue_steps or (
                self.actions >= self.max_steps and not self.progressing()):
            return self.fail(BUDGET_EXHAUSTED, f"{self.stop_when} not reached after "
                                               f"{self.actions} steps ({self.chunks} chunks)")
        if not self.queue:
            if self.max_chunks is not None and self.chunks >= self.max_chunks \
                    and not self.progressing():
                return self.fail(BUDGET_EXHAUSTED, f"{self.stop_when} not reached after "
                                                   f"{self.chunks} chunks")
            failure = self.next_chunk()
            if failure is not None:
                return failure
        action = self.queue.popleft()
        if self.detector and (reason := self.detector.update(action)):
            return self.fail(STUCK, f"{reason} over the last {self.detector.config.window} "
                                    f"actions (step {self.actions})")
        if self.actions == 0:  # the controller's own posture, as in the policy's demonstrations
            self.robot.steer(None)
        self.actions += 1
        self.feedback_message = (f"chunk {self.chunks}, step {self.actions}/{self.max_steps}, "
                                 f"{len(self.queue)} queued")
        self.command(np.clip(action, -1.0, 1.0))
        return Status.RUNNING

    def progressing(self) -> bool:
        """Whether the robot moved enough over the last `PROGRESS_WINDOW` steps to keep going."""
        if self.continue_steps <= 0 or len(self.trail) <= PROGRESS_WINDOW:
            return False
        (pos0, width0, gap0), (pos1, width1, gap1) = self.trail[0], self.trail[-1]
        moved = (np.linalg.norm(pos1 - pos0) >= PROGRESS_DISTANCE
                 or abs(width1 - width0) >= PROGRESS_WIDTH)
        return bool(moved and (gap1 <= AT_ENTITY or gap0 - gap1 >= PROGRESS_DISTANCE))

    def where(self) -> tuple[np.ndarray, float, float]:
        """The end effector's position, the fingers' width and the end effector's distance to
        `toward`'s bounding box (0 when no continuation can read it)."""
        pos = self.robot.eef_pose().pos
        gap = (box_distance(pos, *self.robot.extent_of(deref(self.toward)))
               if self.toward is not None and self.continue_steps > 0 else 0.0)
        return pos, self.robot.gripper_width(), gap

    def next_chunk(self) -> Status | None:
        """Fill the queue from the policy; FAILURE (POLICY_ERROR) if its answer is unusable."""
        obs = observe(self.robot, self.policy.cameras, render(self.instruction))
        try:
            for apply in self.filters:
                obs = apply(obs, self.robot)
            self.last_observation = obs
            chunk = check_chunk(self.policy.infer(obs))
        except Exception as exc:  # noqa: BLE001 - any policy failure must stop the leaf
            return self.fail(POLICY_ERROR, f"policy raised {type(exc).__name__}: {exc}")
        if not np.all(np.isfinite(chunk)):
            bad = int(np.argwhere(~np.isfinite(chunk))[0][0])
            return self.fail(POLICY_ERROR, f"non-finite action at row {bad} of a chunk of "
                                           f"{len(chunk)}; none of it was executed")
        if self.n_action_steps is not None:
            chunk = chunk[:self.n_action_steps]
        self.chunks += 1
        self.queue.extend(chunk)
        emit("vla_chunk", self.name, size=len(chunk), chunk=self.chunks,
             instruction=obs.instruction, actions=list(chunk))
        return None

    def terminate(self, new_status: Status) -> None:
        super().terminate(new_status)
        if hasattr(self, "queue"):
            self.queue.clear()
