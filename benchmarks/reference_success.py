"""Is every task solvable? A scripted reference solution per task, run over its init states.

    python benchmarks/reference_success.py                          # all 40 LIBERO tasks + tether's
    python benchmarks/reference_success.py --tasks libero_object libero_goal/7 --init-states 3
    python benchmarks/reference_success.py --out docs/results/reference_success.md

The reference solution of a task (`tether.planning.reference`) is built from its BDDL goal and
its scene: each goal literal achieved by the library tree the planner's own rule picks
(`tether.planning.skills.skill_for`, from the geometry and joints of the literal's entities,
never their names), in sequence, in an order that keeps knobs first, `close` last and a drawer
opened before something goes in. The trees are analytic primitives on the poses `--perception`
gives (privileged: the simulator's; camera: the camera world model, docs/perception.md). Each
episode is a full `tether run` of that tree (no camera frames, no long-term memory) with a step
budget of `--budget` per literal; success is LIBERO's own goal test. A task with a predicate no
tree achieves is listed as "no skill", not run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from tether.errors import TetherError  # noqa: E402
from tether.planning.reference import Reference, reference_for  # noqa: E402
from tether.scenes.catalogue import ALL_SUITES, get_task, suite_tasks  # noqa: E402

BUDGET = 1000  # steps per goal literal


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
            tables.append(f"| {t.index} | {t.name} | {goal} | {' + '.join(ref.subtrees())} | "
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
