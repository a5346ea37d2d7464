"""A session: one episode of a task with its scene, memory store, observers and result files.

    config = SessionConfig(task="libero_goal/8", seed=3, perturb=("distractors:n=3",))
    with Session(config, name="pick_place", services=services) as session:
        compiled = compile_tree(tree, params, resolve=session.scene.resolve)
        record = session.run(compiled, tree=str(tree))

Opening a session (`with`) opens the task's scene at its init state (`seed % 50` unless
`init_state` is given), perturbed by the `perturb` specs (docs/perturbations.md), so whatever is
made for the episode (a compiled tree, a plan) is made in the scene it runs in and sees the
perturbed instruction and layout. The long-term store (`memory`: a path, `fresh`, `none`, or
None for `RUNS/memory.db`, see `tether.session.memory.open_store`) is opened once, on first use,
and closed with the session. The `policies` (`tether.models.policies.registered`: what
`--policy`, `--policies` and a suite's `policies:` give) are named while the session is open, so
the episode's `vla` leaves find them. `run` ticks one episode
(`tether.trees.episode.run_episode`) with the event recorder, the trace recorder (unless
`record` is off) and an optional display as observers, consolidates it into the store, and
writes the run directory: `result.json`, `tree.txt` and the trace (docs/trace.md). `tether run`
(`tether.session.run`) and `tether do` (`tether.planning.do`) are both a session.

Given a `SceneCache` (`scenes`), a session takes its scene from it (a kept scene reset to this
episode when that gives the same episode, `tether.scenes.scene_cache`) and leaves it open there.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import py_trees

from tether.behaviours.services import NO_SERVICES, Services
from tether.errors import TetherError
from tether.memory.diagnosis import diagnose
from tether.memory.store import ExperienceStore
from tether.models.policies import Entry, registered
from tether.replay.recorder import FrameSettings, Recorder
from tether.scenes.catalogue import get_task
from tether.scenes.isolation import Isolation
from tether.session.memory import FRESH, STORE_NAME, EventRecorder, open_store, remember_episode
from tether.trees.compiler import CompiledTree
from tether.trees.episode import EpisodeResult, Tick, run_episode

if TYPE_CHECKING:
    from tether.scenes.scene_cache import SceneCache

DEFAULT_BUDGET = 1000
# Both cameras at 128 px at every event and at most 20 ticks (1 s simulated) apart: a frame costs
# 40-250 ms to render on a CPU, about 2-10 control steps, so this keeps recording to a fraction
# of the run's time while every phase change of the tree still has a picture.
DEFAULT_FRAMES = FrameSettings(cameras=("agentview", "robot0_eye_in_hand"), every=20,
                               size=(128, 128))
INIT_STATES = 50
Display = Callable[[py_trees.behaviour.Behaviour, Any], Any]  # (root, robot) -> observer


@dataclass
class SessionConfig:
    """Where an episode runs, for how long, and what is kept of it."""

    task: str  # SUITE/TASK, SUITE/INDEX or a .bddl file
    seed: int = 0
    init_state: int | None = None  # None: seed % 50
    budget: int | None = DEFAULT_BUDGET  # control steps; None: the task's step cap (else 1000)
    runs: Path = Path("runs")  # the folder that receives the run directory
    record: bool = True  # write the trace
    frames: FrameSettings = DEFAULT_FRAMES
    memory: str | Path | None = None  # PATH, `fresh`, `none`; None: RUNS/memory.db
    perturb: tuple[str, ...] = ()  # perturbation specs KIND[:k=v,...], applied in order
    policies: dict[str, Entry] = field(default_factory=dict)  # named for this episode's trees
    perception: str = "privileged"  # what leaves read object state from: privileged, camera
    until_goal: bool = False  # end at the first step the task's goal holds (LIBERO's protocol)

    def __post_init__(self) -> None:
        self.runs, self.perturb = Path(self.runs), tuple(self.perturb)

    @property
    def seen(self) -> bool:
        """Whether something is expected to look at the scene's images as they are (camera
        perception, a named policy): its scene then compiles its image textures at once, else
        at its first render (`tether.scenes.fast_physics.textures_later`). The trace's frames do
        not count: they are drawn with light textures (`tether.scenes.cameras.Cameras`)."""
        return self.perception != "privileged" or bool(self.policies)

    @property
    def index(self) -> int:
        """The init state the episode starts from."""
        return self.seed % INIT_STATES if self.init_state is None else self.init_state


@dataclass
class RunRecord:
    tree: str
    task: str
    instruction: str
    init_state: int
    seed: int
    params: dict[str, Any]
    result: EpisodeResult
    wall_seconds: float
    run_dir: str
    memory: dict[str, Any] | None = None  # the store used and what consolidation did
    perturbations: tuple[str, ...] = ()  # the specs applied (docs/perturbations.md)
    perception: str = "privileged"  # what the leaves read object state from
    # camera perception: the simulator reads made under each declared exception
    privileged_reads: dict[str, int] = field(default_factory=dict)


def _outside(isolation: Isolation, reason: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` run outside the agent's isolation, under `reason`: the trace and displays, and the
    benchmark's own goal test (the outcome, as the seeds' evaluations declare it)."""

    def outside(*args: Any) -> Any:
        with isolation.allowed(reason):
            return fn(*args)

    return outside


def run_dir_for(runs: Path, name: str, task: str, seed: int) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{task}-s{seed}")[:120]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = runs / f"{stamp}-{slug}"
    n = 1
    while path.exists():
        n += 1
        path = runs / f"{stamp}-{slug}-{n}"
    return path


class Session:
    """One episode of `config.task` (see the module docstring); `name` starts the run
    directory's name; `services` go to every node's `setup` and the diagnoser to
    consolidation; `display(root, robot)` may return a context-managed observer, and so may each
    of `observers` (a dataset recorder, say); `scenes`
    (None: a scene of its own, closed at the end) lends the scene and keeps it."""

    def __init__(self, config: SessionConfig, *, name: str, services: Services = NO_SERVICES,
                 display: Display | None = None, scenes: SceneCache | None = None,
                 observers: tuple[Display, ...] = ()):
        self.config, self.name, self.services = config, name, services
        self.watchers = ((display,) if display else ()) + tuple(observers)
        self.scenes = scenes
        self.entry = get_task(config.task)
        self.scene: Any = None
        self.robot: Any = None  # what the leaves and the planner see: the scene, or its cameras
        self.perturbations: list = []
        self.wall = 0.0
        self._out: Path | None = None
        self._store: ExperienceStore | None = None
        self._store_opened = False

    def __enter__(self) -> Session:
        from tether.blackboard.world import PERCEPTION, perceive
        from tether.scenes.perturbations import build, open_scene

        PERCEPTION.get(self.config.perception, where="--perception: ")

        self.perturbations = [build(spec) for spec in self.config.perturb]
        index = self.config.index
        if not 0 <= index < INIT_STATES:
            raise TetherError(f"--init-state must be in 0..{INIT_STATES - 1}, got {index}")
        self.wall = time.perf_counter()
        self._policies = registered(self.config.policies)
        self._policies.__enter__()
        opener = open_scene if self.scenes is None else self.scenes.open
        try:
            self.scene = opener(self.entry, self.perturbations, init_state=index,
                                seed=self.config.seed, textures=self.config.seen)
            self.robot = perceive(self.scene, self.config.perception)
        except BaseException:
            self._policies.__exit__(None, None, None)
            if self.scene is not None and self.scenes is None:
                self.scene.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._store is not None:
                self._store.close()
        finally:
            self._policies.__exit__(None, None, None)
            if self.robot is not None and self.robot is not self.scene:
                self.robot.close()
            if self.scenes is None:
                self.scene.close()

    @property
    def budget(self) -> int:
        """The episode's step budget: the config's, else the task's step cap (LIBERO's per
        suite, `Task.max_steps`), else `DEFAULT_BUDGET`."""
        if self.config.budget is not None:
            return self.config.budget
        return self.entry.max_steps or DEFAULT_BUDGET

    @property
    def instruction(self) -> str:
        """The task's instruction in this scene (as the perturbations rewrote it)."""
        return self.scene.task.language

    @property
    def run_dir(self) -> Path:
        """The run directory, created on first use."""
        if self._out is None:
            self._out = run_dir_for(self.config.runs, self.name, self.entry.id, self.config.seed)
            self._out.mkdir(parents=True)
        return self._out

    @property
    def store(self) -> ExperienceStore | None:
        """The long-term store (None: memory off), opened once, on first use."""
        if not self._store_opened:
            spec = self.config.memory
            spec = self.config.runs / STORE_NAME if spec is None else spec
            self._store = open_store(spec, self.run_dir if str(spec) == FRESH else
                                     self.config.runs)
            self._store_opened = True
        return self._store

    def run(self, compiled: CompiledTree, *, tree: str) -> RunRecord:
        """Tick `compiled` for one episode, consolidate it, write the run files; `tree` is
        what the record says was run (its file)."""
        cfg, scene, out = self.config, self.scene, self.run_dir
        instruction = self.instruction
        params = {k: str(v) for k, v in compiled.bindings.items()}
        # the scene's own list: the task file's :perturbation_config first, then the -p specs
        applied = tuple(str(p) for p in getattr(scene, "perturbations", self.perturbations))
        recorder = Recorder(out, compiled.root, scene, frames=cfg.frames, meta={
            "tree": tree, "task": self.entry.id, "instruction": instruction,
            "init_state": cfg.index, "seed": cfg.seed, "budget": self.budget,
            "params": params, "perturbations": list(applied)}) if cfg.record else None
        store = self.store
        isolation = scene.isolation
        reads_before = dict(isolation.reads)
        observers: list[Callable[[Tick], None]] = [EventRecorder(scene)]
        observers += [recorder] if recorder else []
        views: list[Any] = []
        try:
            for watch in self.watchers:
                view = watch(compiled.root, scene)
                view.__enter__()
                views.append(view)
                observers.append(view)
            with isolation.enforced() if self.robot is not scene else contextlib.nullcontext():
                result = run_episode(
                    compiled.root, self.robot, budget=self.budget, task=self.entry.id,
                    instruction=instruction, params=compiled.bindings,
                    observers=tuple(_outside(isolation, "trace", o) for o in observers),
                    memory=store, services=self.services,
                    outcome=_outside(isolation, "outcome", scene.success),
                    until_goal=cfg.until_goal)
        except BaseException as exc:
            if recorder is not None:
                recorder.finish(aborted=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            for view in reversed(views):
                view.__exit__(None, None, None)
        if recorder is not None:
            recorder.finish(result)
        consolidated = None
        if store is not None:
            report = remember_episode(store, result, task=self.entry.id,
                                      instruction=instruction, bindings=compiled.bindings,
                                      run_id=out.name,
                                      diagnoser=self.services.diagnoser or diagnose)
            consolidated = {"store": str(store.path), **asdict(report)}
        (out / "tree.txt").write_text(py_trees.display.unicode_tree(compiled.root,
                                                                    show_status=True) + "\n",
                                      encoding="utf-8")
        record = RunRecord(tree=tree, task=self.entry.id, instruction=instruction,
                           init_state=cfg.index, seed=cfg.seed, params=params, result=result,
                           wall_seconds=round(time.perf_counter() - self.wall, 2),
                           run_dir=str(out), memory=consolidated,
                           perturbations=applied, perception=cfg.perception,
                           privileged_reads={k: v - reads_before.get(k, 0)
                                             for k, v in isolation.reads.items()
                                             if v > reads_before.get(k, 0)})
        (out / "result.json").write_text(json.dumps(asdict(record), indent=2) + "\n",
                                         encoding="utf-8")
        return record
