"""The trace recorder: a tick observer that writes everything needed to replay a run.

`Recorder` is handed to `run_episode` as an observer. When created it writes the trace header and
the tree's structure (each node once: id, parent, name, type, class, parameters, file:line). After
every tick it writes one `tick` record with only what changed: nodes whose status or feedback
changed, the nodes visited (when not the same as the tick before), blackboard keys written (as
`trace.jsonable` values), the robot command, the end effector's pose and the gripper's width
after the tick, and the events of the tick. Camera frames (`FrameSettings`) are taken at every
tick with an event and at most `every` ticks apart: captured at the tick (`Robot.capture`: a
MuJoCo scene's visual scene, read from the sim state then) and drawn,
encoded and written on the trace writer's thread (`tether.replay.writer`) before the record that
names them, so the tick loop does not wait for them; `finish` waits for the writer.

Events are derived, not declared: a leaf that starts RUNNING (`start`), a visited leaf that
finishes (`success` / `failure`), a RUNNING node stopped by its parent (`preempted`, the topmost
one only), a new entry in /errors/history (`error`), a retry decorator re-running its failed
child (`retry`), a selector falling back to a later child after an earlier one failed
(`recovery`), and what leaves `emit` (`tether.blackboard.trace_events`, e.g. `vla_chunk`). When the
scene cannot render (no display and no EGL), frames stop with a `frames_off` event (at the
first tick after the writer found out).

    recorder = Recorder(run_dir, root, robot, meta={"task": task},
                        frames=FrameSettings(cameras=("agentview",), every=10))
    result = run_episode(root, robot, budget=300, task=task, observers=(recorder,))
    recorder.finish(result)
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, is_not, ne, or_
from pathlib import Path
from typing import Any

import numpy as np
import py_trees

from tether.blackboard import trace_events
from tether.blackboard.episode import storage
from tether.errors import TetherError
from tether.replay.trace import FORMAT, FRAMES_DIR, jsonable
from tether.replay.writer import TraceWriter
from tether.scenes.cameras import Capture
from tether.scenes.projection import CameraGeometry
from tether.scenes.robot import Robot
from tether.trees.episode import EpisodeResult, Tick

Status = py_trees.common.Status
FINISHED = (Status.SUCCESS, Status.FAILURE)
IMMUTABLE = (str, int, float, bool, type(None), tuple)
MISSING = object()
STATUS, FEEDBACK = attrgetter("status"), attrgetter("feedback_message")  # of a node


@dataclass(frozen=True)
class FrameSettings:
    """Which cameras to save, at most how many ticks apart besides events (0: only at events)
    and at what size (h, w)."""

    cameras: tuple[str, ...] = ()
    every: int = 0
    size: tuple[int, int] = (128, 128)
    quality: int = 80  # JPEG


def describe(node: py_trees.behaviour.Behaviour) -> dict[str, Any]:
    """What the trace says about a node besides its place in the tree."""
    out: dict[str, Any] = {
        "name": node.name,
        "type": getattr(node, "node_type", type(node).__name__.lower()),
        "class": type(node).__name__,
    }
    if hasattr(node, "origin"):
        out["origin"] = node.origin
    params = getattr(node, "params", None)
    if params:
        out["params"] = {k: _param(v) for k, v in params.items()}
    if hasattr(node, "tree_file"):
        out["file"] = node.tree_file
        out["bindings"] = {k: _param(v) for k, v in node.bindings.items()}
    return out


def _unchanged(value: Any, last: Any) -> bool:
    """Whether a blackboard value equals its copy from an earlier tick (cheaply, in C mostly)."""
    if value is last:
        return isinstance(value, IMMUTABLE)
    if type(value) is not type(last):
        return False
    if isinstance(value, np.ndarray):
        return value.shape == last.shape and bool(np.array_equal(value, last))
    try:
        return bool(value == last)
    except (TypeError, ValueError):  # e.g. containers holding arrays
        return False


def _snapshot(value: Any) -> Any:
    """A blackboard value's copy to tell later whether it changed (`_unchanged`): deep (a list
    appended to in place differs next tick), but shallow for a list of values that cannot
    change in place, whose items then compare by identity: the event log, compared every tick,
    would cost a comparison per event."""
    if isinstance(value, list) and all(map(_fixed, value)):
        return list(value)
    return copy.deepcopy(value)


def _fixed(value: Any) -> bool:
    """Whether `value` cannot change in place: a number, string or None, or a tuple or frozen
    dataclass of such."""
    if isinstance(value, str | int | float | bool | type(None)):
        return True
    if isinstance(value, tuple):
        return all(map(_fixed, value))
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.frozen and all(
        _fixed(getattr(value, f.name)) for f in dataclasses.fields(value))


def _param(value: Any) -> Any:
    if isinstance(value, py_trees.behaviour.Behaviour):
        return value.name
    if isinstance(value, list):
        return [_param(v) for v in value]
    return value if isinstance(value, bool | int | float | str | type(None)) else str(value)


class Recorder:
    """Writes `trace.jsonl` (and `frames/`) in `run_dir` for one episode of `root` on `robot`."""

    def __init__(self, run_dir: Path, root: py_trees.behaviour.Behaviour, robot: Robot, *,
                 meta: dict[str, Any] | None = None, frames: FrameSettings = FrameSettings()):
        self.run_dir, self.root, self.robot, self.frames = run_dir, root, robot, frames
        self.nodes: list[py_trees.behaviour.Behaviour] = []
        self.parent: list[int | None] = []
        self._walk(root, None)
        self.index = {n.id: i for i, n in enumerate(self.nodes)}
        self.status = [Status.INVALID] * len(self.nodes)
        self.feedback = [""] * len(self.nodes)
        self.leaf = [not n.children for n in self.nodes]
        self.retry = [isinstance(n, py_trees.decorators.Retry) for n in self.nodes]
        self.in_selector = [p is not None and isinstance(self.nodes[p],
                                                         py_trees.composites.Selector)
                            for p in self.parent]
        self.raw: dict[str, Any] = {}
        self.bb: dict[str, Any] = {}
        self.errors = 0
        self.visited: list[int] = []
        self.next_frame = 1  # the tick by which the next frame is due
        run_dir.mkdir(parents=True, exist_ok=True)
        if frames.cameras:
            (run_dir / FRAMES_DIR).mkdir(exist_ok=True)
        self.writer = TraceWriter(run_dir, quality=frames.quality)
        self.writer.write({"k": "header", "format": FORMAT, **(meta or {}),
                         "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                         "control_dt": robot.control_dt,
                         "frames": {"cameras": list(frames.cameras), "every": frames.every,
                                    "size": list(frames.size)}})
        self.writer.write({"k": "tree", "nodes": [
            {"id": i, "parent": self.parent[i], **describe(n)} for i, n in enumerate(self.nodes)]})
        trace_events.drain()

    def _walk(self, node: py_trees.behaviour.Behaviour, parent: int | None) -> None:
        me = len(self.nodes)
        self.nodes.append(node)
        self.parent.append(parent)
        for child in node.children:
            self._walk(child, me)

    # --- every tick ----------------------------------------------------------------------
    def __call__(self, tick: Tick) -> None:
        if self.writer.frames_off is not None and self.frames.cameras:
            self.frames = FrameSettings()
            trace_events.emit("frames_off", "recorder", reason=self.writer.frames_off)
        visited = sorted(self.index[n.id] for n in tick.visited if n.id in self.index)
        changes, before = self._statuses()
        events = self._events(tick, visited, changes, before)
        record: dict[str, Any] = {"k": "tick", "t": tick.index, "step": self.robot.steps,
                                  "sim": round(self.robot.sim_time, 4), "root": tick.root.value}
        tip = self.root.tip()
        if tip is not None and tip.id in self.index:
            record["tip"] = self.index[tip.id]
        if visited != self.visited:  # left out while the same path is ticked tick after tick
            record["visited"] = self.visited = visited
        if changes:
            record["changes"] = {str(i): [self.status[i].value, self.feedback[i]]
                                 for i in changes}
        pose = self.robot.eef_pose()
        record["eef"] = jsonable(np.concatenate([pose.pos, pose.quat]))
        record["grip"] = jsonable(self.robot.gripper_width())
        written, deleted = self._blackboard()
        if written:
            record["bb"] = written
        if deleted:
            record["bb_del"] = deleted
        if tick.action is not None:
            record["cmd"] = {"by": tick.commander, "a": jsonable(np.asarray(tick.action))}
        if events:
            record["events"] = events
        captures: dict[str, Capture] = {}
        if self.frames.cameras and (events or tick.root in FINISHED or (
                self.frames.every and tick.index >= self.next_frame)):
            names, captures = self._capture(tick.index)
            if names:
                record["frames"] = names
                self.next_frame = tick.index + self.frames.every
        self.writer.write(record, captures)

    def _statuses(self) -> tuple[list[int], list[Status]]:
        """Indices of nodes whose status or feedback changed, and the statuses before."""
        before, said = self.status, self.feedback
        self.status = list(map(STATUS, self.nodes))
        self.feedback = list(map(FEEDBACK, self.nodes))
        changed = map(or_, map(is_not, self.status, before), map(ne, self.feedback, said))
        return list(compress(range(len(self.nodes)), changed)), before

    def _events(self, tick: Tick, visited: list[int], changes: list[int],
                before: list[Status]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        seen = set(visited)
        for i in changes:
            was, now = before[i], self.status[i]
            if was is Status.RUNNING and now is Status.INVALID:
                p = self.parent[i]
                if p is None or not (before[p] is Status.RUNNING
                                     and self.status[p] is Status.INVALID):
                    events.append({"kind": "preempted", "node": i})
            elif self.leaf[i] and now is Status.RUNNING and was is not Status.RUNNING:
                events.append({"kind": "start", "node": i})
        for i in visited:
            now = self.status[i]
            if self.leaf[i] and now in FINISHED:
                events.append({"kind": now.value.lower(), "node": i,
                               "feedback": self.feedback[i]})
            if self.retry[i] and now is Status.RUNNING:
                node = self.nodes[i]
                child = self.index[node.decorated.id]
                if child in seen and self.status[child] is Status.FAILURE:
                    events.append({"kind": "retry", "node": i, "failed": child,
                                   "failures": node.failures})
            if self.in_selector[i] and before[i] is not Status.RUNNING \
                    and now is not Status.INVALID:
                p = self.parent[i]
                siblings = [self.index[c.id] for c in self.nodes[p].children]
                k = siblings.index(i)
                failed = [s for s in siblings[:k] if s in seen and self.status[s] is Status.FAILURE]
                if failed:
                    events.append({"kind": "recovery", "node": i, "selector": p,
                                   "after": failed[-1]})
        history = storage().get("/errors/history") or []
        for error in history[self.errors:]:
            events.append({"kind": "error", **jsonable(error)})
        self.errors = len(history)
        events.extend(jsonable(self._with_truth(e)) for e in trace_events.drain())
        return events

    def _with_truth(self, event: dict[str, Any]) -> dict[str, Any]:
        """A camera world's `localized` event with the simulator's truth beside each estimate:
        the middle of the object's box, its pixel, and the error in cm (the recorder sees the
        scene; the leaves did not)."""
        if event.get("kind") != "localized":
            return event
        cam = event["camera"]
        geometry = CameraGeometry(cam["name"], tuple(cam["size"]), cam["focal"],
                                  np.array(cam["position"]), np.array(cam["rotation"]))
        for name, seen in event["objects"].items():
            truth = np.mean(self.robot.extent_of(name), axis=0)
            seen["truth"] = [round(float(x), 4) for x in truth]
            seen["truth_px"] = [round(float(x), 2) for x in geometry.project(truth[None])[0][0]]
            seen["error_cm"] = round(float(np.linalg.norm(truth - seen["pos"])) * 100, 2)
        return event

    def _blackboard(self) -> tuple[dict[str, Any], list[str]]:
        written: dict[str, Any] = {}
        store = storage()
        for key, value in store.items():
            last = self.raw.get(key, MISSING)
            if last is not MISSING and _unchanged(value, last):
                continue
            self.raw[key] = _snapshot(value)
            encoded = jsonable(value)
            if encoded != self.bb.get(key, MISSING):
                self.bb[key] = written[key] = encoded
        deleted = [k for k in self.bb if k not in store]
        for key in deleted:
            del self.bb[key]
            self.raw.pop(key, None)
        return written, deleted

    def _capture(self, index: int) -> tuple[dict[str, str], dict[str, Capture]]:
        """This tick's frames: camera -> file, and file -> capture (for the writer)."""
        names, captures = {}, {}
        for camera in self.frames.cameras:
            self.writer.reserve()
            try:
                capture = self.robot.capture(camera, self.frames.size, draft=True)  # seen, not fed
            except TetherError as exc:  # no frames is better than no run: say so in the trace
                for _ in range(len(captures) + 1):  # this tick's places come back unused
                    self.writer.cancel()
                self.frames = FrameSettings()
                trace_events.emit("frames_off", "recorder", reason=str(exc))
                return {}, {}
            if capture is None:
                self.writer.cancel()
                continue
            names[camera] = f"{FRAMES_DIR}/t{index:06d}-{camera}.jpg"
            captures[names[camera]] = capture
        return names, captures

    # --- the end -------------------------------------------------------------------------
    def finish(self, result: EpisodeResult | None = None, *, aborted: str | None = None) -> None:
        """Write the end record (the result, or why the episode stopped early) and close."""
        record: dict[str, Any] = {"k": "end"}
        if result is not None:
            record.update(success=result.success, tree_status=result.tree_status,
                          steps=result.steps, sim_time=result.sim_time, ended_by=result.ended_by)
        if aborted is not None:
            record["aborted"] = aborted
        try:
            self.writer.write(record)
        finally:
            self.writer.close()
