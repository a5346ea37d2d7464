"""How long the viewer takes to open a long run in headless Chromium (target: 10,000 ticks <= 2 s).

A 10,000-tick run is recorded on the physics-free scene (pick_place repeated, the first grasp
slipping, frames every 20 ticks), served by `tether view`'s server on 127.0.0.1, and opened in
the system chromium. The table shows the time from navigation to the page being ready (tree
drawn, tick shown), the part of it spent reading and indexing the trace in the page, the time to
jump to the last tick, and the trace's size.

    python benchmarks/viewer_load.py [--ticks 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.table import Table

from tether.replay.recorder import FrameSettings, Recorder
from tether.replay.trace import TRACE_NAME
from tether.replay.viewer.server import Background
from tether.trees.compiler import compile_tree
from tether.trees.episode import run_episode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the run helpers
from tests.replay.recorded import SlipperyScene  # noqa: E402
from tests.trees.harness import BOXES, scene  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update"]
TREE = """
root:
  repeat:
    n: 100000
    child:
      subtree: pick_place
      with: {object: akita_black_bowl_1, target: plate_1}
"""


def record_long_run(folder: Path, ticks: int) -> Path:
    tree = folder / "forever.yaml"
    tree.write_text(TREE, encoding="utf-8")
    robot = SlipperyScene(BOXES, goal=scene().goal())
    root = compile_tree(tree, resolve=robot.resolve).root
    run_dir = folder / "run"
    recorder = Recorder(run_dir, root, robot, meta={"tree": str(tree), "task": "kinematic"},
                        frames=FrameSettings(cameras=("top",), every=20))
    recorder.finish(run_episode(root, robot, budget=ticks, observers=(recorder,)))
    return run_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = record_long_run(Path(tmp), args.ticks)
        size = (run_dir / TRACE_NAME).stat().st_size
        table = Table("run", "open (s)", "trace parsed + indexed (s)", "jump to last tick (s)",
                      "trace", title="viewer load in headless Chromium (target: <= 2 s)")
        with Background(run_dir) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for i in range(args.repeats):
                page = browser.new_page(viewport={"width": 1500, "height": 950})
                start = time.perf_counter()
                page.goto(url)
                page.wait_for_selector('body[data-ready="1"]', timeout=60_000)
                opened = time.perf_counter() - start
                parsed = page.evaluate("window.tether.loadMs") / 1000
                ticks = page.evaluate("window.tether.T.ticks.length")
                start = time.perf_counter()
                page.keyboard.press("End")
                page.wait_for_function(f"document.querySelector('#tick-label').dataset.tick == "
                                       f"'{ticks}'")
                jump = time.perf_counter() - start
                table.add_row(f"{ticks:,} ticks (#{i + 1})", f"{opened:.2f}", f"{parsed:.2f}",
                              f"{jump:.3f}", f"{size / 1e6:.1f} MB")
                page.close()
            browser.close()
        Console().print(table)


if __name__ == "__main__":
    main()
