"""Suite files: tasks x perturbations x seeds x arms, read into an ordered list of episodes.

A suite is YAML (docs/bench.md):

    suite: smoke
    budget: 600            # step budget of every episode (an arm may override it)
    timeout: 300           # wall seconds before an episode is killed and recorded as an error
    tasks: [libero_goal/put_the_bowl_on_the_plate]
    seeds: 2               # 0..N-1, or an explicit list
    perturbations:         # name -> list of specs (KIND[:k=v,...]); `none: []` is unperturbed
      none: []
      pose_noise: [pose_noise]
    arms:                  # name -> a way of solving the tasks
      analytic: {tree: pick_place, memory: none}
      pi05: {tree: vla_bare, with: {policy: pi05}}
    policies:              # optional: named for every episode (`tether.models.policies`)
      pi05: ws://gpu-box:8000            # a SPEC, or {type: lerobot|openpi|scripted, ...}
    headline: {arm: analytic, baseline: other}   # optional: the comparison the report leads with

An arm's `tree` (and each of its `requires`) is a path relative to the suite's root (the working
directory), or the name of a library tree (`pick_place` is trees/library/pick_place.yaml), so the
shipped suites run from an installed copy as from the checkout. An arm's `memory` is `none`
(off), `fresh` (a new store per episode) or `persistent` (one store per arm that every episode
of the arm reads and consolidates into, in suite order). An arm whose `requires` do not exist yet
(a policy checkpoint, say) is skipped with a message. The `policies:` reach every episode's
worker (`Episode.policies`); a SPEC's lerobot policy runs on `load_suite`'s `device` (the CLI's
`--device`) unless it names one. Every problem is reported at once, located
as `file:line:column: key: message`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.errors import TetherError, data_problem, did_you_mean
from tether.models.policies import Entry, check_name, entry_of, needs_gpu
from tether.trees.compiler import LIBRARY
from tether.trees.source import TreeError, Where, load_source

SUITES_DIR = Path(__file__).resolve().parent / "suites"
MEMORY_MODES = ("none", "fresh", "persistent")
TOP_KEYS = {"suite", "doc", "budget", "timeout", "tasks", "seeds", "perturbations", "arms",
            "headline", "policies"}
ARM_KEYS = {"tree", "with", "memory", "budget", "requires", "doc"}


@dataclass(frozen=True)
class Arm:
    """A way of solving the suite's tasks: a tree, its bound params and a memory mode."""

    name: str
    tree: str  # as the suite names it (reports show this)
    given: dict[str, Any] = field(default_factory=dict)
    memory: str = "none"
    budget: int | None = None
    requires: tuple[str, ...] = ()
    file: Path | None = None  # the tree file `tree` names; None when it does not exist

    def missing(self, root: Path) -> list[str]:
        """The `requires` entries that name nothing (see `locate`)."""
        return [p for p in self.requires if locate(p, root) is None]


def locate(ref: str, root: Path) -> Path | None:
    """What a suite's `tree` or `requires` entry names: a path relative to `root`, else a library
    tree by name (`pick_place`) or file name; None when neither exists."""
    for candidate in (root / ref, LIBRARY / ref, LIBRARY / f"{ref}.yaml"):
        if candidate.exists():
            return candidate
    return None


@dataclass(frozen=True)
class Episode:
    """One episode of a suite; `key` names it in every output and decides resumption."""

    arm: Arm
    task: str
    perturbation: str
    perturb: tuple[str, ...]
    seed: int
    budget: int
    timeout: float
    policies: dict[str, Entry] = field(default_factory=dict)  # the suite's, named for the run

    @property
    def gpus(self) -> int:
        """GPUs the episode asks a Ray cluster for: 1 when one of its policies runs on CUDA."""
        return int(needs_gpu(self.policies))

    @property
    def key(self) -> str:
        return f"{self.arm.name}|{self.task}|{self.perturbation}|s{self.seed}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", self.key)[:150]


@dataclass(frozen=True)
class Suite:
    name: str
    path: str
    arms: tuple[Arm, ...]
    tasks: tuple[str, ...]
    perturbations: dict[str, tuple[str, ...]]
    seeds: tuple[int, ...]
    budget: int
    timeout: float
    skipped: dict[str, str] = field(default_factory=dict)  # arm name -> why it does not run
    headline: tuple[str, str] | None = None  # (arm, baseline arm) the report compares first
    policies: dict[str, Entry] = field(default_factory=dict)  # named for every episode

    def episodes(self) -> list[Episode]:
        """Every episode, in a fixed order: arm, task, perturbation, seed."""
        return [Episode(arm, task, pname, specs, seed, arm.budget or self.budget, self.timeout,
                        self.policies)
                for arm in self.arms if arm.name not in self.skipped
                for task in self.tasks for pname, specs in self.perturbations.items()
                for seed in self.seeds]


def resolve_suite(name_or_path: str | Path) -> Path:
    """A suite file: a path, or the name of a shipped suite (tether/bench/suites/NAME.yaml)."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    shipped = SUITES_DIR / f"{name_or_path}.yaml"
    if shipped.is_file():
        return shipped
    names = sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))
    close = difflib.get_close_matches(str(name_or_path), names, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f" (shipped: {', '.join(names)})"
    raise TetherError(f"no suite '{name_or_path}'{hint}")


def _unknown(where: Where, mapping: Any, allowed: set[str], problems: list[str]) -> None:
    for key in mapping:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            problems.append(where.of_key(mapping, key).error(f"unknown key{hint}"))


def _positive_int(where: Where, value: Any, problems: list[str]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        problems.append(where.error(f"expected a positive integer, got {value!r}"))
        return 1
    return value


def _check_task(where: Where, task: Any, problems: list[str]) -> str:
    from tether.scenes.catalogue import get_task

    if not isinstance(task, str):
        problems.append(where.error(f"expected a task name, got {task!r}"))
        return ""
    try:
        return get_task(task).id
    except TetherError as exc:
        problems.append(where.error(str(exc)))
        return task


def _check_specs(where: Where, specs: Any, problems: list[str]) -> tuple[str, ...]:
    from tether.scenes.perturbations import build

    if not isinstance(specs, list):
        problems.append(where.error("expected a list of perturbation specs (KIND[:k=v,...])"))
        return ()
    for i, spec in enumerate(specs):
        try:
            build(str(spec))
        except TetherError as exc:
            problems.append(where.of_item(specs, i).error(str(exc)))
    return tuple(str(s) for s in specs)


def _arm(where: Where, name: str, spec: Any, root: Path, problems: list[str]) -> Arm | None:
    if not isinstance(spec, dict):
        problems.append(where.error("expected a mapping with at least 'tree'"))
        return None
    _unknown(where, spec, ARM_KEYS, problems)
    if "tree" not in spec:
        problems.append(where.error("missing 'tree'"))
        return None
    memory = spec.get("memory", "none")
    if memory not in MEMORY_MODES:
        problems.append(where.of_key(spec, "memory").error(
            f"expected one of {', '.join(MEMORY_MODES)}, got {memory!r}"))
    given = spec.get("with", {})
    if not isinstance(given, dict):
        problems.append(where.of_key(spec, "with").error("expected a mapping of params"))
        given = {}
    if (problem := data_problem(given)) is not None:
        path, message = problem
        problems.append(where.of_key(spec, "with").at(given, path).error(message))
    requires = spec.get("requires", [])
    if not isinstance(requires, list):
        problems.append(where.of_key(spec, "requires").error("expected a list of paths"))
        requires = []
    budget = spec.get("budget")
    if budget is not None:
        budget = _positive_int(where.of_key(spec, "budget"), budget, problems)
    tree = str(spec["tree"])
    file = locate(tree, root)
    arm = Arm(name, tree, {str(k): v for k, v in given.items()}, str(memory), budget,
              tuple(str(r) for r in requires), file if file and file.is_file() else None)
    if not arm.missing(root) and arm.file is None:
        library = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
        problems.append(where.of_key(spec, "tree").error(
            f"no tree file {tree} here or in the library" + did_you_mean(tree, library)))
    return arm


def load_suite(name_or_path: str | Path, root: Path | None = None, *,
               device: str | None = None) -> Suite:
    """Read and validate a suite; paths in it are relative to `root` (default: the cwd); the
    lerobot policies of its `policies:` run on `device` unless they name one."""
    root = root or Path.cwd()
    path = resolve_suite(name_or_path)
    data, where = load_source(path)
    problems: list[str] = []
    if not isinstance(data, dict):
        raise TreeError([where.error("a suite file is a mapping with 'suite', 'tasks', 'arms'")])
    _unknown(where, data, TOP_KEYS, problems)
    for key in ("suite", "tasks", "arms"):
        if key not in data:
            problems.append(where.error(f"missing '{key}'"))
    budget = _positive_int(where.of_key(data, "budget"), data.get("budget", 1000), problems)
    timeout = _positive_int(where.of_key(data, "timeout"), data.get("timeout", 600), problems)
    tasks_at = where.of_key(data, "tasks")
    tasks = data.get("tasks", [])
    if not isinstance(tasks, list) or not tasks:
        problems.append(tasks_at.error("expected a non-empty list of tasks"))
        tasks = []
    task_ids = [_check_task(tasks_at.of_item(tasks, i), t, problems) for i, t in enumerate(tasks)]
    seeds_at = where.of_key(data, "seeds")
    seeds = data.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = list(range(_positive_int(seeds_at, seeds, problems)))
    elif not (isinstance(seeds, list) and seeds
              and all(isinstance(s, int) and s >= 0 for s in seeds)):
        problems.append(seeds_at.error("expected a count or a list of non-negative integers"))
        seeds = []
    pert_at = where.of_key(data, "perturbations")
    perts = data.get("perturbations", {"none": []})
    if not isinstance(perts, dict) or not perts:
        problems.append(pert_at.error("expected a mapping of name -> list of specs"))
        perts = {}
    perturbations = {str(n): _check_specs(pert_at.of_key(perts, n), s, problems)
                     for n, s in perts.items()}
    arms_at = where.of_key(data, "arms")
    arm_specs = data.get("arms", {})
    if not isinstance(arm_specs, dict) or not arm_specs:
        problems.append(arms_at.error("expected a mapping of arm name -> arm"))
        arm_specs = {}
    arms = [_arm(arms_at.of_key(arm_specs, n), str(n), s, root, problems)
            for n, s in arm_specs.items()]
    headline = _headline(where, data, [str(n) for n in arm_specs], problems)
    policies = _policies(where, data, device, problems)
    if problems:
        raise TreeError(problems)
    valid = tuple(a for a in arms if a is not None)
    skipped = {a.name: f"arm '{a.name}' skipped: {', '.join(a.missing(root))} does not exist yet"
               for a in valid if a.missing(root)}
    return Suite(str(data["suite"]), str(path), valid, tuple(task_ids), perturbations,
                 tuple(seeds), budget, float(timeout), skipped, headline, policies)


def _policies(where: Where, data: dict, device: str | None,
              problems: list[str]) -> dict[str, Entry]:
    """`policies: {NAME: SPEC or {type: TYPE, ...}}`, each problem located at its name."""
    if "policies" not in data:
        return {}
    at, spec = where.of_key(data, "policies"), data["policies"]
    if not isinstance(spec, dict):
        problems.append(at.error("expected a mapping of policy names to SPECs or {type: ...}"))
        return {}
    found = {}
    for name, body in spec.items():
        try:
            found[check_name(name, "")] = entry_of(body, device=device, where="")
        except TetherError as exc:
            problems.append(at.of_key(spec, name).error(str(exc)))
    return found


def _headline(where: Where, data: dict, arms: list[str],
              problems: list[str]) -> tuple[str, str] | None:
    """`headline: {arm: A, baseline: B}`, two of the suite's arms, or None when absent."""
    if "headline" not in data:
        return None
    at, spec = where.of_key(data, "headline"), data["headline"]
    if not isinstance(spec, dict) or set(spec) != {"arm", "baseline"}:
        problems.append(at.error("expected {arm: ARM, baseline: ARM}"))
        return None
    for key in ("arm", "baseline"):
        if spec[key] not in arms:
            problems.append(at.of_key(spec, key).error(
                f"no arm '{spec[key]}' (arms: {', '.join(arms)})"))
    return str(spec["arm"]), str(spec["baseline"])
