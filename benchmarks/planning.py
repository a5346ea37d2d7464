"""How well the offline `memory` planner reads the suites' instructions (no memory, parser path).

For every task of LIBERO's four suites and tether's own suite, every phrasing (the BDDL's own,
the tether sidecar's, and the paraphrases below) is planned against the task's scene at init
state 0: parsed, grounded over the scene's names and positions, turned into steps, and the plan
compiled with the tree compiler. A row says whether the grounded goals equal the task's own BDDL
goal (`goal`), and whether a plan came out that compiles (`plan`); when not, why.

    .venv/bin/python benchmarks/planning.py [SUITE ...] [--markdown]
"""

from __future__ import annotations

import contextlib
import io
import sys
import time

PARAPHRASES = {  # our own: synonyms, other verbs, other word order
    "libero_object/0": ["put the alphabet soup into the basket",
                        "drop the soup can in the basket"],
    "libero_object/4": ["grab the ketchup and put it inside the basket"],
    "libero_object/9": ["place the orange juice in the basket"],
    "libero_goal/0": ["pull the middle drawer of the cabinet open"],
    "libero_goal/1": ["place the black bowl onto the stove"],
    "libero_goal/6": ["put the cream cheese box into the bowl"],
    "libero_goal/8": ["pick up the bowl and place it on the plate",
                      "move the black bowl onto the plate"],
    "libero_goal/9": ["place the wine bottle onto the wine rack"],
    "libero_spatial/0": ["put the black bowl between the plate and the ramekin on the plate"],
    "libero_spatial/5": ["take the black bowl on the ramekin and put it on the plate"],
    "libero_10/0": ["put the alphabet soup and the tomato sauce in the basket"],
    "libero_10/3": ["put the black bowl in the bottom drawer of the cabinet, then close it"],
}


def main(argv: list[str]) -> int:
    from scenes.catalogue import ALL_SUITES, list_tasks
    from scenes.errors import TetherError
    from scenes.libero_scene import LiberoScene
    from scenes.referring import SceneFacts
    from trees.planning.instructions import parse
    from trees.planning.offline import ground_goals, plan_goals
    from trees.planning.plan import check_plan

    markdown = "--markdown" in argv
    suites = [a for a in argv if not a.startswith("--")] or list(ALL_SUITES)
    rows, start = [], time.perf_counter()
    for task in list_tasks(suites):
        phrasings = list(dict.fromkeys([task.language, *task.instructions,
                                        *PARAPHRASES.get(f"{task.suite}/{task.index}", [])]))
        with contextlib.redirect_stdout(io.StringIO()):
            scene = LiberoScene(task, init_state=0, seed=0)
        facts, goal = SceneFacts.of(scene), set(scene.goal())
        for text in phrasings:
            got, ok_goal, ok_plan, why = "", False, False, ""
            try:
                goals = ground_goals(parse(text), facts)
                got = ", ".join(str(g) for g in goals)
                ok_goal = {(g.predicate, *g.args) for g in goals} >= goal  # may add steps it says
                if not ok_goal:
                    why = "goal differs from BDDL " + ", ".join(
                        f"{p}({', '.join(a)})" for p, *a in sorted(goal))
                problems = check_plan(plan_goals(text, goals), scene.resolve)
                ok_plan = not problems
                why = why or "; ".join(problems)
            except TetherError as exc:
                why = str(exc).splitlines()[0]
            rows.append((task.suite, task.index, text, ok_goal, ok_plan, got, why))
        scene.close()
    for suite in suites:
        mine = [r for r in rows if r[0] == suite]
        if not markdown:
            print(f"{suite}: goal {sum(r[3] for r in mine)}/{len(mine)}, "
                  f"plan {sum(r[3] and r[4] for r in mine)}/{len(mine)}")
    if markdown:
        print("| task | instruction | goal | plan | grounded / why not |\n"
              "| --- | --- | --- | --- | --- |")
    for suite, index, text, ok_goal, ok_plan, got, why in rows:
        mark = lambda b: "✓" if b else "✗"  # noqa: E731
        if markdown:
            print(f"| {suite}/{index} | {text} | {mark(ok_goal)} | {mark(ok_plan)} | "
                  f"{why or got} |")
        else:
            print(f"{mark(ok_goal)}{mark(ok_plan)} {suite}/{index}: {text}  ->  {why or got}")
    total = len(rows)
    print(f"\n{sum(r[3] for r in rows)}/{total} instructions grounded to the task's goal, "
          f"{sum(r[3] and r[4] for r in rows)}/{total} with a compiling plan "
          f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
