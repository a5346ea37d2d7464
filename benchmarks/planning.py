"""How well the offline `memory` planner reads the suites' instructions, and (`--execute`) whether
the trees it plans succeed.

For every task and every phrasing of it (the BDDL's own, the tether sidecar's, and the
paraphrases below) the `memory` planner (`tether.planning.offline.MemoryPlanner`, no memory: the
grounding by ranking; `--memory PATH`: remembered plans first) plans against the task's scene at
the init state: grounded by ranking over the scene's names and positions, turned into steps, and
the plan compiled with the tree compiler. A row says whether the grounded goals equal the
task's own BDDL goal (`goal`), and whether a plan came out that compiles (`plan`); when not, why.

With `--execute` every compiling plan is also RUN nominally, exactly as `tether do` runs it
(`tether.planning.do.do_instruction`: the safety rules' tree, its `replan` node asking the
same planner), for one episode per init state; success is LIBERO's own goal test. Tasks are
split by whether the library has a skill for every predicate of their BDDL goal
(`tether.planning.skills.RULES`): the tasks without one are reported as `no skill`, not dropped.

    .venv/bin/python benchmarks/planning.py [SUITE|SUITE/TASK ...] [--markdown]
    .venv/bin/python benchmarks/planning.py libero_spatial libero_object libero_goal tether \\
        --execute [--init-states N [--first-init-state K]] [--memory PATH] \\
        [--out docs/results/planning.md]

`--instructions-of SUITE` plans SUITE's phrasings of each task (the task of the same name)
instead of its own, in its scene: `libero_spatial_lan --instructions-of libero_spatial` runs
LIBERO's instructions in the `_lan` set's scenes (LIBERO-PRO's own init states, which are not
LIBERO's), so a comparison with the `_lan` instructions differs in the instruction only.

`--grounding` measures the grounding alone (`tether.planning.grounding`): every phrasing of the
suites' tasks and LIBERO-PRO's `_lan`, `_task` and `_swap` instructions (`pro_sets`: the catalogue's
official sets, or `--pro-root DIR` for another copy's BDDL files), each ranked in its task's
scene at init state 0.
Accuracy = the decided goals equal the task file's goal; a confusion table lists the wrong
groundings; planning time per instruction.

    .venv/bin/python benchmarks/planning.py --grounding [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PARAPHRASES = {  # our own: synonyms, other verbs, other word order
    "libero_object/0": ["put the alphabet soup into the basket",
                        "drop the soup can in the basket"],
    "libero_object/1": ["put the cream cheese box in the basket"],
    "libero_object/2": ["place the salad dressing bottle into the basket"],
    "libero_object/3": ["put the barbecue sauce in the basket"],
    "libero_object/4": ["grab the ketchup and put it inside the basket"],
    "libero_object/5": ["drop the tomato sauce into the basket"],
    "libero_object/6": ["put the butter into the basket"],
    "libero_object/7": ["put the milk carton in the basket"],
    "libero_object/8": ["put the pudding in the basket"],
    "libero_object/9": ["place the orange juice in the basket"],
    "libero_goal/0": ["pull the middle drawer of the cabinet open"],
    "libero_goal/1": ["place the black bowl onto the stove"],
    "libero_goal/2": ["place the wine bottle on the top of the cabinet"],
    "libero_goal/3": ["open the top drawer of the cabinet and put the black bowl in it"],
    "libero_goal/4": ["put the black bowl on the cabinet"],
    "libero_goal/5": ["slide the plate in front of the stove"],
    "libero_goal/6": ["put the cream cheese box into the bowl"],
    "libero_goal/8": ["pick up the bowl and place it on the plate",
                      "move the black bowl onto the plate"],
    "libero_goal/9": ["place the wine bottle onto the wine rack"],
    "libero_spatial/0": ["put the black bowl between the plate and the ramekin on the plate"],
    "libero_spatial/1": ["pick up the black bowl by the ramekin and place it on the plate"],
    "libero_spatial/2": ["grab the bowl in the middle of the table and set it on the plate"],
    "libero_spatial/3": ["take the bowl sitting on the cookie box and put it onto the plate"],
    "libero_spatial/5": ["take the black bowl on the ramekin and put it on the plate"],
    "libero_spatial/7": ["move the black bowl that is on the stove to the plate"],
    "libero_spatial/9": ["put the bowl from the top of the cabinet on the plate"],
    "tether/5": ["put the cream cheese by the plate"],
    "libero_10/0": ["put the alphabet soup and the tomato sauce in the basket"],
    "libero_10/3": ["put the black bowl in the bottom drawer of the cabinet, then close it"],
}


def phrasings(task) -> list[str]:
    """The BDDL's instruction, the sidecar's phrasings, our paraphrases; no duplicates."""
    return list(dict.fromkeys([task.language, *task.instructions,
                               *PARAPHRASES.get(f"{task.suite}/{task.index}", [])]))


@dataclass
class Row:
    task: str  # SUITE/INDEX
    text: str
    init_state: int
    skill: bool  # the library has a skill for every predicate of the task's goal
    planner: str = ""  # which path planned (grounding, memory:<id>); "" when none did
    goals: str = ""
    ok_goal: bool = False
    ok_plan: bool = False  # a plan that compiles
    why: str = ""
    ran: bool = False
    success: bool = False
    steps: int = 0
    codes: list[str] = field(default_factory=list)
    ended: str = ""  # the tree's status, or "budget spent"

    def reason(self) -> str:
        if not self.ok_plan or not self.ok_goal:
            return self.why
        if self.ran and not self.success:
            if self.why:  # the run itself raised
                return self.why
            codes = Counter(self.codes)
            return f"episode failed ({self.ended}): " + (
                ", ".join(f"{c} x{n}" for c, n in codes.most_common()) or "no error")
        return ""


def plan_rows(task, init_state: int, planner, then=None,
              texts: list[str] | None = None) -> list[Row]:
    """Plan every phrasing of `task` (or `texts`) in its scene at `init_state`; `then(row, plan
    or None)` is called after each (so an episode it runs can add to the memory the next
    phrasing reads)."""
    from tether.errors import TetherError
    from tether.planning.grounding import rank
    from tether.planning.plan import check_plan
    from tether.planning.request import PlanRequest
    from tether.planning.skills import RULES, Goal, parts_of
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.referring import SceneFacts

    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(task, init_state=init_state, seed=init_state)
    rows = []
    try:
        facts, goal = SceneFacts.of(scene), set(scene.goal())
        skill = all(p in RULES for p, *_ in goal)
        # what a plan must bring about: a literal that already holds at the start need not be
        # said (libero_10/8's stove starts on); the episode must still leave it holding
        goal = {lit for lit in goal if not scene.goal_predicate(lit[0], list(lit[1:]))} or goal
        for text in texts or phrasings(task):
            row = Row(f"{task.suite}/{task.index}", text, init_state, skill)
            plan = None
            try:  # what the grounding decides, whether or not a skill achieves it
                parsed = rank(text, facts).decide()
            except TetherError as exc:
                parsed, row.why = None, str(exc).splitlines()[0]
            try:
                plan = planner.plan(PlanRequest(text, facts, resolve=scene.resolve,
                                                 parts=parts_of(scene)))
                row.planner = plan.planner
                goals = [Goal(e["predicate"], tuple(v for k, v in e.items() if k != "predicate"))
                         for s in plan.subtasks for e in s.expect]
                problems = check_plan(plan, scene.resolve)
                row.ok_plan, row.why = not problems, "; ".join(problems)
            except TetherError as exc:
                goals, row.why = parsed or [], row.why or str(exc).splitlines()[-1]
            row.goals = ", ".join(str(g) for g in goals)
            row.ok_goal = bool(goals) and {(g.predicate, *g.args) for g in goals} >= goal
            if goals and not row.ok_goal:  # may add steps it says, never miss the goal
                row.why = (row.why + "; " if row.why else "") + "goal misses BDDL's " + \
                    ", ".join(f"{p}({', '.join(a)})" for p, *a in sorted(goal))
            rows.append(row)
            if then is not None:
                then(row, plan if row.ok_plan else None)
    finally:
        scene.close()
    return rows


def pro_sets(root: Path | None = None) -> dict[str, list]:
    """LIBERO-PRO's instruction sets as tasks: `SUITE_lan` (paraphrased instructions, the same
    goals), `SUITE_task` (other goals in the same scenes) and `SUITE_swap` (the instructions and
    goals of the suite, objects in swapped places: referring phrases such as "the bowl next to
    the plate" must be read in the new layout). By default the catalogue's sets
    (`tether.scenes.libero_pro`: the wheel unpacked in `.venv/libero-pro`, with their recorded
    init states); `root`: another copy's `bddl_files` folder (its init states are sampled)."""
    from tether.errors import TetherError
    from tether.scenes.catalogue import suite_tasks, task_from_file

    names = [f"{suite}_{kind}" for suite in ("libero_spatial", "libero_object", "libero_goal",
                                             "libero_10") for kind in ("lan", "task", "swap")]
    if root is None:
        return {name: list(suite_tasks(name)) for name in names}
    sets = {name: [task_from_file(f) for f in sorted((root / name).glob("*.bddl"))]
            for name in names}
    if not any(sets.values()):
        raise TetherError(f"no LIBERO-PRO BDDL files under {root}")
    return sets


@dataclass
class Grounded:
    """One instruction grounded in its task's scene: the best reading, its score and its lead
    over the best different reading, whether it is the task's goal."""

    set: str
    task: str
    text: str
    want: str
    got: str
    right: bool  # the best reading includes the task's goal (decided or not)
    exact: bool  # ... and no goal beyond it ("open the drawer and put the bowl in it")
    score: float
    lead: float  # over the best reading with other goals (inf when there is none)
    seconds: float
    negative: bool = False  # asked in a scene where nothing it says exists: must be refused

    def decided(self, threshold: float, margin: float) -> bool:
        return self.score >= threshold and self.lead >= margin

    def ok(self, threshold: float, margin: float) -> bool:
        """A right plan, or for a negative, a question."""
        decided = self.decided(threshold, margin)
        return not decided if self.negative else decided and self.right


def grounding_rows(name: str, task, texts: list[str], negative: bool = False) -> list[Grounded]:
    """Rank every instruction in the task's scene (init state 0) and compare the best reading
    with the task's goal: right when it includes it (a step the instruction says, such as opening
    the drawer first, may be added; `exact` says whether one was)."""
    from tether.planning.grounding import rank
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.referring import SceneFacts

    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(task, init_state=0, seed=0)
    try:
        facts, goal = SceneFacts.of(scene), set(scene.goal())
    finally:
        scene.close()
    rows = []
    for text in texts:
        start = time.perf_counter()
        readings = rank(text, facts).readings
        seconds = time.perf_counter() - start
        best = readings[0] if readings else None
        got = {(g.predicate, *g.args) for g in (best.goals if best else ())}
        runner_up = next((r for r in readings[1:] if set(r.goals) != set(best.goals)), None)
        rows.append(Grounded(
            name, task.name, text, _goals(goal), _goals(got), bool(got) and got >= goal,
            got == goal, best.score if best else -math.inf,
            best.score - runner_up.score if best and runner_up else math.inf, seconds, negative))
    return rows


def _goals(literals) -> str:
    return ", ".join(f"{p}({', '.join(a)})" for p, *a in sorted(literals))


WRONG_PLAN_COST = 2  # calibration: a wrong plan run silently costs two questions


def calibrate(rows: list[Grounded]) -> tuple[float, float]:
    """The threshold and margin that maximise right plans and refused negatives minus
    `WRONG_PLAN_COST` x wrong plans over `rows` (ties: the lowest threshold and margin; the
    margin is at least 0.005, so two readings with one score are a question)."""
    thresholds = sorted({round(r.score, 3) for r in rows if math.isfinite(r.score)})
    margins = [round(0.005 * i, 3) for i in range(1, 21)]  # 0 would decide exact ties

    def gain(t: float, m: float) -> float:
        wrong = sum(r.decided(t, m) and (r.negative or not r.right) for r in rows)
        return sum(r.ok(t, m) for r in rows) - WRONG_PLAN_COST * wrong

    return max(((t, m) for t in thresholds for m in margins),
               key=lambda tm: (gain(*tm), -tm[0], -tm[1]))


def grounding_tables(rows: list[Grounded], threshold: float, margin: float) -> list[str]:
    """Accuracy per set, the confusion table of wrong groundings, time per instruction."""
    out = ["| set | instructions | right plan (⊇ task goal) | accuracy | = task goal exactly | "
           "refused (question) |", "| --- | --- | --- | --- | --- | --- |"]
    for name in dict.fromkeys(r.set for r in rows):
        rs = [r for r in rows if r.set == name]
        ok = sum(r.ok(threshold, margin) for r in rs)
        refused = sum(not r.decided(threshold, margin) for r in rs)
        exact = sum(r.ok(threshold, margin) and r.exact for r in rs)
        out.append(f"| {name} | {len(rs)} | {ok} | {ok / len(rs):.0%} | "
                   f"{'-' if rs[0].negative else exact} | {refused} |")
    wrong = [r for r in rows if not r.ok(threshold, margin) and not r.negative]
    out += ["", "| task goal | best reading | decided | instruction |", "| --- | --- | --- | --- |"]
    for r in wrong:
        decided = ("yes" if r.decided(threshold, margin)
                   else f"no ({r.score:.2f}, lead {r.lead:.3f})")
        out.append(f"| {r.want} | {r.got} | {decided} | {r.set}: \"{r.text}\" |")
    for r in rows:
        if r.negative and not r.ok(threshold, margin):
            out.append(f"| (nothing: {r.set}) | {r.got} | yes | \"{r.text}\" in {r.task} |")
    times = sorted(r.seconds for r in rows)
    out += ["", f"planning (grounding) time per instruction: median {times[len(times) // 2]:.2f} s,"
                f" max {times[-1]:.2f} s over {len(times)} instructions (MiniLM on CPU, "
                "candidate sentences cached per process)"]
    return out


def execute(row: Row, plan, task, options, runs: Path, memory: str) -> None:
    """Run `plan` as `tether do` does, one episode at the row's init state."""
    from tether.errors import TetherError
    from tether.planning.do import DO_BUDGET, DoConfig, do_instruction
    from tether.replay.recorder import FrameSettings
    from tether.session.session import SessionConfig

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            record, _ = do_instruction(DoConfig(row.text, SessionConfig(
                task.id, seed=row.init_state, init_state=row.init_state, runs=runs,
                budget=DO_BUDGET, memory=memory, frames=FrameSettings()),
                planner=options, plan=plan))
    except TetherError as exc:  # a plan that compiled alone but not in the run: a bug to see
        row.ran, row.why = True, f"run error: {str(exc).splitlines()[0]}"
        return
    r = record.result
    row.ran, row.success, row.steps = True, bool(r.success), r.steps
    row.codes = [e["code"] for e in r.errors]
    row.ended = f"tree {r.tree_status}" if r.ended_by == "tree" else "budget spent"


def mark(b: bool) -> str:
    return "✓" if b else "✗"


def task_table(rows: list[Row]) -> list[str]:
    """Per task: phrasings x init states planned / compiled / succeeded, failures' reasons."""
    out = ["| task | skill | instructions | goal grounded | plan compiles | succeeded | "
           "failures (why) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    by_task: dict[str, list[Row]] = {}
    for r in rows:
        by_task.setdefault(r.task, []).append(r)
    for task, rs in by_task.items():
        fails = [f"\"{r.text}\"{f' #{r.init_state}' if r.init_state else ''}: {r.reason()}"
                 for r in rs if r.reason()]
        out.append(f"| {task} | {'yes' if rs[0].skill else '**no skill**'} | {len(rs)} | "
                   f"{sum(r.ok_goal for r in rs)} | {sum(r.ok_goal and r.ok_plan for r in rs)} | "
                   f"{sum(r.success for r in rs)} | {'<br>'.join(fails) or '-'} |")
    return out


def totals(rows: list[Row], executed: bool) -> list[str]:
    out = ["| set | instructions | goal grounded | plan compiles | succeeded |",
           "| --- | --- | --- | --- | --- |"]
    groups = [(s, [r for r in rows if r.task.split("/")[0] == s and r.skill])
              for s in dict.fromkeys(r.task.split("/")[0] for r in rows)]
    groups += [("**all with a skill**", [r for r in rows if r.skill]),
               ("no skill (close, turn on, ...)", [r for r in rows if not r.skill])]
    for name, rs in groups:
        if not rs:
            continue
        n = len(rs)
        ok = sum(r.success for r in rs)
        out.append(f"| {name} | {n} | {sum(r.ok_goal for r in rs)} | "
                   f"{sum(r.ok_goal and r.ok_plan for r in rs)} | "
                   f"{f'{ok} ({ok / n:.0%})' if executed else '-'} |")
    return out


def main(argv: list[str]) -> int:
    from tether.errors import TetherError
    from tether.planning.planners import PlannerOptions, make_planner, open_planner_store
    from tether.scenes.catalogue import ALL_SUITES, get_task, list_tasks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*", help="suites or SUITE/TASK (default: all suites)")
    ap.add_argument("--markdown", action="store_true", help="print the rows as markdown")
    ap.add_argument("--execute", action="store_true", help="run every compiling plan")
    ap.add_argument("--init-states", type=int, default=1,
                    help="how many init states, from --first-init-state on")
    ap.add_argument("--first-init-state", type=int, default=0, metavar="K",
                    help="the first init state (default 0): a long measurement in parts")
    ap.add_argument("--memory", default="none", metavar="PATH|none",
                    help="the memory planner's store; with --execute the runs add to it")
    ap.add_argument("--runs", type=Path, help="keep the run directories here (default: a tmp)")
    ap.add_argument("--out", type=Path, help="write the markdown tables here")
    ap.add_argument("--grounding", action="store_true",
                    help="grounding accuracy only: every phrasing of the tasks and LIBERO-PRO's "
                         "_lan/_task/_swap sets, with a confusion table")
    ap.add_argument("--instructions-of", metavar="SUITE",
                    help="plan SUITE's phrasings of each task (the task of the same name) in the "
                         "given tasks' scenes: LIBERO's instructions in a LIBERO-PRO set's scenes")
    ap.add_argument("--pro-root", type=Path,
                    help="another copy of LIBERO-PRO's bddl_files (default: the catalogue's)")
    args = ap.parse_args(argv)
    if args.grounding:
        return grounding_main(args, argv)
    specs = args.tasks or list(ALL_SUITES)
    tasks = [t for s in specs for t in ([get_task(s)] if "/" in s else list_tasks([s]))]
    try:  # each task's phrasings in another suite (the task of the same name)
        texts = {t.id: phrasings(get_task(f"{args.instructions_of}/{t.name}"))
                 for t in tasks if args.instructions_of}
    except TetherError as exc:
        print(f"error: --instructions-of: {exc}", file=sys.stderr)
        return 2
    options = PlannerOptions()
    planner = make_planner(options, open_planner_store(args.memory))
    rows: list[Row] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        runs = args.runs or Path(tmp)
        for task in tasks:
            for k in range(args.first_init_state, args.first_init_state + args.init_states):
                def then(row: Row, plan, task=task, k=k) -> None:
                    if args.execute and plan is not None and row.ok_goal:
                        execute(row, plan, task, options, runs, args.memory)
                    print(("" if not row.ran else mark(row.success)) + mark(row.ok_goal)
                          + mark(row.ok_plan) + f" {row.task} #{k} [{row.planner or '-'}]: "
                          f"{row.text}  ->  " + (row.reason() or row.goals), flush=True)

                rows += plan_rows(task, k, planner, then, texts.get(task.id))
    wall = time.perf_counter() - start
    if args.markdown and not args.execute:
        print("| task | instruction | goal | plan | grounded / why not |\n"
              "| --- | --- | --- | --- | --- |")
        for r in rows:
            print(f"| {r.task} | {r.text} | {mark(r.ok_goal)} | {mark(r.ok_plan)} | "
                  f"{r.why or r.goals} |")
    lines = (task_table(rows) + [""] if args.execute else []) + totals(rows, args.execute)
    print("\n" + "\n".join(lines))
    print(f"\n{len(rows)} instructions x init states, {wall:.0f} s")
    if args.out:
        command = "MUJOCO_GL=egl .venv/bin/python benchmarks/planning.py " + " ".join(argv)
        args.out.write_text("```\n" + command + "\n```\n\n" + "\n".join(lines) + "\n",
                            encoding="utf-8")
    return 0


NEGATIVE_SCENES = {"libero_spatial": "libero_object/0", "libero_object": "libero_spatial/0"}


def grounding_main(args: argparse.Namespace, argv: list[str]) -> int:
    """Rank every phrasing of the suites' tasks (the calibration part, with the negatives: each
    of libero_spatial's and libero_object's phrasings asked in the other suite's first scene,
    where none of its objects is), choose the threshold and margin on them (`calibrate`), and
    report them with the held-out part: LIBERO-PRO's `_lan`, `_task` and `_swap` sets."""
    from tether.planning.grounding import GroundingConfig
    from tether.scenes.catalogue import ALL_SUITES, get_task, list_tasks

    specs = args.tasks or list(ALL_SUITES)
    tasks = [t for s in specs for t in ([get_task(s)] if "/" in s else list_tasks([s]))]
    rows: list[Grounded] = []
    for task in tasks:
        rows += grounding_rows(task.suite, task, phrasings(task))
    for suite, other in NEGATIVE_SCENES.items():
        texts = [text for t in tasks if t.suite == suite for text in phrasings(t)]
        if texts:
            rows += grounding_rows(f"{suite} asked in {other}", get_task(other), texts, True)
    held_out: list[Grounded] = []
    for name, pro in pro_sets(args.pro_root).items():
        for task in pro:
            held_out += grounding_rows(name, task, [task.language])
    default = GroundingConfig()
    threshold, margin = calibrate(rows)
    for r in rows + held_out:
        print(f"{mark(r.ok(threshold, margin))} {r.set} {r.task}: {r.text}  ->  {r.got} "
              f"({r.score:.3f}, lead {r.lead:.3f})", flush=True)
    lines = [f"calibrated on the suites' phrasings and the negatives ({len(rows)} instructions):"
             f" threshold {threshold:.3f}, margin {margin:.3f} (GroundingConfig: "
             f"{default.threshold}, {default.margin})", ""]
    lines += grounding_tables(rows + held_out, threshold, margin)
    print("\n" + "\n".join(lines))
    if args.out:
        command = "MUJOCO_GL=egl .venv/bin/python benchmarks/planning.py " + " ".join(argv)
        args.out.write_text("```\n" + command + "\n```\n\n" + "\n".join(lines) + "\n",
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
