"""The trace recorder: what a trace holds after a run, and that it replays the run exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import py_trees

from tests.replay import recorded
from tests.replay.recorded import PICK_PLACE, record_pick_place, statuses_at
from tests.trees import harness
from tests.trees.harness import BOWL, compile_node, move_box, scene
from tether.blackboard import trace_events
from tether.errors import TetherError
from tether.replay import recorder as recorder_module
from tether.replay.recorder import FrameSettings, Recorder
from tether.replay.trace import TRACE_NAME, jsonable, parse_lines, read_trace
from tether.trees.compiler import compile_tree
from tether.trees.episode import run_episode

ROOT = Path(__file__).resolve().parents[2]


def kinds(records: list[dict]) -> list[str]:
    return [e["kind"] for r in records if r["k"] == "tick" for e in r.get("events", [])]


def test_the_module_docstring_example_records_a_run(tmp_path):
    example = textwrap.dedent("\n".join(line for line in recorder_module.__doc__.splitlines()
                                         if line.startswith("    ")))
    robot = scene()
    names = {"Recorder": Recorder, "FrameSettings": FrameSettings, "run_episode": run_episode,
             "run_dir": tmp_path / "run", "root": compile_node(tmp_path, "wait: 3", robot),
             "robot": robot, "task": "kinematic"}
    exec(example, names)
    records = read_trace(tmp_path / "run")
    assert [r["k"] for r in records] == ["header", "tree", "tick", "tick", "tick", "tick", "end"]
    assert records[0]["task"] == "kinematic"
    assert records[0]["frames"] == {"cameras": ["agentview"], "every": 10, "size": [128, 128]}
    assert records[-1]["tree_status"] == "SUCCESS"


def test_statuses_replayed_from_the_trace_match_py_trees_at_every_tick(tmp_path):
    robot = scene()
    compiled = compile_tree(PICK_PLACE, {"object": BOWL, "target": "plate_1"},
                            resolve=robot.resolve)
    recorder = Recorder(tmp_path, compiled.root, robot)
    nodes = list(recorder.nodes)
    live: dict[int, dict[int, str]] = {}

    def snapshot(tick) -> None:
        live[tick.index] = {i: n.status.value for i, n in enumerate(nodes)}

    result = run_episode(compiled.root, robot, budget=400, observers=(recorder, snapshot))
    recorder.finish(result)
    records = read_trace(tmp_path)
    assert statuses_at(records) == live
    assert [r["k"] for r in records[:2]] == ["header", "tree"] and records[-1]["k"] == "end"
    assert records[-1]["success"] is True and records[-1]["steps"] == result.steps


def test_tree_record_has_ids_types_params_and_origins(tmp_path):
    run_dir, _ = record_pick_place(tmp_path)
    tree = read_trace(run_dir)[1]["nodes"]
    assert tree[0]["parent"] is None and all(n["parent"] < n["id"] for n in tree[1:])
    grasp = next(n for n in tree if n.get("file", "").endswith("/grasp.yaml"))
    assert grasp["type"] == "subtree" and grasp["bindings"]["object"] == BOWL
    approach = next(n for n in tree if n["name"].startswith("approach"))
    assert approach["type"] == "move_to" and approach["params"]["tolerance"] == 0.01
    assert approach["origin"].startswith("trees/library/reach_grasp.yaml:")  # grasp's way down


def test_failing_grasp_records_error_recovery_and_retry_with_frames(tmp_path):
    run_dir, result = record_pick_place(tmp_path, frame_every=5)
    records = read_trace(run_dir)
    ticks = [r for r in records if r["k"] == "tick"]
    assert len(ticks) == result.steps + 1  # the last tick finished the tree: no step after it
    assert {"start", "success", "failure", "error", "recovery", "retry"} <= set(kinds(records))
    error_tick = next(r for r in ticks if any(e["kind"] == "error" for e in r.get("events", [])))
    assert error_tick["bb"]["/errors/last"]["code"] == "EMPTY_GRASP"
    last = None  # frames at every event and at most 5 ticks apart
    for r in ticks:
        if r.get("events") or last is None or r["t"] - last >= 5:
            assert (run_dir / r["frames"]["top"]).is_file(), r["t"]
            last = r["t"]
        else:
            assert "frames" not in r
    assert ticks[0]["bb"]["/task/params"]["object"] == BOWL  # tick 1 holds the whole blackboard
    assert all("/task/params" not in r.get("bb", {}) for r in ticks[1:])  # then only changes


def test_preemption_is_an_event_on_the_topmost_stopped_node(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, f"""
        reactive_selector:
          - check: {{predicate: on, object: {BOWL}, target: plate_1, name: done}}
          - sequence:
              name: work
              children:
                - move_to: {{target: [0.2, 0.2, 0.25], name: reach}}
        """, robot)
    recorder = Recorder(tmp_path / "run", root, robot)
    bowl_put_on_plate = harness.Recorder(root, robot, {2: move_box(BOWL, [0.25, 0.0, 0.03])})
    recorder.finish(run_episode(root, robot, budget=50,
                                observers=(recorder, bowl_put_on_plate)))
    records = read_trace(tmp_path / "run")
    names = {n["id"]: n["name"] for n in records[1]["nodes"]}
    preempted = [names[e["node"]] for r in records if r["k"] == "tick"
                 for e in r.get("events", []) if e["kind"] == "preempted"]
    assert preempted == ["work"]


def test_leaves_emit_events_that_the_recorder_keeps(tmp_path):
    class Chunk(py_trees.behaviour.Behaviour):
        def update(self):
            trace_events.emit("vla_chunk", self.name, size=8)
            return py_trees.common.Status.SUCCESS

    robot = scene()
    root = Chunk("policy")
    recorder = Recorder(tmp_path, root, robot)
    recorder.finish(run_episode(root, robot, budget=5, observers=(recorder,)))
    events = read_trace(tmp_path)[2]["events"]
    assert {"kind": "vla_chunk", "node": "policy", "size": 8} in events


def test_jsonable_summarises_large_arrays_and_long_lists():
    big = jsonable({"image": np.zeros((64, 64, 3), np.uint8), "xs": list(range(100)),
                    "pose": np.array([0.123456789, 2.0]), "nan": float("nan")})
    assert big["image"] == {"array": [64, 64, 3], "dtype": "uint8", "min": 0, "max": 0,
                            "mean": 0}
    assert len(big["xs"]) == 33 and big["xs"][-1] == {"…": "68 more"}
    assert big["pose"] == [0.12346, 2.0] and big["nan"] == "nan"
    json.dumps(big, allow_nan=False)


def test_a_torn_last_line_is_ignored():
    text = '{"k":"header"}\n{"k":"tick","t":1}\n{"k":"tick","t'
    assert [r["k"] for r in parse_lines(text)] == ["header", "tick"]


KILLED = """
import sys
from pathlib import Path
from tests.replay.recorded import record_pick_place
record_pick_place(Path(sys.argv[1]), frame_every=1, budget=10**7, slips=10**6)
"""


def test_a_run_killed_with_sigkill_is_readable_up_to_its_last_tick(tmp_path):
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(run_dir)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            trace = run_dir / TRACE_NAME
            if trace.is_file() and trace.read_bytes().count(b'"k":"tick"') >= 50:
                break
            time.sleep(0.1)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    records = read_trace(run_dir)
    ticks = [r for r in records if r["k"] == "tick"]
    assert len(ticks) >= 50 and records[-1]["k"] == "tick"
    assert [r["t"] for r in ticks] == list(range(1, len(ticks) + 1))
    assert all((run_dir / f).is_file() for r in ticks for f in r.get("frames", {}).values())


class Drawn:
    """A capture that notes the thread drawing it, or fails like a machine without GL."""

    def __init__(self, image: np.ndarray, threads: list[str], fail: bool):
        self.image, self.threads, self.fail = image, threads, fail

    def draw(self, cameras) -> np.ndarray:
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise TetherError("cannot render camera frames (no EGL)")
        return self.image


def record_with_captures(tmp_path, monkeypatch, *, fail: bool,
                         drafts: list[bool] | None = None) -> tuple[Path, list[str]]:
    threads: list[str] = []
    capture = recorded.SlipperyScene.capture

    def deferred(self, camera, size, draft):
        if drafts is not None:
            drafts.append(draft)
        return Drawn(capture(self, camera, size, draft).image, threads, fail)

    monkeypatch.setattr(recorded.SlipperyScene, "capture", deferred)
    run_dir, _ = record_pick_place(tmp_path / "run", frame_every=5)
    return run_dir, threads


def test_frames_are_drawn_on_the_writer_thread_before_the_record_naming_them(tmp_path,
                                                                           monkeypatch):
    drafts: list[bool] = []
    run_dir, threads = record_with_captures(tmp_path, monkeypatch, fail=False, drafts=drafts)
    records = read_trace(run_dir)
    named = [f for r in records if r["k"] == "tick" for f in r.get("frames", {}).values()]
    assert named and set(threads) == {"trace-writer"} and len(threads) == len(named)
    assert drafts and all(drafts)  # frames people look at are drafts
    assert all((run_dir / f).is_file() for f in named)
    assert sorted(p.name for p in (run_dir / "frames").iterdir()) == sorted(
        Path(f).name for f in named)
    assert records[-1]["k"] == "end" and not any(
        t.name == "trace-writer" for t in threading.enumerate())  # finish closed the writer


def test_frames_that_cannot_be_drawn_stop_with_frames_off_and_are_never_named(tmp_path,
                                                                            monkeypatch):
    run_dir, threads = record_with_captures(tmp_path, monkeypatch, fail=True)
    records = read_trace(run_dir)
    ticks = [r for r in records if r["k"] == "tick"]
    assert threads == ["trace-writer"]  # the first failure stops the drawing
    assert not any("frames" in r for r in ticks) and not any((run_dir / "frames").iterdir())
    off = [e for r in ticks for e in r.get("events", []) if e["kind"] == "frames_off"]
    assert off == [{"kind": "frames_off", "node": "recorder",
                    "reason": "cannot render camera frames (no EGL)"}]
    assert records[-1]["k"] == "end"


def test_an_aborted_episode_closes_the_writer_with_its_end_record(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "wait: 3", robot)
    recorder = Recorder(tmp_path / "run", root, robot)
    recorder.finish(aborted="KeyboardInterrupt: ")
    assert not recorder.writer.thread.is_alive()
    assert read_trace(tmp_path / "run")[-1] == {"k": "end", "aborted": "KeyboardInterrupt: "}


def test_blackboard_lists_changed_in_place_are_recorded_each_time(tmp_path):
    """A list appended to, or an item of it changed in place, is written again: lists of values
    that cannot change (the event log's frozen events) are kept by identity, others deeply."""
    from dataclasses import dataclass, field

    from tether.blackboard.episode import storage

    @dataclass(frozen=True)
    class Note:
        text: str
        tags: tuple = ()

    @dataclass(frozen=True)
    class Box:
        items: list = field(default_factory=list)  # frozen, yet its list can change

    robot = scene()
    recorder = Recorder(tmp_path, compile_node(tmp_path, "wait: 3", robot), robot)
    notes, dicts, boxes = [Note("a")], [{"x": 1}], [Box([1])]
    store = storage()
    store["/user/notes"], store["/user/dicts"], store["/user/boxes"] = notes, dicts, boxes
    assert {"/user/notes", "/user/dicts", "/user/boxes"} <= set(recorder._blackboard()[0])
    assert recorder._blackboard() == ({}, [])  # nothing changed
    notes.append(Note("b", ("t",)))
    dicts[0]["x"] = 2
    boxes[0].items.append(2)
    written, _ = recorder._blackboard()
    assert written["/user/notes"][1] == {"text": "b", "tags": ["t"]}
    assert written["/user/dicts"] == [{"x": 2}] and written["/user/boxes"] == [{"items": [1, 2]}]
    notes[0] = Note("c")
    assert recorder._blackboard()[0]["/user/notes"][0]["text"] == "c"
    assert recorder._blackboard() == ({}, [])
