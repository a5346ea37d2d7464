"""Success of an authored tree over LIBERO tasks and init states: prints a table per task.

    python benchmarks/library_success.py        # demo task x 20 init states, libero_spatial x 5
    python benchmarks/library_success.py --tasks libero_goal/8 --init-states 20

Each episode is a full `tether run` (scene reset to the init state, tree compiled against it,
ticked until it finishes or the budget is spent) with its trace but no camera frames and no
long-term memory, so episodes are independent; success is LIBERO's own goal test.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from tether.replay.recorder import FrameSettings
from tether.scenes.catalogue import get_task, suite_tasks
from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig

DEFAULT = [("libero_goal/put_the_bowl_on_the_plate", 20)] + [
    (f"libero_spatial/{i}", 5) for i in range(10)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default="trees/library/pick_place.yaml")
    ap.add_argument("--tasks", nargs="*", help="tasks (SUITE/NAME, SUITE/INDEX or a whole SUITE)")
    ap.add_argument("--init-states", type=int, default=5, help="init states per task (0..N-1)")
    ap.add_argument("--json", type=Path, help="also write the per-episode results here")
    args = ap.parse_args()
    plan = DEFAULT
    if args.tasks:
        plan = []
        for t in args.tasks:
            ids = [x.id for x in suite_tasks(t)] if "/" not in t else [t]
            plan += [(i, args.init_states) for i in ids]
    episodes = [(get_task(t).id, k) for t, n in plan for k in range(n)]
    rows = []
    with tempfile.TemporaryDirectory() as runs:
        for task, k in tqdm(episodes, desc="episodes", unit="ep"):
            rec = run(RunConfig(args.tree, SessionConfig(
                task, seed=k, init_state=k, runs=runs, frames=FrameSettings(), memory="none")))
            r = rec.result
            rows.append({"task": task, "init_state": k, "success": r.success, "steps": r.steps,
                         "errors": [e["code"] for e in r.errors], "wall": rec.wall_seconds})
    table = Table("task", "success", "rate", "mean steps", "recoveries (error codes)",
                  title=f"{args.tree} on LIBERO")
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)
    for task, rs in by_task.items():
        ok = sum(r["success"] for r in rs)
        codes = Counter(c for r in rs for c in r["errors"])
        table.add_row(task, f"{ok}/{len(rs)}", f"{ok / len(rs):.0%}",
                      f"{sum(r['steps'] for r in rs) / len(rs):.0f}",
                      ", ".join(f"{c} x{n}" for c, n in codes.most_common()) or "-")
    for suite in sorted({t.split("/")[0] for t in by_task}):
        rs = [r for r in rows if r["task"].startswith(suite + "/")]
        ok = sum(r["success"] for r in rs)
        table.add_row(f"[bold]{suite} (all)", f"{ok}/{len(rs)}", f"{ok / len(rs):.0%}", "", "")
    Console().print(table)
    failed = [f"{r['task']}#{r['init_state']}" for r in rows if not r["success"]]
    print("failed episodes:", ", ".join(failed) or "none")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
