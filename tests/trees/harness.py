"""Helpers for tree tests: small YAML trees compiled against a `KinematicScene` and run through
the real tick loop (`tether.trees.episode.run_episode`) while every tick is recorded.

    path = node_file(tmp_path, "wait: 3")
    result, frames = run(compile_path(path, robot).root, robot)
    frames[0].action, frames[0].status["wait 3"], frames[-1].steps

A `Frame` is what the world and the tree looked like right after one tick (and its control step).
`events` change the world between ticks (an object is moved, as a person or a slip would), so
reactive semantics can be tested without any physics.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import py_trees

from tether.scenes.kinematic import KinematicScene
from tether.scenes.robot import Robot
from tether.trees.compiler import CompiledTree, compile_tree
from tether.trees.episode import EpisodeResult, Tick, run_episode

Status = py_trees.common.Status
RUNNING, SUCCESS, FAILURE, INVALID = (Status.RUNNING, Status.SUCCESS, Status.FAILURE,
                                      Status.INVALID)

BOWL, PLATE, CHEESE = "akita_black_bowl_1", "plate_1", "cream_cheese_1"
BOXES = {
    BOWL: ([0.10, 0.0, 0.02], [0.02, 0.02, 0.02]),
    PLATE: ([0.25, 0.0, 0.005], [0.05, 0.05, 0.005]),
    CHEESE: ([-0.10, 0.10, 0.02], [0.02, 0.02, 0.02]),
}
EEF = (0.0, 0.0, 0.3)


def scene(**kwargs: Any) -> KinematicScene:
    """A table with a bowl, a plate and a cream cheese box; the task is to put the bowl on the
    plate. The end effector starts 30 cm above the table at the origin, gripper open."""
    kwargs.setdefault("goal", [("on", BOWL, PLATE)])
    return KinematicScene(BOXES, **kwargs)


def tree_file(folder: Path, text: str, name: str = "tree.yaml") -> Path:
    """Write a whole tree file (dedented) and return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def node_file(folder: Path, node: str, name: str = "tree.yaml") -> Path:
    """Write a tree file whose root is `node` (YAML of one node)."""
    body = textwrap.indent(textwrap.dedent(node).strip("\n"), "  ")
    return tree_file(folder, f"root:\n{body}\n", name)


def compile_path(path: Path, robot: Robot | None = None,
                 given: dict[str, Any] | None = None) -> CompiledTree:
    return compile_tree(path, given, resolve=robot.resolve if robot else None)


def compile_node(folder: Path, node: str,
                 robot: Robot | None = None) -> py_trees.behaviour.Behaviour:
    return compile_path(node_file(folder, node), robot).root


@dataclass
class Frame:
    """The state right after one tick and the control step that followed it."""

    tick: int  # 1-based
    root: Status
    action: np.ndarray | None  # what was in the command slot (None: the robot held)
    commander: str | None
    eef: np.ndarray
    steps: int
    status: dict[str, Status]  # every node's status, by name
    visited: set[str]

    def holds_since(self, before: Frame | np.ndarray) -> bool:
        """No command this tick and the end effector did not move."""
        eef = before.eef if isinstance(before, Frame) else before
        return self.action is None and bool(np.array_equal(self.eef, eef))


class Recorder:
    def __init__(self, root: py_trees.behaviour.Behaviour, robot: Robot,
                 events: dict[int, Callable[[Robot], None]] | None = None):
        self.root, self.robot, self.events = root, robot, events or {}
        self.frames: list[Frame] = []

    def __call__(self, tick: Tick) -> None:
        self.frames.append(Frame(
            tick=tick.index, root=tick.root, action=tick.action, commander=tick.commander,
            eef=self.robot.eef_pose().pos.copy(), steps=self.robot.steps,
            status={n.name: n.status for n in self.root.iterate()},
            visited={n.name for n in tick.visited}))
        if tick.index in self.events:
            self.events[tick.index](self.robot)


def run(root: py_trees.behaviour.Behaviour, robot: Robot, *, budget: int = 300,
        events: dict[int, Callable[[Robot], None]] | None = None,
        **kwargs: Any) -> tuple[EpisodeResult, list[Frame]]:
    """Run one episode; `events[k](robot)` is applied right after tick k."""
    recorder = Recorder(root, robot, events)
    result = run_episode(root, robot, budget=budget, observers=(recorder,), **kwargs)
    return result, recorder.frames


def statuses(frames: list[Frame], name: str) -> list[Status]:
    """The status of node `name` after each tick."""
    return [f.status[name] for f in frames]


def move_box(name: str, pos: list[float]) -> Callable[[Robot], None]:
    """An event that puts box `name` at `pos` (a KinematicScene only)."""

    def event(robot: Robot) -> None:
        robot.boxes[name].pos = np.array(pos, dtype=float)  # type: ignore[attr-defined]

    return event


def errors() -> list[dict]:
    from tether.blackboard.episode import storage

    return list(storage()["/errors/history"])
