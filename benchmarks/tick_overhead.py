"""Tick cost of a compiled 100-node tree against the same tree built by hand in py_trees.

Both trees have the same shape: a parallel of 10 reactive sequences, each re-checking two
predicates every tick and running a retry over a sequence of four waits, 101 nodes in all.
One is compiled from YAML by tether, the other constructed directly with py_trees and the same
behaviour classes. Both tick against the same physics-free scene; the table shows microseconds
per tick (best of several repeats) and the ratio, compiled / hand-built (target <= 1.10).

    python benchmarks/tick_overhead.py [--ticks 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import tempfile
import timeit
from pathlib import Path

import py_trees
from rich.console import Console
from rich.table import Table

from tether.behaviours.conditions import Check, PredicateCall
from tether.behaviours.primitives import Wait
from tether.blackboard.episode import new_episode
from tether.scenes.kinematic import KinematicScene
from tether.trees.compiler import compile_tree

BRANCHES, WAITS = 10, 4


def scene() -> KinematicScene:
    return KinematicScene({"cube_1": ([0.1, 0.0, 0.02], [0.02] * 3),
                           "plate_1": ([-0.1, 0.1, 0.005], [0.08, 0.08, 0.005])})


def yaml_text() -> str:
    branch = f"""
      - reactive_sequence:
          - check: {{predicate: near, object: cube_1, target: plate_1, distance: 5.0}}
          - invert: {{check: {{predicate: grasped, object: cube_1}}}}
          - retry:
              n: 3
              child:
                sequence:
{"".join("                  - wait: 100000" + chr(10) for _ in range(WAITS))}"""
    return "root:\n  parallel:\n    children:" + branch * BRANCHES


def by_hand() -> py_trees.behaviour.Behaviour:
    branches = []
    for _ in range(BRANCHES):
        near = Check("check near", PredicateCall("near", {"object": "cube_1", "target": "plate_1",
                                                          "distance": 5.0}), error=None)
        grasped = Check("check grasped", PredicateCall("grasped", {"object": "cube_1"}), error=None)
        waits = py_trees.composites.Sequence("sequence", memory=True,
                                             children=[Wait("wait", 100000) for _ in range(WAITS)])
        branches.append(py_trees.composites.Sequence("reactive_sequence", memory=False, children=[
            near, py_trees.decorators.Inverter("invert", grasped),
            py_trees.decorators.Retry("retry", waits, num_failures=3)]))
    return py_trees.composites.Parallel(
        "parallel", policy=py_trees.common.ParallelPolicy.SuccessOnAll(), children=branches)


def tick_cost(root: py_trees.behaviour.Behaviour, ticks: int, repeats: int) -> float:
    robot = scene()
    new_episode(task="bench", instruction="", params={}, entities=robot.entities())
    tree = py_trees.trees.BehaviourTree(root)
    tree.setup(robot=robot)
    tree.tick()
    best = min(timeit.repeat(tree.tick, number=ticks, repeat=repeats))
    assert root.status == py_trees.common.Status.RUNNING
    return best / ticks * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree100.yaml"
        path.write_text(yaml_text())
        compiled = compile_tree(path, resolve=scene().resolve)
    hand = by_hand()
    n_hand = sum(1 for _ in hand.iterate())
    n_comp = sum(1 for _ in compiled.root.iterate())
    hand_us = comp_us = float("inf")
    for _ in range(3):  # alternate, so both see the same machine load
        hand_us = min(hand_us, tick_cost(hand, args.ticks, args.repeats))
        comp_us = min(comp_us, tick_cost(compiled.root, args.ticks, args.repeats))
    table = Table("tree", "nodes", "us / tick", "ratio", title="tick overhead")
    table.add_row("built by hand (py_trees)", str(n_hand), f"{hand_us:.1f}", "1.00")
    table.add_row("compiled from YAML (tether)", str(n_comp), f"{comp_us:.1f}",
                  f"{comp_us / hand_us:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
