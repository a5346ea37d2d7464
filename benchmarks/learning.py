"""The learning measurement: does long-term memory turn a scene-specific failure into success?

Tree: `trees/library/recall_pick_place.yaml`, whose approach offset comes from `retrieve`
(default: from above). Each row is one variant run for `--episodes` episodes with a fresh MiniLM
store per series, and again with memory off on the same placements. A cell shows each episode's
outcome (S/F) and where its approach came from (d: default, r: a rule, s: a past success).

- `libero`: the real LIBERO task `tether/put_the_cream_cheese_by_the_open_drawer_on_the_plate`
  (MuJoCo physics): the cheese sits in front of a cabinet's open top drawer, which the 20 cm
  wide Panda hand cannot come down past; sliding in from -x, under the drawer, works. Series r
  uses initial states 5r .. 5r+4 (LIBERO's placement under those seeds).
- `kinematic`: `tether.scenes.obstacles.shelf_scene`, a physics-free cream cheese box under a shelf
  (the box moves a few cm per episode with the seed), with a wall variant and a control.

    python benchmarks/learning.py [--scenes libero kinematic] [--episodes 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tether.blackboard.episode import storage
from tether.memory.store import ExperienceStore
from tether.models.embedders import MiniLMEmbedder
from tether.scenes.obstacles import SHELF_INSTRUCTION, SHELF_TASK, shelf_scene
from tether.session.memory import practice
from tether.trees.compiler import LIBRARY

TREE = LIBRARY / "recall_pick_place.yaml"
LIBERO_TASK = "tether/put_the_cream_cheese_by_the_open_drawer_on_the_plate"
VARIANTS = {
    "shelf over the box": {},
    "shelf, wall at -x": {"sides_blocked": ("-x",)},
    "control: no shelf": {"shelf": False},
}


def mark(result) -> str:
    source = storage()["/memory/advice"]["approach"]["source"][0]
    return ("S" if result.success else "F") + source


def series(store: ExperienceStore | None, episodes: int, offset: int, kwargs: dict) -> str:
    marks = []
    for i in range(episodes):
        result, _ = practice(TREE, shelf_scene(offset + i, **kwargs), store, task=SHELF_TASK,
                             instruction=SHELF_INSTRUCTION, budget=600, run_id=f"ep{i}")
        marks.append(mark(result))
    return " ".join(marks)


def libero_series(scene, store: ExperienceStore | None, episodes: int, offset: int) -> str:
    """One series on the LIBERO task: initial states offset .. offset+episodes-1."""
    marks = []
    for i in range(episodes):
        scene.reset(init_state=offset + i)
        result, _ = practice(TREE, scene, store, task=scene.task.id,
                             instruction=scene.task.language, budget=600,
                             run_id=f"init{offset + i}")
        marks.append(mark(result))
    return " ".join(marks)


def rate(cells: list[str]) -> str:
    wins = sum(m.startswith("S") for c in cells for m in c.split())
    total = sum(len(c.split()) for c in cells)
    return f"{wins}/{total} ({wins / total:.0%})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", nargs="+", choices=("libero", "kinematic"),
                    default=["libero", "kinematic"])
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="series per variant (other seeds)")
    args = ap.parse_args()
    embedder = MiniLMEmbedder()
    table = Table("scene", "variant", "memory", "episodes (outcome + approach source)",
                  "success")
    cpu = {}
    with tempfile.TemporaryDirectory() as tmp:
        if "libero" in args.scenes:
            from tether.scenes.libero_scene import LiberoScene

            start = time.process_time()
            scene = LiberoScene(LIBERO_TASK)
            on, off = [], []
            try:
                for r in range(args.repeats):
                    store = ExperienceStore(Path(tmp) / f"libero-{r}.db", embedder)
                    on.append(libero_series(scene, store, args.episodes, args.episodes * r))
                    off.append(libero_series(scene, None, args.episodes, args.episodes * r))
            finally:
                scene.close()
            table.add_row("LIBERO", "cheese by the open drawer", "on", "\n".join(on), rate(on))
            table.add_row("", "", "off", "\n".join(off), rate(off), end_section=True)
            cpu["libero"] = time.process_time() - start
        if "kinematic" in args.scenes:
            start = time.process_time()
            for name, kwargs in VARIANTS.items():
                on, off = [], []
                for r in range(args.repeats):
                    store = ExperienceStore(Path(tmp) / f"{name}-{r}.db", embedder)
                    on.append(series(store, args.episodes, 100 * r, kwargs))
                    off.append(series(None, args.episodes, 100 * r, kwargs))
                table.add_row("kinematic", name, "on", "\n".join(on), rate(on))
                table.add_row("", "", "off", "\n".join(off), rate(off), end_section=True)
            cpu["kinematic"] = time.process_time() - start
    Console(width=150).print(table)
    print("CPU time: " + ", ".join(f"{k} {v:.0f} s" for k, v in cpu.items()))


if __name__ == "__main__":
    main()
