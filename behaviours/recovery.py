"""Recovery building blocks: choosing by error code, and asking the planner again.

`ErrorIs` (node `error_is`) lets a recovery branch run only for the error it handles (Nav2
style): `selector: [move_to..., sequence: [error_is: STUCK, lift, move_to...]]`.

`Replan` (node `replan`) is the end of escalation: it asks a planner for a new subtree with the
failure context (the error history and the short-term event log, ExpTeach's reflection input) and
runs it. The planner is not known to the tree file: it comes as the `replanner` of the run's
`Services` (`setup(services=...)`), a callable `replanner(context: dict) -> Behaviour` that
`tether do` provides (the planner, the plan compiler and the safety rules live in
`tether.planning`). The call is synchronous: in simulation the
scene does not advance while the planner thinks, so a run does not depend on its latency.
"""

from __future__ import annotations

from typing import Any

import py_trees

from tether.behaviours.services import NO_SERVICES, Replanner, Services
from tether.blackboard.episode import BUDGET_EXHAUSTED, last_error, record_error, storage
from tether.blackboard.events import event_log, render_events

Status = py_trees.common.Status


class ErrorIs(py_trees.behaviour.Behaviour):
    """Tick contract: never RUNNING, never commands. SUCCESS when the last recorded error's code
    is one of `codes`, else FAILURE."""

    def __init__(self, name: str, codes: tuple[str, ...]):
        super().__init__(name)
        self.codes = codes

    def update(self) -> Status:
        error = last_error()
        code = error["code"] if error else None
        self.feedback_message = f"last error {code}"
        return Status.SUCCESS if code in self.codes else Status.FAILURE


class Replan(py_trees.behaviour.Behaviour):
    """Ask the planner again and run what it returns, up to `attempts` plans.

    Tick contract:
    - with no plan running: when `attempts` plans were already tried, or no replanner was given
      to `setup`, FAILURE (BUDGET_EXHAUSTED); otherwise call the replanner with the failure
      context (same tick, no step passes), set up the returned subtree as this node's only
      child, and tick it; a replanner error is FAILURE with its message;
    - with a plan running: tick it; its SUCCESS is SUCCESS; its FAILURE drops it, and the next
      tick asks again (while attempts remain); RUNNING is RUNNING (the child commands).
    - `terminate(INVALID)` stops the running plan.
    """

    def __init__(self, name: str, attempts: int):
        super().__init__(name)
        self.attempts = attempts
        self.tried = 0
        self.replanner: Replanner | None = None
        self.setup_kwargs: dict[str, Any] = {}
        self.robot: Any = None

    def setup(self, **kwargs: Any) -> None:
        self.setup_kwargs = kwargs
        services: Services = kwargs.get("services", NO_SERVICES)
        self.replanner = services.replanner
        self.robot = kwargs.get("robot")

    def context(self) -> dict[str, Any]:
        store = storage()
        return {"instruction": store.get("/task/instruction", ""),
                "errors": list(store.get("/errors/history", [])),
                "events": render_events(list(event_log())), "attempt": self.tried,
                "robot": self.robot}

    def _fail(self, message: str) -> Status:
        self.feedback_message = message
        record_error(BUDGET_EXHAUSTED, self.name, message, getattr(self.robot, "steps", 0))
        return Status.FAILURE

    def update(self) -> Status:
        if not self.children:
            if self.replanner is None:
                return self._fail("no planner to ask (run with `tether do`)")
            if self.tried >= self.attempts:
                return self._fail(f"{self.tried} replanned plan(s) failed")
            self.tried += 1
            try:
                child = self.replanner(self.context())
            except Exception as exc:  # a planner's failure is this node's failure, with why
                return self._fail(f"replanning failed: {exc}")
            for node in child.iterate():  # as BehaviourTree.setup does for the whole tree
                node.setup(**self.setup_kwargs)
            child.parent = self
            self.children = [child]
        child = self.children[0]
        for _ in child.tick():
            pass
        if child.status == Status.FAILURE:
            self.children = []
            self.feedback_message = f"plan {self.tried} failed"
            return Status.RUNNING if self.tried < self.attempts else self._fail(
                f"{self.tried} replanned plan(s) failed")
        self.feedback_message = f"plan {self.tried}: {child.status.value}"
        return child.status

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self.children:
            self.children[0].stop(Status.INVALID)
