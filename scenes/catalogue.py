"""The task catalogue: LIBERO's four standard suites; a task is `SUITE/TASK_NAME` or `SUITE/INDEX`.

A task is one BDDL problem with its language instruction and 50 recorded initial states. The
catalogue reads LIBERO's own benchmark registry (`libero.libero.benchmark.get_benchmark_dict()`),
so names, order and files are exactly LIBERO's; tether never renames a task.

    task = get_task("libero_goal/put_the_bowl_on_the_plate")   # or "libero_goal/8"
    task.bddl_file, task.language, task.init_states()[0]
    for t in list_tasks(): print(t.id)                         # `tether tasks`

A name may also be written with spaces or in another case ("libero_goal/put the bowl on the
plate"). Anything else raises `TetherError` with a "did you mean".
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scenes.errors import TetherError, did_you_mean

SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")


@dataclass(frozen=True)
class Task:
    """One LIBERO task: where it sits in its suite and the files that define it."""

    suite: str
    index: int
    name: str
    language: str
    bddl_file: Path
    init_states_file: Path

    @property
    def id(self) -> str:
        """The canonical address, `SUITE/TASK_NAME`."""
        return f"{self.suite}/{self.name}"

    def init_states(self) -> np.ndarray:
        """The recorded initial MuJoCo states, one flattened state per row (50 per task)."""
        import torch

        return np.asarray(torch.load(self.init_states_file, weights_only=False))


@functools.cache
def suite_tasks(suite: str) -> tuple[Task, ...]:
    """The tasks of one suite, in LIBERO's order (task order 0)."""
    if suite not in SUITES:
        raise TetherError(f"unknown suite '{suite}'{did_you_mean(suite, SUITES)}; "
                          f"suites are {', '.join(SUITES)}")
    from scenes.libero_setup import import_libero

    LL = import_libero()
    from libero.libero import benchmark

    with contextlib.redirect_stdout(io.StringIO()):  # it prints "[info] using task orders ..."
        bench = benchmark.get_benchmark_dict()[suite]()
    bddl_root = Path(LL.get_libero_path("bddl_files"))
    init_root = Path(LL.get_libero_path("init_states"))
    return tuple(
        Task(
            suite=suite,
            index=i,
            name=t.name,
            language=t.language,
            bddl_file=bddl_root / t.problem_folder / t.bddl_file,
            init_states_file=init_root / t.problem_folder / t.init_states_file,
        )
        for i, t in enumerate(bench.get_task(i) for i in range(bench.get_num_tasks()))
    )


def list_tasks(suites: Iterable[str] = SUITES) -> list[Task]:
    """Every task of `suites`, suite by suite."""
    return [task for suite in suites for task in suite_tasks(suite)]


def _normalise(name: str) -> str:
    return "_".join(name.strip().lower().replace("-", " ").replace("_", " ").split())


def get_task(spec: str) -> Task:
    """The task addressed by `SUITE/TASK_NAME` or `SUITE/INDEX`."""
    suite, sep, rest = spec.strip().partition("/")
    if not sep or not rest:
        raise TetherError(
            f"task '{spec}' is not SUITE/TASK_NAME or SUITE/INDEX (e.g. 'libero_goal/8')"
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
        f"suite '{suite}' has no task '{rest}'{hint}; `tether tasks` lists them"
    )
