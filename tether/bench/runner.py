"""Run a suite's episodes in parallel worker processes (or on Ray) into a run directory.

`bench(suite, out)` runs every episode of the suite that `out/episodes.jsonl` does not already
hold (so re-running resumes; rows of other episodes there are kept), `workers` at a time, with
a tqdm progress bar and ETA, then writes the reports (`tether.bench.report`). Each episode is
one `tether.session.run.run` with its seed, its perturbations and its arm's tree, params and
memory, so its result depends only on (task, perturbations, seed, arm); its run directory is
moved to `out/episodes/<slug>/`. A worker keeps its last scene and resets it for its next
episode when that gives exactly the episode a fresh scene gives
(`tether.scenes.scene_cache.SceneCache`: same task and scene-stage perturbations);
`run_episode(..., reuse=False)` builds every scene afresh.

Episodes run in long-lived spawned worker processes, one episode at a time each. An episode that
raises is recorded with status `error` and the message; a worker that dies (a segfault in
MuJoCo, `os._exit`) or an episode that outlives its wall-clock `timeout` is recorded the same
way, the worker is replaced, and the run goes on. (`concurrent.futures` cannot kill one hung
task without breaking the whole pool, hence the small pool here.) Episodes of an arm with
`memory: persistent` run one after another in suite order, since each reads what the previous
ones consolidated. `backend="ray"` submits the same episodes as Ray tasks (`ray.init(address)`,
or a local Ray with `num_cpus=workers`) and gives the same rows; an episode whose suite names a
policy on CUDA asks Ray for one GPU (`Episode.gpus`). Each episode names the suite's `policies`
in its worker for its duration (`SessionConfig.policies`). With `record_dataset`, workers keep
each episode's frames beside its trace and this process appends them to the one LeRobotDataset
in the order episodes finish (`tether.datasets.rollouts`): one writer, no merge step.
"""

from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from tether.bench.suite import Episode, Suite
from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.scenes.scene_cache import SceneCache

EPISODES_FILE = "episodes.jsonl"
BACKENDS = ("process", "ray")
Execute = Callable[[Episode, str], dict[str, Any]]
_kept: SceneCache | None = None  # this process's scene, kept from one episode to the next
_frozen = False  # whether this process has frozen its heap (`_freeze_heap`)


def base_row(ep: Episode) -> dict[str, Any]:
    """The fields every row has, whatever happened to the episode."""
    return {"key": ep.key, "arm": ep.arm.name, "tree": ep.arm.solver(), "memory": ep.arm.memory,
            "task": ep.task, "perturbation": ep.perturbation, "perturb": list(ep.perturb),
            "seed": ep.seed, "budget": ep.budget}


def error_row(ep: Episode, message: str, wall: float) -> dict[str, Any]:
    return {**base_row(ep), "status": "error", "success": False, "steps": 0,
            "tree_status": None, "ended_by": None, "error_codes": [], "error": message,
            "trace": None, "wall_seconds": round(wall, 2)}


def kept_scenes() -> SceneCache:
    """The scene cache of this process (a worker's, or a Ray worker's across its tasks)."""
    global _kept
    from tether.scenes.scene_cache import SceneCache

    if _kept is None:
        _kept = SceneCache(size=2)
    return _kept


def _freeze_heap() -> None:
    """After a process's first episode (its imports, its first scene): collect, then move every
    object left to the collector's permanent generation, so the collections each later episode
    triggers (robosuite calls `gc.collect()` at every reset) do not walk them again."""
    global _frozen
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True


def run_episode(ep: Episode, out: str, *, reuse: bool = True,
                rollouts: bool = False) -> dict[str, Any]:
    """Run one episode with `tether.session.run.run` (a planning arm: `tether.planning.do`, the
    task's instruction planned in the episode's scene) and return its row (the default
    `execute`); `reuse` takes the scene from this process's `kept_scenes()`, else builds it
    afresh; `rollouts` keeps the episode's dataset frames in its folder (row key `rollout`) for
    the bench process to append."""
    from tether.datasets.rollouts import FRAMES_FILE, Rollout, save_frames
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig, run
    from tether.session.session import SessionConfig

    out_dir = Path(out)
    memory = {"none": "none", "fresh": "fresh"}.get(ep.arm.memory)
    if memory is None:
        (out_dir / "memory").mkdir(parents=True, exist_ok=True)
        memory = str(out_dir / "memory" / f"{ep.arm.name}.db")
    scratch = out_dir / "scratch" / ep.slug
    shutil.rmtree(scratch, ignore_errors=True)
    rollout = Rollout() if rollouts else None
    wall = time.perf_counter()
    session = SessionConfig(task=ep.task, seed=ep.seed, budget=ep.budget, runs=scratch,
                            record=True, frames=FrameSettings(), memory=memory,
                            perturb=tuple(ep.perturb), policies=dict(ep.policies),
                            perception=ep.arm.perception, until_goal=ep.until_goal)
    scenes = kept_scenes() if reuse else None
    observers = (rollout.start,) if rollout else ()
    if ep.arm.plan is not None:
        rec = _planned(ep, session, scenes, observers)
    else:
        rec = run(RunConfig(ep.arm.file, session, given=dict(ep.arm.given)), scenes=scenes,
                  observers=observers)
    final = out_dir / "episodes" / ep.slug
    shutil.rmtree(final, ignore_errors=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(rec.run_dir, final)
    kept = None
    if rollout and rollout.frames:
        save_frames(final / FRAMES_FILE, rollout.frames)
        kept = str((final / FRAMES_FILE).relative_to(out_dir))
    shutil.rmtree(scratch, ignore_errors=True)
    _freeze_heap()
    r = rec.result
    return {**base_row(ep), "status": "passed" if r.success else "failed",
            "success": r.success, "steps": r.steps, "tree_status": r.tree_status,
            "ended_by": r.ended_by, "error_codes": [e["code"] for e in r.errors], "error": None,
            "instruction": rec.instruction, "trace": str(final.relative_to(out_dir)),
            **({"rollout": kept} if kept else {}),
            "wall_seconds": round(time.perf_counter() - wall, 2)}


def _planned(ep: Episode, session: Any, scenes: SceneCache | None,
             observers: tuple[Any, ...]) -> Any:
    """A planning arm's episode: the task's instruction planned by `ep.arm.plan` in the episode's
    scene and run, as `tether do` does (`tether.planning.do.do_instruction`)."""
    from tether.planning.do import DoConfig, do_instruction
    from tether.planning.planners import PlannerOptions
    from tether.scenes.catalogue import get_task

    record, _ = do_instruction(DoConfig(get_task(ep.task).language, session,
                                        planner=PlannerOptions(backend=ep.arm.plan),
                                        grasp=ep.arm.grasp),
                               scenes=scenes, observers=observers)
    return record


def _worker(conn: Connection, execute: Execute, out: str, threads: int) -> None:
    """A worker process: run episodes sent over `conn` until it sends None. Its libraries' thread
    pools (torch, OpenMP) get `threads`, the worker's share of the CPUs, unless the user set
    OMP_NUM_THREADS: two workers of two threads each on two cores run a policy 4x slower."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    while (ep := conn.recv()) is not None:
        try:
            conn.send(("ok", execute(ep, out)))
        except TetherError as exc:
            conn.send(("raised", f"{type(exc).__name__}: {exc}"))
        except BaseException as exc:  # noqa: BLE001 - the episode's failure, not the run's
            tail = "".join(traceback.format_exception(exc)[-3:]).strip()
            conn.send(("raised", f"{type(exc).__name__}: {exc}\n{tail}"))


@dataclass
class _Slot:
    """One worker process and the episode it is running (if any)."""

    process: Any
    conn: Connection
    episode: Episode | None = None
    started: float = 0.0


class _Scheduler:
    """Hands out pending episodes in order; a persistent-memory arm runs one at a time."""

    def __init__(self, pending: list[Episode]):
        self.pending = list(pending)
        self.busy_arms: set[str] = set()

    def next(self) -> Episode | None:
        for i, ep in enumerate(self.pending):
            if ep.arm.memory == "persistent":
                if ep.arm.name in self.busy_arms:
                    continue
                self.busy_arms.add(ep.arm.name)
            return self.pending.pop(i)
        return None

    def done(self, ep: Episode) -> None:
        self.busy_arms.discard(ep.arm.name)


def _run_processes(pending: list[Episode], out: Path, workers: int, execute: Execute,
                   emit: Callable[[dict[str, Any]], None]) -> None:
    ctx = mp.get_context("spawn")
    count = max(1, min(workers, len(pending)))
    threads = max(1, len(os.sched_getaffinity(0)) // count)

    def start() -> _Slot:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, execute, str(out), threads), daemon=True)
        proc.start()
        child.close()
        return _Slot(proc, parent)

    sched = _Scheduler(pending)
    slots = [start() for _ in range(count)]
    try:
        while True:
            for slot in slots:
                if slot.episode is None and (ep := sched.next()) is not None:
                    slot.episode, slot.started = ep, time.perf_counter()
                    slot.conn.send(ep)
            running = [s for s in slots if s.episode is not None]
            if not running:
                break
            wait([s.conn for s in running] + [s.process.sentinel for s in running], timeout=0.5)
            for i, slot in enumerate(slots):
                ep = slot.episode
                if ep is None:
                    continue
                elapsed = time.perf_counter() - slot.started
                row, replace_worker = None, False
                if slot.conn.poll():
                    try:
                        kind, payload = slot.conn.recv()
                        row = payload if kind == "ok" else error_row(ep, payload, elapsed)
                    except (EOFError, OSError):
                        pass
                if row is None and not slot.process.is_alive():
                    row = error_row(ep, f"worker crashed (exit code {slot.process.exitcode})",
                                    elapsed)
                    replace_worker = True
                elif row is None and elapsed > ep.timeout:
                    row = error_row(ep, f"timeout: still running after {ep.timeout:.0f} s wall",
                                    elapsed)
                    replace_worker = True
                if row is None:
                    continue
                if replace_worker:
                    slot.process.kill()
                    slot.process.join()
                    slots[i] = start()
                else:
                    slot.episode = None
                sched.done(ep)
                emit(row)
    finally:
        for slot in slots:
            if slot.process.is_alive():
                try:
                    slot.conn.send(None)
                except OSError:
                    pass
        for slot in slots:
            slot.process.join(timeout=5)
            if slot.process.is_alive():
                slot.process.kill()


def _run_ray(pending: list[Episode], out: Path, workers: int, execute: Execute,
             emit: Callable[[dict[str, Any]], None], address: str | None) -> None:
    import ray

    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        _ray_loop(ray, pending, out, workers, execute, emit)
    finally:
        if started:
            ray.shutdown()


def _ray_loop(ray: Any, pending: list[Episode], out: Path, workers: int, execute: Execute,
              emit: Callable[[dict[str, Any]], None]) -> None:

    @ray.remote(max_retries=0, num_cpus=1)
    def remote(ep: Episode) -> dict[str, Any]:
        os.environ.setdefault("MUJOCO_GL", "egl")
        return execute(ep, str(out))

    sched = _Scheduler(pending)
    flying: dict[Any, tuple[Episode, float]] = {}
    while True:
        while len(flying) < workers and (ep := sched.next()) is not None:
            flying[remote.options(num_gpus=ep.gpus).remote(ep)] = (ep, time.perf_counter())
        if not flying:
            break
        ready, _ = ray.wait(list(flying), num_returns=1, timeout=0.5)
        now = time.perf_counter()
        for ref in list(flying):
            ep, started = flying[ref]
            if ref in ready:
                try:
                    row = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - the episode's failure
                    cause = getattr(exc, "cause", None) or exc
                    row = error_row(ep, f"{type(cause).__name__}: {cause}", now - started)
            elif now - started > ep.timeout:
                ray.cancel(ref, force=True)
                row = error_row(ep, f"timeout: still running after {ep.timeout:.0f} s wall",
                                now - started)
            else:
                continue
            del flying[ref]
            sched.done(ep)
            emit(row)


def read_rows(out: Path) -> dict[str, dict[str, Any]]:
    """The rows already in `out/episodes.jsonl`, by key (a torn last line is ignored)."""
    rows: dict[str, dict[str, Any]] = {}
    path = out / EPISODES_FILE
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[row["key"]] = row
    return rows


def bench(suite: Suite, out: Path | str, *, workers: int | None = None, backend: str = "process",
          address: str | None = None, timeout: float | None = None,
          execute: Execute = run_episode, progress: bool = True,
          record_dataset: Path | None = None) -> list[dict[str, Any]]:
    """Run the suite's unfinished episodes into `out`; return all its rows in suite order.
    With `record_dataset`, each row's `rollout` frames are appended to that LeRobotDataset as
    its episode finishes, by this process alone (one writer; `execute` must keep them)."""
    from dataclasses import replace

    from tether.datasets.rollouts import append_episode, check_target, load_frames

    if backend not in BACKENDS:
        raise TetherError(f"unknown backend '{backend}' (expected {' or '.join(BACKENDS)})")
    if record_dataset is not None:
        check_target(record_dataset)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    episodes = suite.episodes()
    if timeout is not None:
        episodes = [replace(ep, timeout=timeout) for ep in episodes]
    done = read_rows(out)
    pending = [ep for ep in episodes if ep.key not in done]
    workers = workers or os.cpu_count() or 1
    bar = tqdm(total=len(episodes), initial=len(episodes) - len(pending), unit="ep",
               desc=suite.name, disable=not progress, dynamic_ncols=True)
    with (out / EPISODES_FILE).open("a", encoding="utf-8") as sink:
        def emit(row: dict[str, Any]) -> None:
            if record_dataset is not None and row.get("rollout"):
                frames = out / row.pop("rollout")
                append_episode(record_dataset, load_frames(frames), row["success"])
                frames.unlink()
            done[row["key"]] = row
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            bar.update(1)
            if row["status"] != "passed":
                bar.write(f"{row['status']}: {row['key']}"
                          + (f" ({row['error'].splitlines()[0]})" if row["error"] else ""))

        if pending:
            if backend == "ray":
                _run_ray(pending, out, workers, execute, emit, address)
            else:
                _run_processes(pending, out, workers, execute, emit)
    bar.close()
    shutil.rmtree(out / "scratch", ignore_errors=True)
    rows = [done[ep.key] for ep in episodes]
    ours = {ep.key for ep in episodes}
    others = [r for key, r in done.items() if key not in ours]  # other selections' rows stay
    (out / EPISODES_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows + others),
                                     encoding="utf-8")
    return rows


def suite_rows(suite: Suite, out: Path | str) -> list[dict[str, Any]]:
    """The rows `out` holds of the suite's episodes, in suite order: what runs of several
    selections of one suite into one directory (`--tasks`, `--arms`) have done together."""
    done = read_rows(Path(out))
    return [done[ep.key] for ep in suite.episodes() if ep.key in done]
