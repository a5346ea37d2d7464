"""The executive's side of memory: the event recorder, the store a run uses, consolidation.

- `EventRecorder` is a tick observer that writes the short-term event log
  (`tether.blackboard.events`): an event each time a leaf finishes (SUCCESS/FAILURE after running,
  or a changed result of an instant leaf), with the error code it wrote; a composite finishing is a
  sub-task boundary, and a `check` whose result changed is a scene-change boundary.
- `open_store(spec)` is what `tether run --memory` takes: `none` (memory disabled), `fresh` (an
  empty store in the run directory) or a path (a named store, created when missing).
- `remember_episode` builds the `EpisodeRecord` from the blackboard right after an episode and
  consolidates it into the store (`tether.memory.consolidation`); `practice` runs a tree for one
  episode on a given robot (e.g. a kinematic scene) with memory, then consolidates.

The diagnoser consolidation uses is the run's `diagnoser` service when it has one
(`--diagnoser llm`, `tether.session.services`), else the rule-based `diagnose`.
"""

from __future__ import annotations

from pathlib import Path

import py_trees

from tether.blackboard.episode import storage
from tether.blackboard.events import Event, event_log
from tether.memory.consolidation import ConsolidationReport, EpisodeRecord, consolidate
from tether.memory.diagnosis import Diagnoser, diagnose
from tether.memory.retrieval import ADVICE_KEY, memory_params
from tether.memory.store import ExperienceStore
from tether.scenes.robot import Robot
from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file
from tether.trees.episode import EpisodeResult, Tick, run_episode

Status = py_trees.common.Status
DONE = (Status.SUCCESS, Status.FAILURE)
NO_MEMORY, FRESH = "none", "fresh"
STORE_NAME = "memory.db"


def open_store(spec: str | Path | None, run_dir: Path) -> ExperienceStore | None:
    """The store for `--memory SPEC` (see the module docstring)."""
    if spec is None or str(spec) == NO_MEMORY:
        return None
    return ExperienceStore(run_dir / STORE_NAME if str(spec) == FRESH else Path(spec))


def describe(node: py_trees.behaviour.Behaviour) -> str:
    """What a node acts on, for an event's `args` (its target, predicate, ...)."""
    for attr in ("target", "call", "yaw", "steps"):
        if hasattr(node, attr):
            return str(getattr(node, attr))
    return ""


class EventRecorder:
    """A tick observer that writes /memory/events (see the module docstring)."""

    def __init__(self, robot: Robot):
        self.robot = robot
        self.last: dict[object, Status] = {}
        self.seen_errors = 0
        self.logged = 0  # events in the log after the previous tick

    def __call__(self, tick: Tick) -> None:
        history = storage().get("/errors/history", [])
        fresh = {e["node"]: e["code"] for e in history[self.seen_errors:]}
        self.seen_errors = len(history)
        log = event_log()
        notes: dict[str, list[Event]] = {}  # written by `remember` nodes during this tick
        for note in log[self.logged:]:
            notes.setdefault(note.node, []).append(note)
        del log[self.logged:]
        previous, self.last = self.last, {n.id: n.status for n in tick.visited}
        for node in tick.visited:
            status = node.status
            if getattr(node, "logs_itself", False):
                log.extend(notes.pop(node.name, []))  # in tick order among the other events
                continue
            if status not in DONE:
                continue
            before = previous.get(node.id)
            if before == status:
                continue  # an instant leaf polled again with the same result
            composite = isinstance(node, py_trees.composites.Composite)
            if node.children and not composite:
                continue  # a decorator repeats its child's outcome
            changed = getattr(node, "node_type", "") == "check" and before in DONE
            feedback = node.feedback_message
            error = fresh.get(node.name) if status == Status.FAILURE else None
            if error and feedback.startswith(f"{error}: "):
                feedback = feedback[len(error) + 2:]
            log.append(Event(
                step=tick.index - 1, node=node.name,
                action=getattr(node, "node_type", type(node).__name__.lower()),
                args=describe(node), outcome=status.value, feedback=feedback, error=error,
                boundary=composite or changed))
        log.extend(note for left in notes.values() for note in left)
        self.logged = len(log)


def remember_episode(store: ExperienceStore, result: EpisodeResult, *, task: str,
                     instruction: str, bindings: dict, run_id: str,
                     diagnoser: Diagnoser = diagnose) -> ConsolidationReport:
    """Consolidate the episode that just ended (its blackboard is still in place)."""
    bb = storage()
    record = EpisodeRecord(
        task=task, instruction=instruction, objects=list(bb.get("/scene/entities", [])),
        success=result.success, steps=result.steps, ended_by=result.ended_by,
        errors=list(result.errors), events=list(event_log()), params=memory_params(),
        advice=dict(bb.get(ADVICE_KEY, {})), bindings=dict(bindings), run_id=run_id)
    return consolidate(store, record, diagnoser=diagnoser)


def practice(tree: Path | str, robot: Robot, store: ExperienceStore | None, *, task: str,
             instruction: str, budget: int = 1000,
             run_id: str = "", diagnoser: Diagnoser = diagnose,
             ) -> tuple[EpisodeResult, ConsolidationReport | None]:
    """One episode of `tree` on `robot` (params bound from its goal) with memory `store` (None:
    memory off), consolidated into the store afterwards (diagnosed by `diagnoser`)."""
    compiled = compile_tree(tree, goal_bindings(read_tree_file(Path(tree)), robot.goal()),
                            resolve=robot.resolve)
    result = run_episode(compiled.root, robot, budget=budget, task=task, instruction=instruction,
                         params=compiled.bindings, observers=(EventRecorder(robot),),
                         memory=store)
    if store is None:
        return result, None
    return result, remember_episode(store, result, task=task, instruction=instruction,
                                    bindings=compiled.bindings, run_id=run_id,
                                    diagnoser=diagnoser)
