"""Whole-task demonstrations: an expert tree run from the robot's start pose, each successful
episode appended to a LeRobotDataset (`tether collect TASK... --tree TREE`). The tree is one
tree for every task, or (`--tree reference`) each task's own reference solution, the library
trees the planner's skill rule picks for its goal (`tether.planning.reference`): a suite whose
tasks need different skills (libero_goal: drawers, knobs, pushes, picks) is recorded in one go.

Each attempt is one `tether run` of the tree (`tether.session.run`: params bound from the task's
goal, privileged perception, no trace, no long-term memory, the task's own step cap unless
`budget` says otherwise) with a `Rollout` observer (`tether.datasets.rollouts`): one frame per
control step, the images rendered before the step, the 8-D state, the 7-D command the robot
actually applied through the command slot, the instruction, the commanding leaf, and with a
`language` the instruction's embedding as `observation.environment_state`
(`tether.models.language`). Only episodes whose task goal holds at the end are kept; an attempt
the tree cannot make (a `TetherError`, e.g. a goal it does not bind) is a failed one, its
message kept as its error.

Attempts run init state by init state over `init_states` for every task, in blocks of `BLOCK`
init states per task (task 0 states 0-4, task 1 states 0-4, ..., task 0 states 5-9, ...), so a
dataset stopped early is balanced over its tasks. Resuming is the same command again: each attempt
is one line of `meta/tether_demos.jsonl` (task, init state, success, steps, seconds, the episode's
index in the dataset), and an attempt already there is not run again. The line of a successful
attempt is written before its episode is appended and counts only once the dataset holds that
episode, and the dataset is finalised after every episode, so a killed run loses at most the
episode it was recording and never records one twice. The recipe (tree, cameras, language,
budget, seed) is kept in `meta/tether_demos.json`; resuming with another recipe is an error.

Parts recorded side by side (disjoint init states, one process per core) become one dataset
with `merge_demos` (`tether merge-demos`).

    report = collect_demos(DemoConfig(tasks=("libero_object",), root=Path("data/object")))
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tether.datasets.collect import AGENTVIEW, WRIST
from tether.datasets.rollouts import Rollout, append_episode, check_target, create_dataset
from tether.errors import TetherError, did_you_mean
from tether.models.language import Language
from tether.models.observation import CameraSpec, save_drafted
from tether.scenes.catalogue import Task, get_task, suite_tasks
from tether.trees.compiler import LIBRARY, read_tree_file

LEDGER = "tether_demos.jsonl"
RECIPE = "tether_demos.json"
REFERENCE = "reference"  # `--tree` for each task's reference solution
BLOCK = 5  # init states per task before the next task's turn


@dataclass
class DemoConfig:
    """What to record: `tasks` (SUITE/TASK, SUITE/INDEX, .bddl files or whole suites) from
    init states `first_init_state` .. `first_init_state + init_states - 1` of each, by `tree`
    (None: each task's reference solution)."""

    tasks: Sequence[str]
    root: Path
    tree: Path | None = LIBRARY / "pick_place.yaml"
    init_states: int = 40
    first_init_state: int = 0
    cameras: tuple[CameraSpec, ...] = (AGENTVIEW, WRIST)
    language: str | None = "minilm"  # embedder of the instruction feature; None: no feature
    budget: int | None = None  # control steps; None: the task's step cap
    seed: int = 0

    def recipe(self) -> dict[str, Any]:
        """What must stay the same for episodes to belong in one dataset (a library tree by
        its name, so another checkout resumes the same recording)."""
        if self.tree is None:
            tree = REFERENCE
        else:
            in_library = self.tree.resolve().parent == LIBRARY.resolve()
            tree = self.tree.stem if in_library else str(self.tree)
        return {"tree": tree,
                "cameras": [[c.camera, list(c.size), c.key] + ["draft"] * c.draft
                            for c in self.cameras],  # as before drafts, for full frames
                "language": self.language, "budget": self.budget, "seed": self.seed}


@dataclass
class Attempt:
    task: str
    init_state: int
    success: bool
    steps: int
    seconds: float
    episode: int | None = None  # index in the dataset, for a kept episode
    errors: list[str] = field(default_factory=list)  # error codes the tree wrote


@dataclass
class DemoReport:
    root: str
    episodes: int  # in the dataset
    frames: int
    attempts: list[Attempt]  # made by this call
    skipped: int  # attempts made before (resumed)
    seconds: float


def tree_file(spec: str) -> Path | None:
    """A tree file, the library tree named `spec` (`pick_place`), or None for `reference`."""
    if spec == REFERENCE:
        return None
    path = Path(spec)
    if path.is_file():
        return path
    if (LIBRARY / f"{spec}.yaml").is_file():
        return LIBRARY / f"{spec}.yaml"
    names = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
    raise TetherError(f"--tree {spec}: no such file and no library tree of that name"
                      f"{did_you_mean(spec, [*names, REFERENCE])}; library trees: "
                      f"{', '.join(names)}; or {REFERENCE}: each task's reference solution")


def reference_tree(task: Task, folder: Path) -> Path:
    """`task`'s reference solution written as a tree file in `folder`; a `TetherError` when a
    literal of its goal has no skill."""
    import yaml

    from tether.planning.reference import reference_for

    ref = reference_for(task.id)
    if ref.missing:
        raise TetherError(f"no library tree achieves {', '.join(ref.missing)} of {task.id}'s goal")
    path = folder / f"reference-{task.id.replace('/', '-')}.yaml"
    path.write_text(yaml.safe_dump(ref.document(), sort_keys=False), encoding="utf-8")
    return path


def tasks_of(specs: Sequence[str]) -> list[Task]:
    """Each spec as a task, a suite name as all its tasks."""
    out: list[Task] = []
    for spec in specs:
        whole = "/" not in spec and not spec.strip().endswith(".bddl") and not Path(spec).is_file()
        out.extend(suite_tasks(spec.strip()) if whole else [get_task(spec)])
    return out


def schedule(tasks: Sequence[Task], first: int, count: int) -> list[tuple[Task, int]]:
    """(task, init state) in the recording order: blocks of `BLOCK` init states, task by task."""
    return [(task, state)
            for block in range(first, first + count, BLOCK)
            for task in tasks
            for state in range(block, min(block + BLOCK, first + count))]


def read_ledger(root: Path) -> list[Attempt]:
    """The attempts recorded in `root`; a kept episode the dataset does not hold (the run was
    killed while appending it) is dropped, so it is attempted again."""
    path = root / "meta" / LEDGER
    if not path.is_file():
        return []
    info = json.loads((root / "meta" / "info.json").read_text(encoding="utf-8"))
    held = info["total_episodes"]
    attempts = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            attempt = Attempt(**json.loads(line))
        except (ValueError, TypeError) as exc:
            raise TetherError(f"{path}:{n}: not an attempt record ({exc})") from None
        if attempt.episode is None or attempt.episode < held:
            attempts.append(attempt)
    return attempts


def check_recipe(root: Path, config: DemoConfig) -> None:
    """A TetherError when `root` holds episodes recorded another way."""
    path = root / "meta" / RECIPE
    if not path.is_file():
        if (root / "meta" / "info.json").is_file():
            raise TetherError(f"{root} is a LeRobotDataset not recorded by `tether collect "
                              "--tree`; give --out a new folder")
        return
    have = json.loads(path.read_text(encoding="utf-8"))
    diff = [k for k, v in config.recipe().items() if have.get(k) != v]
    if diff:
        raise TetherError(f"{root} was recorded with other settings ({', '.join(diff)}: "
                          f"{', '.join(str(have.get(k)) for k in diff)}); resume with the same "
                          "options or give --out a new folder")


def collect_demos(config: DemoConfig, progress: Callable[[Attempt, int, int], None] | None
                  = None) -> DemoReport:
    """Run every (task, init state) of `config` not attempted yet; keep the successful episodes.
    `progress(attempt, done, total)` is called after every attempt."""
    from tether.scenes.scene_cache import SceneCache
    from tether.session.run import RunConfig, run
    from tether.session.session import SessionConfig

    if config.init_states < 1:
        raise TetherError(f"init states must be at least 1, not {config.init_states}")
    tasks = tasks_of(config.tasks)
    if not tasks:
        raise TetherError("no task to collect from; give SUITE, SUITE/TASK_NAME or SUITE/INDEX")
    last = config.first_init_state + config.init_states - 1
    for task in tasks:
        if config.first_init_state < 0 or last >= task.num_init_states:
            raise TetherError(f"{task.id} has initial states 0..{task.num_init_states - 1}, not "
                              f"{config.first_init_state}..{last}")
    if config.tree is not None:
        read_tree_file(config.tree)  # a malformed tree fails before any scene opens
    language = Language(config.language) if config.language else None
    rollout = Rollout(config.cameras, language)
    features = rollout.features()  # loads the embedder: an unknown name fails here
    root = config.root
    check_recipe(root, config)
    check_target(root, features, option="--out")
    if not (root / "meta" / "info.json").is_file():
        create_dataset(root, features)
        if language is not None:
            language.save(root / "meta")  # names the embedder for `tether train`
        save_drafted(root / "meta", any(c.draft for c in config.cameras))
    (root / "meta" / RECIPE).write_text(json.dumps(config.recipe(), indent=2) + "\n",
                                        encoding="utf-8")
    before = read_ledger(root)
    seen = {(a.task, a.init_state) for a in before}
    todo = [(t, k) for t, k in schedule(tasks, config.first_init_state, config.init_states)
            if (t.id, k) not in seen]
    held = json.loads((root / "meta" / "info.json").read_text(encoding="utf-8"))["total_episodes"]
    ledger = (root / "meta" / LEDGER).open("w", encoding="utf-8")  # rewritten without stale lines
    for attempt in before:
        ledger.write(json.dumps(asdict(attempt)) + "\n")
    ledger.flush()
    start, made = time.perf_counter(), []
    # each task's reference solution, written once (or why it has none, found once)
    trees: dict[str, Path | TetherError] = {}
    scenes = SceneCache(size=1)
    try:
        with tempfile.TemporaryDirectory(prefix="tether-demos-") as runs:
            for n, (task, state) in enumerate(todo, 1):
                t0 = time.perf_counter()
                session = SessionConfig(task.id, seed=config.seed, init_state=state,
                                        budget=config.budget, runs=Path(runs), record=False,
                                        memory="none")
                try:
                    if config.tree is None and task.id not in trees:
                        try:
                            trees[task.id] = reference_tree(task, Path(runs))
                        except TetherError as exc:  # no skill: each attempt fails with it
                            trees[task.id] = exc
                    tree = config.tree or trees[task.id]
                    if isinstance(tree, TetherError):
                        raise tree
                    result = run(RunConfig(tree, session), scenes=scenes,
                                 observers=(rollout.start,)).result
                    attempt = Attempt(task.id, state, bool(result.success), result.steps,
                                      round(time.perf_counter() - t0, 1),
                                      held if result.success else None,
                                      [str(e.get("code")) for e in result.errors])
                except TetherError as exc:  # e.g. a goal the tree does not bind: a failure
                    attempt = Attempt(task.id, state, False, 0,
                                      round(time.perf_counter() - t0, 1), None, [str(exc)])
                ledger.write(json.dumps(asdict(attempt)) + "\n")
                ledger.flush()
                if attempt.success:
                    append_episode(root, rollout.frames, True, features)
                    held += 1
                made.append(attempt)
                if progress:
                    progress(attempt, n, len(todo))
    finally:
        ledger.close()
        scenes.close()
    info = json.loads((root / "meta" / "info.json").read_text(encoding="utf-8"))
    return DemoReport(str(root), info["total_episodes"], info["total_frames"], made, len(before),
                      round(time.perf_counter() - start, 1))


def merge_demos(out: Path, parts: Sequence[Path]) -> int:
    """Merge demonstrations recorded in parts (`tether collect --tree` in several processes,
    e.g. `--first-init-state 0` and `20`) into the new dataset `out`: lerobot's `merge_datasets`
    for the episodes, the parts' recipe and meta files (which must agree), and their ledgers one
    after another, each kept episode's index offset by the episodes of the parts before it, so
    `out` resumes and trains like a dataset recorded in one go. Returns its episode count."""
    from lerobot.datasets.dataset_tools import merge_datasets
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from tether.models.language import FILE as LANGUAGE
    from tether.models.observation import FRAMES

    if len(parts) < 2:
        raise TetherError("give at least two datasets to merge")
    if out.exists():
        raise TetherError(f"{out} exists; give the merged dataset a new folder")
    for part in parts:
        if not (part / "meta" / RECIPE).is_file():
            raise TetherError(f"{part} is not a dataset recorded by `tether collect --tree` "
                              f"(no meta/{RECIPE})")
    metas = {}
    for name in (RECIPE, LANGUAGE, FRAMES):
        texts = [(p / "meta" / name).read_text(encoding="utf-8")
                 if (p / "meta" / name).is_file() else None for p in parts]
        odd = next((p for p, t in zip(parts, texts, strict=True) if t != texts[0]), None)
        if odd is not None:
            raise TetherError(f"{odd} was recorded with other settings than {parts[0]} "
                              f"(meta/{name} differs); only parts of one recipe merge")
        metas[name] = texts[0]
    ledger, offset, seen = [], 0, {}
    for part in parts:
        for attempt in read_ledger(part):
            if (attempt.task, attempt.init_state) in seen:
                raise TetherError(f"{attempt.task} init state {attempt.init_state} is in both "
                                  f"{seen[attempt.task, attempt.init_state]} and {part}")
            seen[attempt.task, attempt.init_state] = part
            if attempt.episode is not None:
                attempt.episode += offset
            ledger.append(attempt)
        info = json.loads((part / "meta" / "info.json").read_text(encoding="utf-8"))
        offset += info["total_episodes"]
    merge_datasets([LeRobotDataset(f"tether/{p.name}", root=p) for p in parts],
                   output_repo_id=f"tether/{out.name}", output_dir=out,
                   concatenate_data=False)  # packing re-reads the growing shard per file
    for name, text in metas.items():
        if text is not None:
            (out / "meta" / name).write_text(text, encoding="utf-8")
    (out / "meta" / LEDGER).write_text(
        "".join(json.dumps(asdict(a)) + "\n" for a in ledger), encoding="utf-8")
    return offset
