"""`tether run`: compile a tree for a task's scene, run one episode, keep its files.

The tree's params are bound from `--with KEY=VALUE`, then from the task's goal (params declared
`from_goal`), then from their defaults. The scene is opened from the task and init state, the tree
is compiled against the scene's object names, and one episode is ticked. The run directory gets
`result.json` (the outcome), `tree.txt` (the final tree with every node's status) and, unless
recording is off, the trace (`trace.jsonl` and camera frames under `frames/`, see docs/trace.md)
that `tether view` replays. Unless memory is off (`memory="none"`), the episode's nodes see the
long-term store and the episode is consolidated into it when it ends (docs/memory.md).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import py_trees

from tether.scenes.catalogue import get_task
from tether.errors import TetherError
from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file
from tether.trees.episode import EpisodeResult, Tick, run_episode
from tether.session.memory import EventRecorder, open_store, remember_episode
from tether.replay.recorder import FrameSettings, Recorder

DEFAULT_BUDGET = 1000
# Both cameras at 128 px every 20 ticks (1 s simulated) and at every event: a frame costs
# 40-250 ms to render on a CPU, about 2-10 control steps, so this keeps recording to a fraction
# of the run's time while every phase change of the tree still has a picture.
DEFAULT_FRAMES = FrameSettings(cameras=("agentview", "robot0_eye_in_hand"), every=20,
                               size=(128, 128))


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


def run_dir_for(runs: Path, tree: Path, task: str, seed: int) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{tree.stem}-{task}-s{seed}")[:120]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = runs / f"{stamp}-{slug}"
    n = 1
    while path.exists():
        n += 1
        path = runs / f"{stamp}-{slug}-{n}"
    return path


def run(tree: Path | str, task: str, *, seed: int = 0, init_state: int | None = None,
        given: dict[str, Any] | None = None, budget: int = DEFAULT_BUDGET,
        runs: Path | str = "runs", record: bool = True, frames: FrameSettings = DEFAULT_FRAMES,
        memory: str | Path | None = None, perturb: Sequence[str] = (),
        display: Callable[[py_trees.behaviour.Behaviour, Any], Any] | None = None,
        services: dict[str, Any] | None = None) -> RunRecord:
    """Run `tree` once on `task`; `display(root, robot)` may return a context-managed observer.

    With `record` the run's trace is written as it goes, with camera frames as `frames` says.
    `memory` is the long-term store: a path, `fresh` (a new one in the run directory), `none`
    (off), or None for `RUNS/memory.db`. `perturb` are perturbation specs (`KIND[:k=v,...]`);
    the instruction the tree and memory see is the perturbed one. `services` go to every
    node's `setup` (`tether do` passes the `replanner`); a `diagnoser` service replaces the
    rule-based diagnosis when the episode is consolidated (`tether.session.memory.diagnoser_services`).
    """
    from tether.scenes.perturbations import build, open_scene

    tree, runs = Path(tree), Path(runs)
    entry = get_task(task)
    tf = read_tree_file(tree)  # fail fast on a malformed tree, before the scene loads
    perturbations = [build(spec) for spec in perturb]
    index = seed % 50 if init_state is None else init_state
    if not 0 <= index < 50:
        raise TetherError(f"--init-state must be in 0..49, got {index}")
    wall = time.perf_counter()
    scene = open_scene(entry, perturbations, init_state=index, seed=seed)
    instruction = scene.task.language
    try:
        params = {**goal_bindings(tf, scene.goal()), **(given or {})}
        compiled = compile_tree(tree, params, resolve=scene.resolve)
        out = run_dir_for(runs, tree, entry.id, seed)
        out.mkdir(parents=True)
        recorder = Recorder(out, compiled.root, scene, frames=frames, meta={
            "tree": str(tree), "task": entry.id, "instruction": instruction,
            "init_state": index, "seed": seed, "budget": budget,
            "params": {k: str(v) for k, v in compiled.bindings.items()}}) if record else None
        store = open_store(runs / "memory.db" if memory is None else memory, out)
        observers: list[Callable[[Tick], None]] = [EventRecorder(scene)]
        observers += [recorder] if recorder else []
        view = display(compiled.root, scene) if display else None
        try:
            if view is not None:
                view.__enter__()
                observers.append(view)
            result = run_episode(compiled.root, scene, budget=budget, task=entry.id,
                                 instruction=instruction, params=compiled.bindings,
                                 observers=tuple(observers), memory=store,
                                 services=services)
        except BaseException as exc:
            if recorder is not None:
                recorder.finish(aborted=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if view is not None:
                view.__exit__(None, None, None)
        if recorder is not None:
            recorder.finish(result)
        consolidated = None
        if store is not None:
            report = remember_episode(store, result, task=entry.id, instruction=instruction,
                                      bindings=compiled.bindings, run_id=out.name,
                                      **{k: v for k, v in (services or {}).items()
                                         if k == "diagnoser"})
            consolidated = {"store": str(store.path), **asdict(report)}
            store.close()
    finally:
        scene.close()
    (out / "tree.txt").write_text(py_trees.display.unicode_tree(compiled.root, show_status=True)
                                  + "\n", encoding="utf-8")
    record = RunRecord(tree=str(tree), task=entry.id, instruction=instruction,
                       init_state=index, seed=seed,
                       params={k: str(v) for k, v in compiled.bindings.items()}, result=result,
                       wall_seconds=round(time.perf_counter() - wall, 2), run_dir=str(out),
                       memory=consolidated,
                       perturbations=tuple(str(p) for p in perturbations))
    (out / "result.json").write_text(json.dumps(asdict(record), indent=2) + "\n",
                                     encoding="utf-8")
    return record
