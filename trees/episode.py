"""The tick loop: one tick of the tree, then exactly one control step of the robot.

Each tick the tree is ticked once; the leaf that commands the robot has put at most one action in
the command slot (a second commander raises `CommandConflict`). The robot steps with that action,
or holds its pose when no leaf commanded. The episode ends when the root returns SUCCESS or
FAILURE or when the step budget is spent, or, with `until_goal` (LIBERO's evaluation protocol,
where the environment reports done), at the first step after which the task's goal holds;
success is the task's own test, not the tree's status.
Every episode starts from a clean blackboard. An exception raised while the tree is set up,
ticked or stopped (by a leaf, a decorator, a guard's predicate, the command slot) ends the episode
as a `TickError` naming the node it was raised in, by its path and the `file:line` of the tree
file that wrote it, with the original exception as its `__cause__`. Ctrl-C while ticking is taken
at the next tick boundary (`interrupt_between_ticks`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import py_trees

from tether.behaviours.services import NO_SERVICES, Services
from tether.blackboard.episode import COMMAND, new_episode, storage
from tether.errors import TickError
from tether.scenes.robot import Robot

Status = py_trees.common.Status


@dataclass
class Tick:
    """What happened in one tick (handed to observers such as the progress display)."""

    index: int
    root: Status
    tip: str | None
    action: np.ndarray | None
    commander: str | None
    visited: list[py_trees.behaviour.Behaviour]


@dataclass
class EpisodeResult:
    success: bool
    tree_status: str
    steps: int
    sim_time: float
    ended_by: str  # "tree", "budget", or "goal" (`until_goal`: the task's goal held)
    node_status: dict[str, str] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)


def node_paths(root: py_trees.behaviour.Behaviour) -> dict[py_trees.behaviour.Behaviour, str]:
    """Every node's path of names from the root (`#2`, `#3`, ... tell equal paths apart)."""
    out: dict[py_trees.behaviour.Behaviour, str] = {}
    taken: set[str] = set()
    stack = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        path = f"{prefix}/{node.name}" if prefix else node.name
        key, n = path, 2
        while key in taken:
            key, n = f"{path}#{n}", n + 1
        taken.add(key)
        out[node] = key
        stack.extend((child, path) for child in reversed(node.children))
    return out


def node_statuses(root: py_trees.behaviour.Behaviour) -> dict[str, str]:
    """Final status of every node, keyed by its path of names from the root."""
    return {path: node.status.value for node, path in node_paths(root).items()}


@contextmanager
def located(root: py_trees.behaviour.Behaviour) -> Iterator[None]:
    """Re-raise an exception from inside the tree as a `TickError` at the node that raised it.

    That node is the innermost behaviour of `root`'s tree among the methods the exception passed
    through (a helper leaf a node drives is not in the tree: the node is named). An exception
    that passed through no node of the tree is not the tree's and propagates unchanged.
    """
    try:
        yield
    except TickError:
        raise
    except Exception as exc:
        paths = node_paths(root)
        node = None
        tb = exc.__traceback__
        while tb is not None:
            owner = tb.tb_frame.f_locals.get("self")
            if isinstance(owner, py_trees.behaviour.Behaviour) and owner in paths:
                node = owner
            tb = tb.tb_next
        if node is None:
            raise
        raise TickError(paths[node], getattr(node, "origin", None), exc) from exc


@contextmanager
def interrupt_between_ticks() -> Iterator[Callable[[], None]]:
    """Hold a Ctrl-C (SIGINT) until the loop calls the yielded check at a tick boundary, which
    raises the `KeyboardInterrupt` there: raised anywhere, it can land in jitted or C code that
    turns it into another error or loses it, or leave the simulator half stepped. A second
    Ctrl-C raises at once, for a tick that never ends. Only where Python's own handler is
    installed, in the main thread; elsewhere (an ignored SIGINT, a worker thread) the check
    does nothing."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield lambda: None
        return
    pending: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if pending:
            raise KeyboardInterrupt
        pending.append(signum)

    def check() -> None:
        if pending:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, hold)
    try:
        yield check
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def tick_once(root: py_trees.behaviour.Behaviour,
              visitor: py_trees.visitors.SnapshotVisitor | None = None) -> None:
    """Tick `root` once, `visitor` (when given) visiting each node ticked: `BehaviourTree.tick`
    without handlers, and without the walk over the whole tree it makes after each tick for the
    visitors that ask to see all of it (`full`; none here), a generator step per node and level
    every tick."""
    if visitor is not None:
        visitor.initialise()
    for node in root.tick():
        if visitor is not None:
            node.visit(visitor)
    if visitor is not None:
        visitor.finalise()


def run_episode(root: py_trees.behaviour.Behaviour, robot: Robot, *, budget: int,
                task: str = "", instruction: str = "", params: dict | None = None,
                observers: tuple[Callable[[Tick], None], ...] = (),
                memory: Any = None, services: Services = NO_SERVICES,
                outcome: Callable[[], bool] | None = None,
                until_goal: bool = False) -> EpisodeResult:
    """Tick `root` against `robot` until it finishes or `budget` steps have been taken, or, with
    `until_goal`, until the goal holds after a step.

    The episode's success is `outcome()`, the benchmark's own goal test (default: the robot's
    `success`; under camera perception the session passes the scene's, declared as such).

    `memory` (a long-term `ExperienceStore`, or None) is handed to every node's `setup`, where
    the memory nodes pick it up; `services` too (`tether.behaviours.services`: the verifier,
    the `replanner` the `replan` node calls).
    """
    new_episode(task=task, instruction=instruction, params=params or {},
                entities=robot.entities())
    # only observers need the visited set; it costs a visit per node per tick
    visitor = py_trees.visitors.SnapshotVisitor() if observers else None
    with located(root):
        py_trees.trees.BehaviourTree(root).setup(robot=robot, memory=memory, services=services)
    outcome = outcome or robot.success
    ticks, reached = 0, False
    order: dict = {}  # node id -> (place in the tree, node): the visited nodes in tree order
    with interrupt_between_ticks() as interrupted:
        while robot.steps < budget:
            interrupted()
            with located(root):
                tick_once(root, visitor)
            ticks += 1
            action, by = COMMAND.take()
            finished = root.status in (Status.SUCCESS, Status.FAILURE)
            if action is not None:
                robot.step(action)
            elif not finished:
                robot.hold()
            if visitor is not None:
                if not order.keys() >= visitor.visited.keys():  # new nodes: a subtree was replaced
                    order = {n.id: (k, n) for k, n in enumerate(root.iterate())}
                tip = root.tip()
                tick = Tick(ticks, root.status, tip.name if tip else None, action, by,
                            [n for _, n in sorted(order[i] for i in visitor.visited)])
                for observe in observers:
                    observe(tick)
            if finished:
                break
            if until_goal and (reached := bool(outcome())):
                break
    statuses = node_statuses(root)
    ended_by = ("tree" if root.status in (Status.SUCCESS, Status.FAILURE) else
                "goal" if reached else "budget")
    if ended_by != "tree":
        with located(root):
            root.stop(Status.INVALID)
    return EpisodeResult(
        success=reached or bool(outcome()),
        tree_status=statuses[root.name] if ended_by == "tree" else "RUNNING", steps=robot.steps,
        sim_time=round(robot.sim_time, 6), ended_by=ended_by, node_status=statuses,
        errors=list(storage().get("/errors/history", [])))
