"""Suite files: tasks x perturbations x seeds x arms, read into an ordered list of episodes.

A suite is YAML (docs/bench.md):

    suite: smoke
    budget: 600            # step budget of every episode (an arm may override it); without
                           # it, each task's step cap (LIBERO's per suite, `Task.max_steps`)
    until_goal: true       # an episode ends at the first step its task's goal holds (LIBERO's
                           # evaluation protocol); default false: when its tree finishes
    timeout: 300           # wall seconds before an episode is killed and recorded as an error
    tasks: [libero_goal/put_the_bowl_on_the_plate, libero_goal_swap, libero_*_lan]
    seeds: 2               # 0..N-1, or an explicit list
    perturbations:         # name -> list of specs (KIND[:k=v,...]); `none: []` is unperturbed
      none: []
      pose_noise: [pose_noise]
    arms:                  # name -> a way of solving the tasks
      analytic: {tree: pick_place, memory: none}
      planned: {plan: memory}          # the task's instruction planned per episode
      camera: {plan: memory, perception: camera}   # leaves see through the cameras only
      pi05: {tree: vla_task, with: {policy: pi05}, tasks: [libero_goal*]}  # only these
    policies:              # optional: named for every episode (`tether.models.policies`)
      pi05: ws://gpu-box:8000            # a SPEC, or {type: lerobot|openpi|scripted, ...}
    headline: {arm: analytic, baseline: other}   # optional: the comparison the report leads with

A task entry without `/` names a whole suite or LIBERO-PRO set (all its tasks, in order) or is
a glob over their names (`libero_*_swap`); `SUITE/GLOB` picks tasks of one suite by name.
An arm's `tree` (and each of its `requires`) is a path relative to the suite's root (the working
directory), or the name of a library tree (`pick_place` is trees/library/pick_place.yaml), so the
shipped suites run from an installed copy as from the checkout. An arm with `plan: PLANNER`
instead of `tree` plans each episode's task instruction in its scene with that offline planner
(`tether.planning.planners.PLANNERS`, what `tether do` does). An arm's `perception` (default
`privileged`) is what its report header says; an arm with `needs: WHAT` is declared but not run,
and the report prints it as "not run (needs WHAT)". `published` lists others' numbers the report
prints beside the suite's, each with its source. An arm's `memory` is `none`
(off), `fresh` (a new store per episode) or `persistent` (one store per arm that every episode
of the arm reads and consolidates into, in suite order). An arm whose `requires` do not exist yet
(a policy checkpoint, say) is skipped with a message. The `policies:` reach every episode's
worker (`Episode.policies`); a SPEC's lerobot policy runs on `load_suite`'s `device` (the CLI's
`--device`) unless it names one. Every problem is reported at once, located
as `file:line:column: key: message`.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import TetherError, data_problem, did_you_mean
from tether.models.policies import Entry, check_name, entry_of, needs_gpu
from tether.session.session import DEFAULT_BUDGET
from tether.trees.compiler import LIBRARY
from tether.trees.source import TreeError, Where, load_source
from tether.trees.values import plain

if TYPE_CHECKING:
    from tether.scenes.catalogue import Task

SUITES_DIR = Path(__file__).resolve().parent / "suites"
MEMORY_MODES = ("none", "fresh", "persistent")
TOP_KEYS = {"suite", "doc", "budget", "timeout", "tasks", "seeds", "perturbations", "arms",
            "headline", "published", "policies", "until_goal"}
ARM_KEYS = {"tree", "plan", "with", "memory", "budget", "requires", "perception", "needs", "tasks",
            "doc", "grasp"}
PUBLISHED_KEYS = {"system", "cells", "rate", "source"}
# What an arm's leaves read object state from (docs/perception.md, `tether.blackboard.world`).
PERCEPTION_MODES = ("privileged", "camera")


@dataclass(frozen=True)
class Arm:
    """A way of solving the suite's tasks: a tree, its bound params and a memory mode."""

    name: str
    tree: str  # as the suite names it (reports show this); "" for a planning arm
    given: dict[str, Any] = field(default_factory=dict)
    memory: str = "none"
    budget: int | None = None
    requires: tuple[str, ...] = ()
    file: Path | None = None  # the tree file `tree` names; None when it does not exist
    plan: str | None = None  # the planner that plans each episode's instruction (no `tree`)
    perception: str = "privileged"
    needs: str | None = None  # what the arm waits for; such an arm is declared, not run
    tasks: tuple[str, ...] = ()  # globs over task ids and set names; () runs every task
    grasp: dict[str, Any] | None = None  # a planning arm's grasps by a policy: `vla_grasp` params

    def solver(self, quote: str = "") -> str:
        """What solves the arm's tasks, for rows and reports: its tree, or `planned by PLANNER`
        (`, grasps by POLICY`); names between `quote`s."""
        if self.tree:
            return f"{quote}{self.tree}{quote}"
        grasps = f", grasps by {quote}{self.grasp['policy']}{quote}" if self.grasp else ""
        return f"planned by {quote}{self.plan}{quote}{grasps}"

    def runs(self, task: str) -> bool:
        """Whether the arm runs `task` (`SUITE/TASK`): its `tasks` globs match the task's id or
        its suite or set name (a policy trained on one suite runs only that suite's cells)."""
        return not self.tasks or matches(task, self.tasks)

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
class Published:
    """A number someone else published, printed beside the suite's own (never compared)."""

    system: str
    cells: str  # which of their cells the number covers
    rate: float  # percent
    source: str


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
    until_goal: bool = False  # ends at the first step the task's goal holds (LIBERO's protocol)

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
    budget: int | None  # None: each task's step cap
    timeout: float
    skipped: dict[str, str] = field(default_factory=dict)  # arm name -> why it does not run
    headline: tuple[str, str] | None = None  # (arm, baseline arm) the report compares first
    caps: dict[str, int | None] = field(default_factory=dict)  # task -> its step cap
    published: tuple[Published, ...] = ()
    policies: dict[str, Entry] = field(default_factory=dict)  # named for every episode
    until_goal: bool = False  # every episode ends at the first step its task's goal holds

    def budget_of(self, arm: Arm, task: str) -> int:
        """An episode's step budget: the arm's, else the suite's, else the task's step cap,
        else tether's default (`DEFAULT_BUDGET`)."""
        return arm.budget or self.budget or self.caps.get(task) or DEFAULT_BUDGET

    def select(self, tasks: list[str] | None = None, arms: list[str] | None = None,
               perturbations: list[str] | None = None) -> Suite:
        """The suite restricted to the tasks whose id (`SUITE/TASK`) or suite/set name matches
        one of the globs `tasks`, to the arms named in `arms` (the others are skipped, so
        reports still list them) and to the perturbation conditions whose name matches one of
        the globs `perturbations` (`tether bench --tasks --arms --perturbations`); None keeps
        all."""
        from dataclasses import replace

        kept = tuple(t for t in self.tasks if tasks is None or matches(t, tasks))
        if not kept:
            raise TetherError(f"--tasks {' '.join(tasks or ())} matches none of the tasks of "
                              f"suite '{self.name}' ({len(self.tasks)} tasks)")
        conditions = {name: specs for name, specs in self.perturbations.items()
                      if perturbations is None
                      or any(fnmatch.fnmatch(name, p) for p in perturbations)}
        if not conditions:
            raise TetherError(f"--perturbations {' '.join(perturbations or ())} matches none of "
                              f"the perturbations of suite '{self.name}' "
                              f"({', '.join(self.perturbations)})")
        names = [a.name for a in self.arms]
        for name in arms or ():
            if name not in names:
                raise TetherError(f"suite '{self.name}' has no arm '{name}'"
                                  f"{did_you_mean(name, names)}")
        left = {a.name for a in self.arms if arms is None or a.name in arms}
        skipped = {**{a: f"arm '{a}' not selected (--arms)" for a in names if a not in left},
                   **self.skipped}
        return replace(self, tasks=kept, perturbations=conditions, skipped=skipped,
                       headline=self.headline if set(self.headline or ()) <= left else None)

    def episodes(self) -> list[Episode]:
        """Every episode, in a fixed order: arm, task, perturbation, seed."""
        return [Episode(arm, task, pname, specs, seed, self.budget_of(arm, task), self.timeout,
                        self.policies, self.until_goal)
                for arm in self.arms if arm.name not in self.skipped
                for task in self.tasks if arm.runs(task)
                for pname, specs in self.perturbations.items() for seed in self.seeds]


def matches(task: str, globs: tuple[str, ...] | list[str]) -> bool:
    """Whether one of `globs` matches the task id (`SUITE/TASK`) or its suite or set name."""
    return any(fnmatch.fnmatch(task, p) or fnmatch.fnmatch(task.partition("/")[0], p)
               for p in globs)


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


def expand_tasks(entry: str) -> list[Task]:
    """The tasks a suite's `tasks` entry names: `SUITE/TASK` (or `SUITE/INDEX`, a file), a
    suite or LIBERO-PRO set (all its tasks), a glob over those names (`libero_*_swap`), or
    `SUITE/GLOB` over one suite's task names."""
    from tether.scenes import catalogue

    suite, sep, rest = entry.partition("/")
    if not sep and not entry.endswith(".bddl"):
        names = catalogue.ALL_SUITES + catalogue.pro_sets()
        matched = fnmatch.filter(names, entry) if _is_glob(entry) else [entry]
        if not matched:
            raise TetherError(f"no suite or set matches '{entry}'")
        return [t for name in matched for t in catalogue.suite_tasks(name)]
    if sep and _is_glob(rest):
        tasks = [t for t in catalogue.suite_tasks(suite) if fnmatch.fnmatch(t.name, rest)]
        if not tasks:
            raise TetherError(f"no task of '{suite}' matches '{rest}'")
        return tasks
    return [catalogue.get_task(entry)]


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _check_tasks(where: Where, entry: Any, problems: list[str]) -> list[Task]:
    if not isinstance(entry, str):
        problems.append(where.error(f"expected a task, suite or set name, got {entry!r}"))
        return []
    try:
        return expand_tasks(entry)
    except TetherError as exc:
        problems.append(where.error(str(exc)))
        return []


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


def _arm(where: Where, name: str, spec: Any, root: Path, task_ids: list[str],
         problems: list[str]) -> Arm | None:
    if not isinstance(spec, dict):
        problems.append(where.error("expected a mapping with 'tree' or 'plan'"))
        return None
    _unknown(where, spec, ARM_KEYS, problems)
    if ("tree" in spec) == ("plan" in spec):
        problems.append(where.error("expected exactly one of 'tree' (a tree file) and 'plan' "
                                    "(a planner that plans each episode)"))
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
        given = {}
    requires = spec.get("requires", [])
    if not isinstance(requires, list):
        problems.append(where.of_key(spec, "requires").error("expected a list of paths"))
        requires = []
    budget = spec.get("budget")
    if budget is not None:
        budget = _positive_int(where.of_key(spec, "budget"), budget, problems)
    plan = _planner(where, spec, problems)
    perception = spec.get("perception", PERCEPTION_MODES[0])
    needs = spec.get("needs")
    if perception not in PERCEPTION_MODES:
        problems.append(where.of_key(spec, "perception").error(
            f"expected one of {', '.join(PERCEPTION_MODES)}, got {perception!r}"))
    if needs is not None and (not isinstance(needs, str) or not needs.strip()):
        problems.append(where.of_key(spec, "needs").error(f"expected a text, got {needs!r}"))
    tasks = spec.get("tasks", [])
    if not (isinstance(tasks, list) and all(isinstance(t, str) and t for t in tasks)):
        problems.append(where.of_key(spec, "tasks").error(
            f"expected a list of task globs (libero_object_*), got {tasks!r}"))
        tasks = []
    tree = str(spec.get("tree", ""))
    file = locate(tree, root) if tree else None
    arm = Arm(name, tree, plain(given), str(memory), budget,
              tuple(str(r) for r in requires), file if file and file.is_file() else None,
              plan, str(perception), None if needs is None else str(needs), tuple(tasks),
              _grasp(where, spec, problems))
    if tree and not arm.missing(root) and arm.file is None:
        library = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
        problems.append(where.of_key(spec, "tree").error(
            f"no tree file {tree} here or in the library" + did_you_mean(tree, library)))
    if arm.tasks and task_ids and not any(arm.runs(t) for t in task_ids):
        problems.append(where.of_key(spec, "tasks").error(
            f"matches none of the suite's {len(task_ids)} tasks"))
    return arm


def _grasp(where: Where, spec: dict, problems: list[str]) -> dict[str, Any] | None:
    """A planning arm's `grasp`: the params of `vla_grasp` its plans' grasps are done with
    (`{policy: NAME, unstaged: N}`), so the arm is a harness around a learned policy."""
    if "grasp" not in spec:
        return None
    at, grasp = where.of_key(spec, "grasp"), spec["grasp"]
    if "plan" not in spec:
        problems.append(at.error("only a planning arm ('plan') has grasps to hand to a policy"))
    elif not isinstance(grasp, dict) or not isinstance(grasp.get("policy"), str):
        problems.append(at.error(f"expected {{policy: NAME, unstaged: STEPS}}, got {grasp!r}"))
    elif (problem := data_problem(grasp)) is not None:
        path, message = problem
        problems.append(at.at(grasp, path).error(message))
    else:
        return plain(grasp)
    return None


def _planner(where: Where, spec: dict, problems: list[str]) -> str | None:
    """The arm's `plan`: the name of an offline planner (`tether.planning.planners.PLANNERS`)."""
    if "plan" not in spec:
        return None
    from tether.planning.planners import PLANNERS

    name = spec["plan"]
    try:
        PLANNERS.get(str(name))
    except TetherError as exc:
        problems.append(where.of_key(spec, "plan").error(str(exc)))
    return str(name)


def _published(where: Where, data: dict, problems: list[str]) -> tuple[Published, ...]:
    """`published: [{system, cells, rate, source}, ...]`: others' numbers, with their source."""
    at, items = where.of_key(data, "published"), data.get("published", [])
    if not isinstance(items, list):
        problems.append(at.error("expected a list of {system, cells, rate, source}"))
        return ()
    out = []
    for i, item in enumerate(items):
        item_at = at.of_item(items, i)
        if not isinstance(item, dict) or set(item) != PUBLISHED_KEYS:
            problems.append(item_at.error("expected {system, cells, rate, source}"))
            continue
        rate = item["rate"]
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 100:
            problems.append(item_at.of_key(item, "rate").error(
                f"expected a percentage in 0..100, got {rate!r}"))
            continue
        out.append(Published(str(item["system"]), str(item["cells"]), float(rate),
                             str(item["source"])))
    return tuple(out)


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
    budget = (_positive_int(where.of_key(data, "budget"), data["budget"], problems)
              if "budget" in data else None)
    timeout = _positive_int(where.of_key(data, "timeout"), data.get("timeout", 600), problems)
    tasks_at = where.of_key(data, "tasks")
    tasks = data.get("tasks", [])
    if not isinstance(tasks, list) or not tasks:
        problems.append(tasks_at.error("expected a non-empty list of tasks"))
        tasks = []
    found = [t for i, entry in enumerate(tasks)
             for t in _check_tasks(tasks_at.of_item(tasks, i), entry, problems)]
    caps = {t.id: t.max_steps for t in found}
    task_ids = list(caps)  # in order, each task once
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
    arms = [_arm(arms_at.of_key(arm_specs, n), str(n), s, root, task_ids, problems)
            for n, s in arm_specs.items()]
    headline = _headline(where, data, [str(n) for n in arm_specs], problems)
    published = _published(where, data, problems)
    policies = _policies(where, data, device, problems)
    until_goal = data.get("until_goal", False)
    if not isinstance(until_goal, bool):
        problems.append(where.of_key(data, "until_goal").error(
            f"expected true or false, got {until_goal!r}"))
    if problems:
        raise TreeError(problems)
    valid = tuple(a for a in arms if a is not None)
    skipped = {a.name: f"arm '{a.name}' not run (needs {a.needs})" for a in valid if a.needs}
    skipped.update({a.name: f"arm '{a.name}' skipped: {', '.join(a.missing(root))} does not "
                    "exist yet" for a in valid if a.missing(root) and not a.needs})
    return Suite(str(data["suite"]), str(path), valid, tuple(task_ids), perturbations,
                 tuple(seeds), budget, float(timeout), skipped, headline, caps, published,
                 policies, bool(until_goal))


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
