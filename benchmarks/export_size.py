"""File size and export time of a 1,000-tick run in each export format (html, rerun, mcap).

The run: the library's pick_place tree repeated on the physics-free scene (a first grasp that
slips, so there are error events), cut by the budget at exactly `--ticks` ticks, recorded with
frames of a drawn top-down view every 20 ticks and at events (`tether run`'s default period;
flat-coloured 128x128 JPEGs, smaller than LIBERO's rendered ones). Give a run directory instead
to measure a real run. The table shows the trace's size (trace.jsonl + frames/), then per format
the file size and the export time (best of `--repeats`, the format's library already imported;
the import itself is the last column).

    python benchmarks/export_size.py [--ticks 1000] [--repeats 3] [RUN_DIR]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tether.replay.export import FORMATS, export_run
from tether.replay.recorder import FrameSettings, Recorder
from tether.replay.trace import read_trace
from tether.trees.compiler import compile_document
from tether.trees.episode import run_episode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the run helpers
from tests.replay.recorded import SlipperyScene  # noqa: E402
from tests.trees.harness import BOXES, scene  # noqa: E402

LIBRARIES = {"html": None, "rerun": "rerun", "mcap": "mcap.writer"}


def record(run_dir: Path, ticks: int) -> Path:
    """A run of exactly `ticks` ticks: pick_place over and over, cut by the budget."""
    robot = SlipperyScene(BOXES, goal=scene().goal())
    document = {"tree": "pick_place_again", "root": {"repeat": {"n": 1000, "child": {
        "subtree": "pick_place", "with": {"object": "akita_black_bowl_1",
                                          "target": "plate_1"}}}}}
    root = compile_document(document, "benchmark", resolve=robot.resolve).root
    recorder = Recorder(run_dir, root, robot, frames=FrameSettings(cameras=("top",), every=20))
    recorder.finish(run_episode(root, robot, budget=ticks, observers=(recorder,)))
    return run_dir


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() \
        else path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path)
    parser.add_argument("--ticks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run_dir or record(Path(tmp) / "run", args.ticks)
        records = read_trace(run_dir)
        ticks = sum(r["k"] == "tick" for r in records)
        frames = sum(len(r.get("frames", {})) for r in records if r["k"] == "tick")
        errors = sum(e["kind"] == "error" for r in records if r["k"] == "tick"
                     for e in r.get("events", []))
        table = Table(title=f"{ticks} ticks, {frames} frames, {errors} error events "
                            f"(trace + frames: {size(run_dir) / 1e6:.2f} MB)")
        for column in ("format", "file", "MB", "bytes/tick", "export s (best)", "import s"):
            table.add_column(column, justify="left" if column in ("format", "file") else "right")
        for name, fmt in sorted(FORMATS.items()):
            start = time.perf_counter()
            if LIBRARIES[name]:
                importlib.import_module(LIBRARIES[name])
            imported = time.perf_counter() - start
            out = Path(tmp) / f"run{fmt.suffix}"
            best = float("inf")
            for _ in range(args.repeats):
                start = time.perf_counter()
                export_run(run_dir, out, name)
                best = min(best, time.perf_counter() - start)
            table.add_row(name, out.name, f"{size(out) / 1e6:.2f}", f"{size(out) / ticks:.0f}",
                          f"{best:.2f}", f"{imported:.2f}")
        Console().print(table)


if __name__ == "__main__":
    main()
