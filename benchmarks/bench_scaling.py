"""Throughput of the bench runner: episodes per minute with 1 and 2 worker processes.

    python benchmarks/bench_scaling.py --seeds 8     # the smoke suite on seeds 0-7; 1, 2 workers
    python benchmarks/bench_scaling.py --suite perturbed --seeds 1 --workers 1 2 4

Each measurement runs the suite (on seeds 0..K-1 with --seeds K) into a fresh temporary run
directory (so nothing is resumed) and counts wall time from the first worker's start to the last
row, including worker start-up (imports, first scene load).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace

from rich.console import Console
from rich.table import Table

from tether.bench.runner import bench
from tether.bench.suite import load_suite


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--seeds", type=int, help="run seeds 0..K-1 instead of the suite's")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    suite = load_suite(args.suite)
    if args.seeds:
        suite = replace(suite, seeds=tuple(range(args.seeds)))
    table = Table("workers", "episodes", "wall s", "episodes/min", "speed-up",
                  title=f"bench runner throughput ({args.suite})")
    base = None
    for n in args.workers:
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            rows = bench(suite, out, workers=n, progress=False)
            wall = time.perf_counter() - start
        rate = 60 * len(rows) / wall
        base = base or rate
        table.add_row(str(n), str(len(rows)), f"{wall:.1f}", f"{rate:.2f}", f"{rate / base:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
