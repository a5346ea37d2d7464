"""Throughput of the bench runner: episodes per minute by worker count, scene reuse on and off.

    python benchmarks/bench_scaling.py --seeds 8     # the smoke suite on seeds 0-7; 1, 2 workers
    python benchmarks/bench_scaling.py --suite perturbed --seeds 1 --workers 1 2 4
    python benchmarks/bench_scaling.py --seeds 3 --workers 1 --reuse on off

Each measurement runs the suite (on seeds 0..K-1 with --seeds K) into a fresh temporary run
directory (so nothing is resumed) and counts wall time from the first worker's start to the last
row, including worker start-up (imports, first scene load). With `--reuse on off`, each worker
count runs with scene reuse (a worker resets its scene for its next episode) and without it
(every scene built afresh), and the last column says whether the rows of every run are the same
episode for episode (status, success, steps, tree status, error codes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from functools import partial

from rich.console import Console
from rich.table import Table

from tether.bench.runner import bench, run_episode
from tether.bench.suite import load_suite

OUTCOME = ("key", "status", "success", "steps", "tree_status", "ended_by", "error_codes", "error")


def outcomes(rows: list[dict]) -> list[tuple]:
    """What an episode's row says happened, without its wall time."""
    return [tuple(str(r[k]) for k in OUTCOME) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--seeds", type=int, help="run seeds 0..K-1 instead of the suite's")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reuse", nargs="+", choices=("on", "off"), default=["on"],
                    help="scene reuse in workers: on, off, or both to compare")
    args = ap.parse_args()
    suite = load_suite(args.suite)
    if args.seeds:
        suite = replace(suite, seeds=tuple(range(args.seeds)))
    table = Table("workers", "reuse", "episodes", "wall s", "episodes/min", "speed-up",
                  "same rows", title=f"bench runner throughput ({args.suite})")
    base = first = None
    for n in args.workers:
        for reuse in args.reuse:
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                rows = bench(suite, out, workers=n, progress=False,
                             execute=partial(run_episode, reuse=reuse == "on"))
                wall = time.perf_counter() - start
            rate = 60 * len(rows) / wall
            base = base or rate
            first = first or outcomes(rows)
            table.add_row(str(n), reuse, str(len(rows)), f"{wall:.1f}", f"{rate:.2f}",
                          f"{rate / base:.2f}x", "yes" if outcomes(rows) == first else "NO")
    Console().print(table)


if __name__ == "__main__":
    main()
