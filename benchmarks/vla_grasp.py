"""Grasp success of a policy: the harness tree (`vla_grasp.yaml`: staged pre-grasp, vla, check,
re-stage) against the bare policy (`vla_bare.yaml`: from the start pose), on held-out init states.

A run succeeds when, at its end, the object is grasped and at least 5 cm above where it started.
Each condition is `nominal` or perturbation kinds joined by `+`. Prints a markdown table with 95%
Wilson intervals (and the policy time per chunk); with --card the table is appended to the
checkpoint's success.md and its model card (README.md) is regenerated.

    python benchmarks/vla_grasp.py --task libero_goal/8 --init-states 30-49 --trees harness bare
    python benchmarks/vla_grasp.py --conditions nominal distractors \
        --card models/checkpoints/grasp_act
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
TREES = {"harness": REPO / "trees/library/vla_grasp.yaml",
         "bare": REPO / "trees/library/vla_bare.yaml"}


def span(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def interval(wins: int, n: int) -> str:
    from tether.bench.report import wilson

    lo, hi = wilson(wins, n)
    return f"{100 * lo:.0f}-{100 * hi:.0f}%"


def main() -> None:
    from tether.models.policies import policy_for
    from tether.scenes.catalogue import get_task
    from tether.scenes.perturbations import build, open_scene
    from tether.scenes.predicates import evaluate
    from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file
    from tether.trees.episode import run_episode

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="libero_goal/8")
    ap.add_argument("--init-states", default="30-49")
    ap.add_argument("--trees", nargs="+", default=["harness", "bare"], choices=list(TREES))
    ap.add_argument("--policy", default="grasp_act")
    ap.add_argument("--conditions", nargs="+", default=["nominal"],
                    help="nominal, or perturbation kinds joined by '+'")
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--card", type=Path, help="checkpoint folder: write success.md + README.md")
    args = ap.parse_args()

    entry = get_task(args.task)
    rows, latencies = [], []
    for tree_name in args.trees:
        tf = read_tree_file(TREES[tree_name])
        for condition in args.conditions:
            kinds = [] if condition == "nominal" else condition.split("+")
            wins, steps, start = 0, [], time.perf_counter()
            scene = None
            for k in span(args.init_states):
                if scene is None:
                    scene = open_scene(entry, [build(p) for p in kinds], init_state=k, seed=k)
                else:
                    scene.reset(init_state=k, seed=k)
                params = {**goal_bindings(tf, scene.goal()), "policy": args.policy}
                root = compile_tree(TREES[tree_name], params, resolve=scene.resolve).root
                result = run_episode(root, scene, budget=args.budget, task=entry.id,
                                     instruction=scene.task.language, params=params)
                obj = params["object"]
                ok = scene.is_grasped(obj) and evaluate(scene, "lifted", {"object": obj,
                                                                         "height": 0.05})
                wins += ok
                steps.append(result.steps)
                print(f"{tree_name} {condition} init {k}: {'ok' if ok else 'FAIL'} in "
                      f"{result.steps} steps {[e['code'] for e in result.errors]}", flush=True)
            policy = policy_for(args.policy, scene)
            latencies += getattr(policy, "latencies", [])
            n = len(steps)
            rows.append((tree_name, condition, wins, n, sum(steps) / n,
                         (time.perf_counter() - start) / n))
            scene.close()
    lines = [f"Policy `{args.policy}` on `{entry.id}`, init states {args.init_states} "
             "(held out from training); success = grasped and lifted >= 5 cm at the end.", "",
             "| tree | condition | success | 95% interval | mean steps | wall s/episode |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {t} | {c} | {w}/{n} ({100 * w / n:.0f}%) | {interval(w, n)} | {s:.0f} "
              f"| {sec:.1f} |" for t, c, w, n, s, sec in rows]
    if latencies:
        median = sorted(latencies)[len(latencies) // 2]
        lines += ["", f"Policy time per chunk: median {1000 * median:.0f} ms over "
                      f"{len(latencies)} chunks."]
    table = "\n".join(lines)
    print(table)
    if args.card:
        from tether.models.train import write_card

        success = args.card / "success.md"
        old = success.read_text(encoding="utf-8") + "\n\n" if success.exists() else ""
        success.write_text(old + table + "\n", encoding="utf-8")
        write_card(args.card)


if __name__ == "__main__":
    main()
