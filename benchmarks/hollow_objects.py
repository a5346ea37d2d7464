"""Which movable objects are hollow (open-topped), read from their geometry; prints a table.

    python benchmarks/hollow_objects.py                                  # LIBERO's four suites
    python benchmarks/hollow_objects.py libero_10_object tether          # any suites or sets

Every task of each suite is opened at init state 0 (privileged geometry: `LiberoScene`); for each
object category (the object's name without its `_N` suffix), the first time it is met: the task,
its bounding box's height, its depth ratio (`LiberoScene.depth_ratio`: the median, over five
rays straight down into the middle of its footprint against its own collision geoms, of how far
below its top it begins, over its height) and the verdict `is_hollow` gives
(`tether.scenes.hollows.HOLLOW_RATIO`).
"""

from __future__ import annotations

import argparse
import os
import re

from rich.console import Console
from rich.table import Table

os.environ.setdefault("MUJOCO_GL", "egl")  # offscreen on a machine without a display

from tether.scenes.catalogue import suite_tasks
from tether.scenes.hollows import HOLLOW_RATIO
from tether.scenes.perturbations import open_scene

SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=list(SUITES))
    args = parser.parse_args()
    table = Table(title=f"hollow objects (depth ratio >= {HOLLOW_RATIO})")
    for column in ("category", "first met in", "height (cm)", "depth ratio", "hollow"):
        table.add_column(column)
    seen: set[str] = set()
    for suite in args.suites:
        for task in suite_tasks(suite):
            scene = open_scene(task, init_state=0)
            try:
                for name in scene.objects():
                    category = re.sub(r"_\d+$", "", name)
                    if category in seen:
                        continue
                    seen.add(category)
                    low, high = scene.extent_of(name)
                    table.add_row(category, task.id, f"{(high[2] - low[2]) * 100:.1f}",
                                  f"{scene.depth_ratio(name):.2f}", str(scene.is_hollow(name)))
            finally:
                scene.close()
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
