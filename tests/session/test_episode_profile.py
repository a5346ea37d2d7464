"""benchmarks/episode_profile.py: where an episode's wall time goes, part by part."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.benchmark_scripts import load_benchmark
from tests.trees.harness import scene
from tether.memory.store import ExperienceStore
from tether.replay.recorder import FrameSettings
from tether.scenes.robot import Robot
from tether.session.run import RunConfig
from tether.session.session import SessionConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prof():
    return load_benchmark("episode_profile")


def test_a_call_inside_another_timed_call_counts_for_the_inner_part_only(prof):
    clock = iter([0.0, 1.0, 3.0, 10.0]).__next__  # outer starts, inner starts, ends, outer ends
    timer = prof.Timer(clock)
    inner = timer.wrap("inner", lambda: None)
    outer = timer.wrap("outer", lambda: inner())
    outer()
    assert timer.seconds == {"inner": 2.0, "outer": 8.0}
    assert timer.calls == {"inner": 1, "outer": 1}


def test_the_parts_of_an_episode_add_up_to_its_wall_time(prof, tmp_path, monkeypatch):
    def kinematic(*args, **kwargs):
        robot = scene()
        robot.task = SimpleNamespace(language="put the bowl on the plate")  # as a LiberoScene
        return robot

    monkeypatch.setattr("tether.scenes.perturbations.open_scene", kinematic)
    ExperienceStore(tmp_path / "memory.db", "hashing").close()  # no model to load
    step = Robot.step
    config = RunConfig(ROOT / "trees/library/pick_place.yaml", SessionConfig(
        task="libero_goal/put_the_bowl_on_the_plate", runs=tmp_path, frames=FrameSettings(),
        memory=tmp_path / "memory.db"))
    prof.profile_run(config)  # the first pays one-time imports
    p = prof.profile_run(config)
    assert Robot.step is step  # unwrapped again
    assert list(p.seconds) == list(p.calls) == [part.name for part in prof.PARTS]
    assert all(s >= 0 for s in p.seconds.values())
    assert 0 <= p.other <= 0.2 * p.wall
    assert sum(p.seconds.values()) + p.other == pytest.approx(p.wall)
    ticks = p.calls["tree tick"]
    assert p.steps == p.calls["physics"] == ticks - 1 > 10  # no step after the finishing tick
    assert p.calls["event log"] == ticks
    assert p.calls["trace recording"] == ticks + 2  # the recorder made, every tick, finished
    assert p.calls["command slot"] >= ticks  # a take every tick, a put per command
    assert [p.calls[n] for n in ("scene build", "compile", "tree setup", "tick loop",
                                 "memory: store open", "memory: consolidation",
                                 "session close")] == [1, 2, 1, 1, 1, 1, 1]
    # the second episode has the first one's key text: merged without embedding anything
    assert [p.calls[n] for n in ("memory: embedder load", "memory: embedding", "reset",
                                 "rendering")] == [0, 0, 0, 0]
    assert p.calls["result files"] == 3  # tree.txt rendered and written, result.json written
    assert p.executive == pytest.approx(sum(p.seconds[n] for n in (
        "tree tick", "command slot", "trace recording", "event log", "tick loop")))
