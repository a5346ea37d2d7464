"""Where a `tether train` step's time goes on the CPU: the batch (lerobot's per-frame
`__getitem__` + collate vs `FrameCache`) and the whole step as `train()` runs it.

    taskset -c 1 python benchmarks/train_step.py DATA --batch-size 16 --chunk-size 10 --steps 30

Times are CPU seconds of this process (`time.process_time`, what the step costs however loaded
the core is) and wall seconds (what it took here, other jobs on the core included). The step
rows are steps 2..N of `train()` into a temporary folder (step 1 carries the start-up: imports,
opening the dataset, filling the cache), at one torch thread, saving every 50 steps.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tether.models.frame_cache import FrameCache
from tether.models.train import BatchOrder, TrainConfig, check_dataset, train


def timed(work, repeats: int) -> tuple[float, float]:
    """Mean (CPU, wall) seconds of `work()` over `repeats` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(repeats):
        work()
    return (time.process_time() - cpu) / repeats, (time.perf_counter() - wall) / repeats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--chunk-size", type=int, default=10)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batches", type=int, default=20, help="batches timed per source")
    args = ap.parse_args()
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from torch.utils.data import default_collate

    torch.set_num_threads(1)
    fps = check_dataset(args.data)["fps"]
    dataset = LeRobotDataset(f"tether/{args.data.name}", root=args.data,
                             delta_timestamps={"action": [i / fps for i in range(args.chunk_size)]})
    cpu, wall = time.process_time(), time.perf_counter()
    cache = FrameCache(dataset)
    fill = (time.process_time() - cpu, time.perf_counter() - wall)
    order = iter(BatchOrder(len(dataset), args.batch_size, seed=0))
    sources = {"lerobot __getitem__ + collate":
               lambda: default_collate([dataset[i] for i in next(order)]),
               "FrameCache.batch": lambda: cache.batch(next(order))}
    rows = [(name, *timed(work, args.batches)) for name, work in sources.items()]
    marks: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as out:
        train(TrainConfig(dataset=args.data, out=Path(out) / "ck", steps=args.steps,
                          batch_size=args.batch_size, chunk_size=args.chunk_size, threads=1,
                          save_every=50),
              lambda step, loss: marks.append((time.process_time(), time.perf_counter())))
    steps = len(marks) - 1
    rows.append((f"train() step (FrameCache), steps 2..{args.steps}",
                 (marks[-1][0] - marks[0][0]) / steps, (marks[-1][1] - marks[0][1]) / steps))
    table = Table(title=f"{args.data}: {len(dataset)} frames, batch {args.batch_size}, chunk "
                        f"{args.chunk_size}, one torch thread")
    for column in ("what", "CPU s", "wall s"):
        table.add_column(column)
    for name, c, w in rows:
        table.add_row(name, f"{c:.3f}", f"{w:.3f}")
    Console().print(table)
    held = sum(v.numel() * v.element_size() for v in cache.columns.values()
               if isinstance(v, torch.Tensor))
    print(f"filling the cache: {fill[0]:.1f} s CPU, {fill[1]:.1f} s wall; {held / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
