"""A process's first LIBERO scene with and without the store of compiled models; prints a table.

    python benchmarks/model_store.py                      # 3 tasks, 3 rounds
    python benchmarks/model_store.py --tasks libero_10/0 --rounds 5 --command

Each row builds the task's scene in a fresh process (`LiberoScene(task)`, then closed), as
`tether run` does, with `TETHER_MODEL_CACHE=off` (the XML compiled: textures decoded, meshes
built) and with a store already holding the model (read from its MJB file), alternating the two
in every round; the best of the rounds is shown (wall, and CPU seconds, which a busy machine
disturbs less), and the ratio is store / compiled CPU. `--command`
adds the default demo command (`tether run` of the library's pick_place, privileged, no frames,
no memory) timed whole the same way.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

from rich.console import Console
from rich.table import Table

BUILD = ("from tether.scenes.libero_scene import LiberoScene\n"
         "LiberoScene({task!r}).close()")
DEMO = ["run", "trees/library/pick_place.yaml", "--seed", "0", "--frame-every", "0",
        "--memory", "none", "--runs", "{runs}", "--task"]


def timed(argv: list[str], store: str) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one run of `argv` with `store`."""
    env = {**os.environ, "TETHER_MODEL_CACHE": store, "MUJOCO_GL": "egl"}
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["libero_goal/put_the_bowl_on_the_plate",
                                                   "libero_10/0", "libero_object/0"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--command", action="store_true", help="also time the whole demo command")
    args = ap.parse_args(argv)
    table = Table(title="first scene of a process: compiled vs read from the store (best of "
                        f"{args.rounds}, fresh processes)")
    for column in ("what", "compiled: wall / CPU (s)", "from the store: wall / CPU (s)",
                   "store / compiled (CPU)"):
        table.add_column(column)
    tether = os.path.join(os.path.dirname(sys.executable), "tether")
    with tempfile.TemporaryDirectory() as store, tempfile.TemporaryDirectory() as runs:
        for task in args.tasks:
            rows = [(f"scene {task}", [sys.executable, "-c", BUILD.format(task=task)])]
            if args.command:
                demo = [tether, *(a.format(runs=runs) for a in DEMO), task]
                rows.append((f"tether run {task}", demo))
            for what, command in rows:
                for _ in range(2):  # a model is stored on its second compile
                    timed(command, store)
                off, on = [], []
                for _ in range(args.rounds):
                    off.append(timed(command, "off"))
                    on.append(timed(command, store))
                (off_wall, off_cpu), (on_wall, on_cpu) = (
                    [min(t[i] for t in runs) for i in (0, 1)] for runs in (off, on))
                table.add_row(what, f"{off_wall:.2f} / {off_cpu:.2f}",
                              f"{on_wall:.2f} / {on_cpu:.2f}", f"{on_cpu / off_cpu:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
