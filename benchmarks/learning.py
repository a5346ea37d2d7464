"""The learning measurement: does long-term memory turn a scene-specific failure into success?

Scene: `scenes.obstacles.shelf_scene`, a cream cheese box under a shelf, to be put on a plate.
Tree: `trees/library/recall_pick_place.yaml`, whose approach offset comes from `retrieve` (default:
from above, which the shelf blocks). Each row is one variant run for `--episodes` episodes
(the box moves a few cm per episode with the seed) with a fresh MiniLM store, and again with
memory off. A cell shows each episode's outcome (S/F) and where its approach came from
(d: default, r: a rule, s: a past success).

    python benchmarks/learning.py [--episodes 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from blackboard.episode import storage
from blackboard.store import ExperienceStore
from models.embedders import MiniLMEmbedder
from scenes.obstacles import SHELF_INSTRUCTION, SHELF_TASK, shelf_scene
from trees.compiler import LIBRARY
from trees.memory import practice

TREE = LIBRARY / "recall_pick_place.yaml"
VARIANTS = {
    "shelf over the box": {},
    "shelf, wall at -x": {"sides_blocked": ("-x",)},
    "control: no shelf": {"shelf": False},
}


def series(store: ExperienceStore | None, episodes: int, offset: int, kwargs: dict) -> str:
    marks = []
    for i in range(episodes):
        result, _ = practice(TREE, shelf_scene(offset + i, **kwargs), store, task=SHELF_TASK,
                             instruction=SHELF_INSTRUCTION, budget=600, run_id=f"ep{i}")
        source = storage()["/memory/advice"]["approach"]["source"][0]
        marks.append(("S" if result.success else "F") + source)
    return " ".join(marks)


def rate(cells: list[str]) -> str:
    wins = sum(m.startswith("S") for c in cells for m in c.split())
    total = sum(len(c.split()) for c in cells)
    return f"{wins}/{total} ({wins / total:.0%})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="series per variant (other seeds)")
    args = ap.parse_args()
    embedder = MiniLMEmbedder()
    table = Table("variant", "memory", "episodes (outcome + approach source)", "success")
    with tempfile.TemporaryDirectory() as tmp:
        for name, kwargs in VARIANTS.items():
            on, off = [], []
            for r in range(args.repeats):
                store = ExperienceStore(Path(tmp) / f"{name}-{r}.db", embedder)
                on.append(series(store, args.episodes, 100 * r, kwargs))
                off.append(series(None, args.episodes, 100 * r, kwargs))
            table.add_row(name, "on", "\n".join(on), rate(on))
            table.add_row("", "off", "\n".join(off), rate(off), end_section=True)
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
