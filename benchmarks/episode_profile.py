"""Where an episode's wall time goes: scene build, physics, rendering, the tree, recording, memory.

Runs episodes of a tree through the session API `tether run` calls (`tether.session.run.run`) in
several configurations, seeds interleaved so every configuration sees the same machine load, and
times each part with `time.perf_counter` by wrapping, in this process only, the functions that do
it (`PARTS`). A part's time is exclusive: a wrapped call made inside another (the command slot
inside a tick, the scene's reset inside its build, a frame rendered by the recorder) counts for
the inner part only, so the parts and `other` (what no wrapped function did) add up to the
episode's wall time. Only calls on the episode's thread are timed: work moved to another thread
costs the episode what it waits for it, and that wait shows in the part that waits. One warm-up
episode, not shown, pays the one-time imports. The progress display `tether run` prints is left
out.

The executive cost is what the executive adds to the control steps: the tree's tick (its leaves
included), the command slot, the trace recorder, the event log and the tick loop's own
bookkeeping, as % of the wall time of an episode recorded without camera frames (target: <= 10%).

    python benchmarks/episode_profile.py                  # pick_place on the demo task, seeds 0..2
    python benchmarks/episode_profile.py --episodes 1 --task libero_goal/8 --warmup 0
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tether.replay.recorder import FrameSettings
from tether.session.run import RunConfig, run
from tether.session.session import DEFAULT_FRAMES, SessionConfig

ROOT = Path(__file__).resolve().parents[1]
TARGET = 10.0  # executive cost, % of an episode's wall time without camera frames


@dataclass(frozen=True)
class Part:
    """A share of an episode's time: the functions (`module:attr.path`) whose calls it counts."""

    name: str
    targets: tuple[str, ...]
    executive: bool = False


PARTS = (
    Part("scene build", ("tether.scenes.perturbations:open_scene",)),
    Part("reset", ("tether.scenes.libero_scene:LiberoScene.reset",)),
    Part("compile", ("tether.session.run:read_tree_file", "tether.session.run:compile_tree")),
    Part("tree setup", ("py_trees.trees:BehaviourTree.setup",)),
    Part("physics", ("tether.scenes.robot:Robot.step", "tether.scenes.robot:Robot.hold")),
    Part("rendering", ("tether.scenes.robot:Robot.render",
                       "tether.scenes.libero_scene:LiberoScene.render")),
    Part("tree tick", ("tether.trees.episode:tick_once",), executive=True),
    Part("command slot", tuple(f"tether.blackboard.episode:CommandSlot.{m}"
                               for m in ("put", "withdraw", "take")), executive=True),
    Part("trace recording", tuple(f"tether.replay.recorder:Recorder.{m}"
                                  for m in ("__init__", "__call__", "finish")), executive=True),
    Part("event log", ("tether.session.memory:EventRecorder.__call__",), executive=True),
    Part("tick loop", ("tether.session.session:run_episode",), executive=True),
    Part("memory: store open", ("tether.session.session:open_store",)),
    Part("memory: embedder load", ("tether.models.embedders:MiniLMEmbedder.model",)),
    Part("memory: embedding", ("tether.memory.store:ExperienceStore.embed",)),
    Part("memory: consolidation", ("tether.session.session:remember_episode",)),
    Part("result files", ("pathlib:Path.write_text", "py_trees.display:unicode_tree")),
    Part("session close", ("tether.session.session:Session.__exit__",)),
)


class Timer:
    """Exclusive seconds and calls per part of the calls made on the thread that created it."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.thread = threading.get_ident()
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._inner: list[float] = []  # per open call: the time of the timed calls inside it

    def wrap(self, part: str, fn: Callable) -> Callable:
        self.seconds.setdefault(part, 0.0)
        self.calls.setdefault(part, 0)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self.thread:
                return fn(*args, **kwargs)
            start = self.clock()
            self._inner.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = self.clock() - start
                self.seconds[part] += elapsed - self._inner.pop()
                self.calls[part] += 1
                if self._inner:
                    self._inner[-1] += elapsed

        return timed


def _owner(target: str) -> tuple[Any, str]:
    module, _, path = target.partition(":")
    *owners, name = path.split(".")
    owner: Any = importlib.import_module(module)
    for attr in owners:
        owner = getattr(owner, attr)
    if isinstance(owner, type) and name not in vars(owner):
        raise AttributeError(f"{target}: inherited, not defined by {owner.__name__} itself")
    getattr(owner, name)  # fails loudly when a part names something that is not there
    return owner, name


@contextmanager
def timed_parts(timer: Timer, parts: tuple[Part, ...] = PARTS) -> Iterator[Timer]:
    """Wrap every part's functions for `timer` while the block runs; restore them after."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for part in parts:
            for target in part.targets:
                owner, name = _owner(target)
                original = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
                saved.append((owner, name, original))
                if isinstance(original, property):
                    wrapped: Any = property(timer.wrap(part.name, original.fget))
                else:
                    wrapped = timer.wrap(part.name, original)
                setattr(owner, name, wrapped)
        yield timer
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


@dataclass
class Profile:
    """Seconds and calls per part of one or more episodes, their wall time and control steps."""

    wall: float = 0.0
    steps: int = 0
    episodes: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    @property
    def other(self) -> float:
        """The wall time no part accounts for."""
        return self.wall - sum(self.seconds.values())

    @property
    def executive(self) -> float:
        return sum(self.seconds[p.name] for p in PARTS if p.executive)

    def add(self, other: Profile) -> None:
        self.wall, self.steps = self.wall + other.wall, self.steps + other.steps
        self.episodes += other.episodes
        for name, s in other.seconds.items():
            self.seconds[name] = self.seconds.get(name, 0.0) + s
            self.calls[name] = self.calls.get(name, 0) + other.calls[name]


def profile_run(config: RunConfig, parts: tuple[Part, ...] = PARTS) -> Profile:
    """Run `config` once (`tether.session.run.run`) and say where its wall time went."""
    with timed_parts(Timer(), parts) as timer:
        start = time.perf_counter()
        record = run(config)
        wall = time.perf_counter() - start
    return Profile(wall, record.result.steps, 1, dict(timer.seconds), dict(timer.calls))


@dataclass(frozen=True)
class Configuration:
    """What `tether run` options an episode runs with."""

    name: str
    record: bool
    frames: FrameSettings
    memory: str | None  # None: RUNS/memory.db


REFERENCE = Configuration("--no-record --memory none", False, FrameSettings(), "none")
WITHOUT_FRAMES = Configuration("--frame-every 0 --memory none", True, FrameSettings(), "none")
CONFIGURATIONS = (REFERENCE, Configuration("tether run defaults", True, DEFAULT_FRAMES, None),
                  WITHOUT_FRAMES)


def part_table(name: str, p: Profile) -> Table:
    t = Table("part", "s / episode", "% of wall", "calls / episode",
              title=f"{name}: {p.wall / p.episodes:.2f} s / episode, "
                    f"{p.steps / p.episodes:.0f} steps")
    for part in PARTS:
        s = p.seconds[part.name]
        t.add_row(part.name + (" *" if part.executive else ""), f"{s / p.episodes:.3f}",
                  f"{100 * s / p.wall:.1f}", f"{p.calls[part.name] / p.episodes:,.0f}")
    t.add_row("other", f"{p.other / p.episodes:.3f}", f"{100 * p.other / p.wall:.1f}", "")
    t.add_row("executive cost (*)", f"{p.executive / p.episodes:.3f}",
              f"{100 * p.executive / p.wall:.1f}", "", style="bold")
    return t


def summary_table(profiles: dict[str, Profile]) -> Table:
    ref = profiles[REFERENCE.name]
    t = Table("configuration", "s / episode", "vs reference", "executive % wall",
              "executive % physics",
              title=f"per configuration (reference: {REFERENCE.name}; executive cost target "
                    f"<= {TARGET:.0f}% with {WITHOUT_FRAMES.name})")
    for name, p in profiles.items():
        t.add_row(name, f"{p.wall / p.episodes:.2f}",
                  f"{p.wall / p.episodes / (ref.wall / ref.episodes):.2f}x",
                  f"{100 * p.executive / p.wall:.1f}",
                  f"{100 * p.executive / p.seconds['physics']:.1f}")
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT / "trees/library/pick_place.yaml")
    ap.add_argument("--task", default="libero_goal/put_the_bowl_on_the_plate")
    ap.add_argument("--episodes", type=int, default=3, help="seeds 0..N-1 per configuration")
    ap.add_argument("--warmup", type=int, default=1, help="episodes run first and not shown")
    args = ap.parse_args()
    profiles = {c.name: Profile() for c in CONFIGURATIONS}
    with tempfile.TemporaryDirectory(prefix="episode-profile-") as runs:
        def config(c: Configuration, seed: int) -> RunConfig:
            return RunConfig(args.tree, SessionConfig(task=args.task, seed=seed, runs=Path(runs),
                                                      record=c.record, frames=c.frames,
                                                      memory=c.memory))

        for seed in range(args.warmup):
            run(config(REFERENCE, seed))
        for seed in range(args.episodes):
            for c in CONFIGURATIONS:
                profiles[c.name].add(profile_run(config(c, seed)))
    console = Console()
    for name, p in profiles.items():
        console.print(part_table(name, p))
    console.print(summary_table(profiles))
    p = profiles[WITHOUT_FRAMES.name]
    console.print(f"executive cost without camera frames: {100 * p.executive / p.wall:.1f}% of "
                  f"the episode's wall time (target <= {TARGET:.0f}%)")


if __name__ == "__main__":
    main()
