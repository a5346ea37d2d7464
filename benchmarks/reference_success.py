"""Is every task solvable? A scripted reference solution per task, run over its init states.

    python benchmarks/reference_success.py                          # all 40 LIBERO tasks + tether's
    python benchmarks/reference_success.py --tasks libero_object libero_goal/7 --init-states 3
    python benchmarks/reference_success.py --out docs/results/reference_success.md

The reference solution of a task is built from its BDDL goal and its scene: each goal literal is
achieved by the library tree the planner's own rule picks (`tether.planning.skills.skill_for`,
from the geometry and joints of the literal's entities in the scene at init state 0, never their
names), its parameters bound from the literal (`from_goal`), and a goal of several literals is
those trees in sequence, in the goal's order except that `turn_on`/`turn_off` literals come first
(a stove's knob is beside its cook region: the hand pushing it, 20 cm long, would sweep what
stands there), `close` literals last (a drawer or door must stay open while something is put in
it), and `in(X, R)` is preceded by `open(R)` when R moves on a joint and the task does not start
with it open; X is then first set on that fixture's top (`on(X, <fixture>_top_side)`, when the
task has the region): the opened drawer overhangs the table in front, where X may stand, out of
reach from above. X is set down in a drawer `DRAWER_FRONT` m toward its front (its slide's
opening direction) from the region's middle: the cabinet above overhangs the region's back. An
object that starts in a drawer comes over its target up to `CROSS` m higher than `place`'s carry
height (`cross`), clearing the drawer's walls. Trees acting on a joint read its axis from the
model themselves (`at: joint`), so a turned cabinet needs no parameters.
Objects put `on` one target stand side by side (`pick_place`'s `spot_x`): the first `SPREAD` m
before its middle along x (nearer the robot), the last as far beyond it. The trees are analytic
primitives on the poses `--perception` gives (privileged: the simulator's; camera: the camera
world model, docs/perception.md). Each episode is a full `tether run` of that tree (no camera
frames, no long-term memory) with a step budget of `--budget` per literal; success is LIBERO's
own goal test. A task with a predicate no tree achieves is listed as "no skill", not run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from tether.errors import TetherError  # noqa: E402
from tether.planning.skills import Goal, Parts, parts_of, skill_for  # noqa: E402
from tether.scenes.bddl import read_problem  # noqa: E402
from tether.scenes.catalogue import ALL_SUITES, get_task, suite_tasks  # noqa: E402
from tether.scenes.joints import SLIDE  # noqa: E402
from tether.scenes.libero_scene import _TETHER_PREDICATE  # noqa: E402
from tether.trees.compiler import LIBRARY, read_tree_file  # noqa: E402

FIRST = ("turn_on", "turn_off")  # predicates achieved before all others
LAST = ("close",)  # predicates achieved after all others
BUDGET = 1000  # steps per goal literal
SPREAD = 0.05  # objects sharing an `on` target are set down up to this far from its middle (m)
DRAWER_FRONT = 0.03  # an object put in a drawer goes this far toward its front from its middle (m)
CROSS = 0.15  # an object lifted out of a drawer comes over its target up to this much higher (m)


@dataclass(frozen=True)
class Reference:
    task: str
    goal: tuple[tuple[str, ...], ...]  # in the order the steps achieve it
    trees: tuple[str, ...]
    missing: tuple[str, ...]  # predicates without a tree
    # per step: the direction (x, y) its drawer comes out, for `in` a drawer; else None
    fronts: tuple[tuple[float, float] | None, ...] = ()
    in_drawer: tuple[bool, ...] = ()  # per step: whether its object starts in a drawer

    def document(self) -> dict:
        """The reference tree: one library subtree per goal literal, in sequence."""
        steps = []
        shared = Counter(lit[2] for lit in self.goal if lit[0] == "on")
        placed: Counter[str] = Counter()
        fronts = self.fronts or (None,) * len(self.goal)
        in_drawer = self.in_drawer or (False,) * len(self.goal)
        for literal, name, front, from_drawer in zip(self.goal, self.trees, fronts, in_drawer,
                                                     strict=True):
            params = read_tree_file(LIBRARY / f"{name}.yaml").params.values()
            bound = {p.name: literal[p.from_goal] for p in params
                     if p.from_goal is not None and p.from_goal < len(literal)}
            if name == "pick_place" and literal[0] == "on" and shared[literal[2]] > 1:
                i, k = placed[literal[2]], shared[literal[2]]
                bound["spot_x"] = SPREAD * (2 * i / (k - 1) - 1)
                placed[literal[2]] += 1
            if name == "pick_place" and front is not None:
                bound |= {f"spot_{axis}": round(DRAWER_FRONT * v, 6) + 0.0  # no -0.0
                          for axis, v in zip("xy", front, strict=True) if round(v, 6)}
            if name == "pick_place" and from_drawer:
                bound["cross"] = CROSS
            steps.append({"subtree": name, "name": f"{literal[0]}({', '.join(literal[1:])})",
                          "with": bound})
        return {"tree": "reference", "doc": f"reference solution of {self.task}",
                "root": {"sequence": {"name": "reference solution", "children": steps}}}


def goal_of(problem, parts: Parts) -> tuple[tuple[str, ...], ...]:
    """The goal literals of a task's parsed BDDL `problem`, with tether's predicate names, in
    the order the reference achieves them: knobs first, `close` literals last, and `in(X, R)`
    preceded by `open(R)` when R moves on a joint (`parts`: a drawer) and the task does not start
    with it open, and X set on the fixture's top before anything is opened."""
    goal = [(_TETHER_PREDICATE.get(lit[0], lit[0]), *lit[1:]) for lit in problem.goal]
    opened = {lit[1] for lit in problem.init if lit[0] == "open"}
    clear: list[tuple[str, ...]] = []
    steps: list[tuple[str, ...]] = []
    for lit in goal:
        if lit[0] == "in" and _moves(parts, lit[2]) \
                and not opened & {lit[2], _owner(problem, lit[2])}:
            clear += _clear_of_drawer(problem, lit[1], lit[2])
            if ("open", lit[2]) not in goal:
                steps.append(("open", lit[2]))
        steps.append(lit)
    return tuple(sorted(clear + steps, key=lambda g: (g[0] in LAST) - (g[0] in FIRST)))


def _clear_of_drawer(problem, obj: str, drawer: str) -> list[tuple[str, ...]]:
    """`on(obj, top)` when the drawer's fixture has a top surface region: the object is set there
    before the drawer is opened. The opened drawer overhangs the table in front of its fixture,
    and an object under it cannot be taken from above; the fixture's top is clear of it."""
    top = f"{_owner(problem, drawer)}_top_side"
    return [("on", obj, top)] if top in problem.region_names() else []


def _owner(problem, region: str) -> str | None:
    """The object or fixture a region belongs to (its name is the region's prefix)."""
    every = [*problem.object_names(), *(n for ns in problem.fixtures.values() for n in ns)]
    names = [n for n in every if region.startswith(n + "_")]
    return max(names, key=len) if names else None


def _moves(parts: Parts, region: str) -> bool:
    """Whether `region` moves on a joint of its own (a drawer's region)."""
    return region in parts and parts[region].joint is not None


def _drawer(parts: Parts, region: str) -> bool:
    """Whether `region` moves on a slide (a drawer's region)."""
    return region in parts and parts[region].joint == SLIDE


def scene_parts(task: str) -> dict:
    """The `Part` of every entity of `task` at its init state 0 (`tether.planning.skills`)."""
    import contextlib
    import io

    from tether.scenes.libero_scene import LiberoScene

    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(task, 0)
    try:
        return parts_of(scene)
    finally:
        scene.close()


def reference_for(task: str, parts: Parts | None = None) -> Reference:
    """`task`'s reference solution; `parts` are its scene's (`scene_parts`, read when not
    given)."""
    problem = read_problem(get_task(task).bddl_file)
    parts = scene_parts(task) if parts is None else parts
    goal = goal_of(problem, parts)
    trees, missing = [], []
    for g in goal:
        try:
            trees.append(skill_for(Goal(g[0], tuple(g[1:])), parts))
        except TetherError:
            missing.append(g[0])
    fronts = tuple(parts[g[2]].opening[:2] if g[0] == "in" and _drawer(parts, g[2]) else None
                   for g in goal)
    in_drawer = tuple(any(lit[0].lower() == "in" and lit[1] == g[1] and _drawer(parts, lit[2])
                          for lit in problem.init) for g in goal)
    missing = tuple(dict.fromkeys(missing))
    return Reference(get_task(task).id, goal, () if missing else tuple(trees), missing, fronts,
                     in_drawer)


def run_reference(ref: Reference, init_states: list[int], runs: Path,
                  budget: int = BUDGET, perception: str = "privileged") -> list[dict]:
    """One episode of `ref`'s tree per init state under `perception` (docs/perception.md):
    success, steps, error codes, the simulator reads of camera runs' declared exceptions."""
    if not init_states:
        return []
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig, run
    from tether.session.session import SessionConfig

    path = runs / f"reference-{ref.task.replace('/', '-')}.yaml"
    path.write_text(yaml.safe_dump(ref.document(), sort_keys=False))
    rows = []
    for k in init_states:
        rec = run(RunConfig(path, SessionConfig(
            ref.task, seed=k, init_state=k, runs=runs, frames=FrameSettings(), memory="none",
            record=False, budget=budget * len(ref.goal), perception=perception)))
        r = rec.result
        rows.append({"task": ref.task, "init_state": k, "success": bool(r.success),
                     "steps": r.steps, "errors": [e["code"] for e in r.errors],
                     "wall": rec.wall_seconds, "perception": perception,
                     "privileged_reads": rec.privileged_reads})
    return rows


def markdown(refs: list[Reference], rows: list[dict], n: int) -> str:
    """A summary over the suites, then a table per suite (success k/n, mean steps, error
    codes) and the failed episodes. A task without a skill counts `n` failed episodes."""
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)
    summary = ["| suite | episodes | tasks at >= 90% | below 90% |", "|" + " --- |" * 4]
    tables = []
    grand = [0, 0, 0, 0]  # episodes ok, episodes, tasks solved, tasks
    for suite in dict.fromkeys(r.task.split("/")[0] for r in refs):
        srefs = [r for r in refs if r.task.startswith(suite + "/")]
        tables += [f"### {suite}", "", "| # | task | goal | reference | success | mean steps | "
                   "error codes (recoveries and failures) |", "|" + " --- |" * 7]
        ok = total = 0
        below = []
        for ref in srefs:
            t = get_task(ref.task)
            goal = " ".join(f"{g[0]}({', '.join(g[1:])})" for g in ref.goal)
            if ref.missing:
                tables.append(f"| {t.index} | {t.name} | {goal} | no skill: "
                              f"{', '.join(ref.missing)} | - | - | - |")
                total += n
                below.append(f"{t.index}: no skill")
                continue
            rs = by_task.get(ref.task, [])
            k = sum(r["success"] for r in rs)
            ok, total = ok + k, total + len(rs)
            if k < 0.9 * max(1, len(rs)):
                below.append(f"{t.index}: {k}/{len(rs)}")
            codes = Counter(c for r in rs for c in r["errors"])
            steps = f"{sum(r['steps'] for r in rs) / len(rs):.0f}" if rs else "-"
            tables.append(f"| {t.index} | {t.name} | {goal} | {' + '.join(ref.trees)} | "
                          f"**{k}/{len(rs)}** | {steps} | "
                          + (", ".join(f"{c} x{m}" for c, m in codes.most_common()) or "-")
                          + " |")
        solved = len(srefs) - len(below)
        tables += ["", f"**{suite}: {ok}/{total} episodes succeed ({ok / max(1, total):.0%}); "
                   f"{solved}/{len(srefs)} tasks at >= 90%.**", ""]
        summary.append(f"| {suite} | {ok}/{total} | {solved}/{len(srefs)} | "
                       f"{', '.join(below) or '-'} |")
        grand = [a + b for a, b in zip(grand, (ok, total, solved, len(srefs)), strict=True)]
    summary.append(f"| **all** | **{grand[0]}/{grand[1]}** | **{grand[2]}/{grand[3]}** | |")
    failed = [f"{r['task'].split('/')[0]}/{get_task(r['task']).index}#{r['init_state']}"
              for r in rows if not r["success"]]
    return "\n".join([*summary, "", *tables, "Failed episodes (SUITE/INDEX#INIT_STATE): "
                      + (", ".join(failed) or "none"), ""])


def against(rows: list[dict], oracle: list[dict], share: float = 0.8) -> str:
    """These episodes beside another run's of the same tasks and init states (the camera table
    beside the privileged one): per suite, both successes, their ratio and the tasks at >=
    `share` of their episodes in each."""
    pairs = {(r["task"], r["init_state"]): r for r in oracle}
    lines = [f"| suite | episodes | against | ratio | tasks at >= {share:.0%} | against |",
             "|" + " --- |" * 6]
    suites = list(dict.fromkeys(r["task"].split("/")[0] for r in rows))
    for suite in [*suites, None]:
        ours = [r for r in rows if suite is None or r["task"].startswith(suite + "/")]
        theirs = [pairs[r["task"], r["init_state"]] for r in ours
                  if (r["task"], r["init_state"]) in pairs]
        if len(theirs) < len(ours):
            missing = len(ours) - len(theirs)
            raise TetherError(f"--against has no episode for {missing} of these episodes")
        a, b = sum(r["success"] for r in ours), sum(r["success"] for r in theirs)
        tasks = len({r["task"] for r in ours})
        lines.append(f"| {suite or '**all**'} | {a}/{len(ours)} | {b}/{len(theirs)} "
                     f"| {a / max(1, b):.1%} | {_solved(ours, share)}/{tasks} | "
                     f"{_solved(theirs, share)}/{tasks} |")
    return "\n".join(lines) + "\n"


def _solved(episodes: list[dict], share: float) -> int:
    """The tasks that succeed in at least `share` of their episodes."""
    tasks = Counter(r["task"] for r in episodes)
    wins = Counter(r["task"] for r in episodes if r["success"])
    return sum(wins[t] >= share * n for t, n in tasks.items())


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=list(ALL_SUITES),
                    help="tasks (SUITE/NAME, SUITE/INDEX) or whole suites; default: all five")
    ap.add_argument("--init-states", type=int, default=10, help="init states 0..N-1 per task")
    ap.add_argument("--first", type=int, default=0, help="first init state")
    ap.add_argument("--budget", type=int, default=BUDGET, help="step budget per goal literal")
    ap.add_argument("--out", type=Path, help="also write the markdown tables here")
    ap.add_argument("--json", type=Path, help="also write the per-episode results here")
    ap.add_argument("--reuse", type=Path, help="episodes of an earlier --json not to run again "
                    "(same tree and budget assumed; resume a sweep, add tasks to it)")
    ap.add_argument("--perception", choices=("privileged", "camera"), default="privileged",
                    help="what the trees' leaves read object state from (docs/perception.md)")
    ap.add_argument("--no-run", action="store_true",
                    help="run nothing: the tables of the --reuse episodes only")
    ap.add_argument("--against", type=Path,
                    help="another run's --json of the same episodes (the privileged table's): "
                         "a table of both, their ratio and the tasks at >= 80%% first")
    args = ap.parse_args(argv)
    from tqdm import tqdm

    tasks = [t.id for spec in args.tasks
             for t in (suite_tasks(spec) if "/" not in spec else [get_task(spec)])]
    refs = [reference_for(t) for t in tasks]
    states = list(range(args.first, args.first + args.init_states))
    done = {(r["task"], r["init_state"]): r for r in
            (json.loads(args.reuse.read_text()) if args.reuse else [])}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as runs:
        for ref in tqdm([r for r in refs if not r.missing], desc="tasks", unit="task"):
            rows += [done[ref.task, k] for k in states if (ref.task, k) in done]
            todo = [] if args.no_run else [k for k in states if (ref.task, k) not in done]
            rows += run_reference(ref, todo, Path(runs), args.budget, args.perception)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=1))
    text = markdown(refs, rows, len(states))
    if args.against:
        text = against(rows, json.loads(args.against.read_text())) + "\n" + text
    print(text)
    if args.out:
        cmd = "python benchmarks/reference_success.py " + " ".join(argv or sys.argv[1:])
        args.out.write_text(f"```\n{cmd.strip()}\n```\n\n{text}")
    return text


if __name__ == "__main__":
    main()
