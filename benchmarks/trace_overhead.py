"""What recording a trace costs per tick, and how many bytes a tick takes.

The library's pick_place tree runs on the physics-free scene (ticks of well under a millisecond,
the worst case for relative overhead) without a recorder, with the recorder and no frames, and
with frames every 10 ticks and at events (a drawn top-down view, so this measures writing them,
not rendering). With `--libero`, the same tree also runs one real LIBERO episode
(libero_goal/8, init state 0) each way, where a step costs tens of milliseconds and frames are
rendered by MuJoCo. The table shows microseconds per tick (best of `--repeats`), the ratio to no
recording (target <= 1.3 without frames) and trace bytes per tick.

    python benchmarks/trace_overhead.py [--episodes 20] [--repeats 5] [--libero]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tether.replay.recorder import FrameSettings, Recorder
from tether.replay.trace import TRACE_NAME
from tether.trees.compiler import compile_tree
from tether.trees.episode import run_episode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds the run helpers
from tests.replay.recorded import PICK_PLACE, SlipperyScene  # noqa: E402
from tests.trees.harness import BOXES, scene  # noqa: E402

MODES = {"no recording": None, "recording, no frames": FrameSettings(),
         "recording, frames every 10": FrameSettings(cameras=("top",), every=10)}


def kinematic_episode(frames: FrameSettings | None, out: Path) -> tuple[int, float, int]:
    """One episode (with one slipped grasp): ticks, seconds, trace bytes."""
    robot = SlipperyScene(BOXES, goal=scene().goal())
    root = compile_tree(PICK_PLACE, {"object": "akita_black_bowl_1", "target": "plate_1"},
                        resolve=robot.resolve).root
    return timed(root, robot, frames, out, budget=600)


def timed(root, robot, frames: FrameSettings | None, out: Path, budget: int
          ) -> tuple[int, float, int]:
    ticks = [0]

    def count(tick) -> None:
        ticks[0] = tick.index

    start = time.perf_counter()
    recorder = Recorder(out, root, robot, frames=frames) if frames is not None else None
    observers = (count,) if recorder is None else (recorder, count)
    result = run_episode(root, robot, budget=budget, observers=observers)
    if recorder is not None:
        recorder.finish(result)
    seconds = time.perf_counter() - start
    size = (out / TRACE_NAME).stat().st_size if recorder is not None else 0
    size += sum(f.stat().st_size for f in (out / "frames").glob("*")) if (
        out / "frames").is_dir() else 0
    return ticks[0], seconds, size


def measure(episode: Callable[[FrameSettings | None, Path], tuple[int, float, int]],
            episodes: int, repeats: int) -> dict[str, tuple[float, float]]:
    """Per mode: best microseconds per tick over `repeats` batches, and bytes per tick."""
    out: dict[str, tuple[float, float]] = {}
    for name, frames in MODES.items():
        best, per_tick_bytes = float("inf"), 0.0
        for _ in range(repeats):
            ticks = seconds = size = 0
            for _ in range(episodes):
                folder = Path(tempfile.mkdtemp(prefix="trace-bench-"))
                try:
                    t, s, b = episode(frames, folder)
                finally:
                    shutil.rmtree(folder)
                ticks, seconds, size = ticks + t, seconds + s, size + b
            best = min(best, seconds / ticks * 1e6)
            per_tick_bytes = size / ticks
        out[name] = (best, per_tick_bytes)
    return out


def libero_episode(frames: FrameSettings | None, out: Path) -> tuple[int, float, int]:
    from tether.scenes.libero_scene import LiberoScene

    robot = LiberoScene("libero_goal/8", init_state=0, seed=0)
    try:
        root = compile_tree(PICK_PLACE, {"object": "akita_black_bowl_1", "target": "plate_1"},
                            resolve=robot.resolve).root
        if frames is not None and frames.cameras:
            frames = FrameSettings(cameras=("agentview", "robot0_eye_in_hand"), every=20)
        return timed(root, robot, frames, out, budget=600)
    finally:
        robot.close()


def table(title: str, rows: dict[str, tuple[float, float]]) -> Table:
    base = rows["no recording"][0]
    t = Table("mode", "µs / tick", "ratio", "bytes / tick", title=title)
    for name, (us, size) in rows.items():
        t.add_row(name, f"{us:,.0f}", f"{us / base:.2f}x", f"{size:,.0f}" if size else "-")
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--libero", action="store_true", help="also one LIBERO episode per mode")
    args = parser.parse_args()
    console = Console()
    console.print(table("pick_place on the physics-free scene (target: <= 1.3x without frames)",
                        measure(kinematic_episode, args.episodes, args.repeats)))
    if args.libero:
        console.print(table("pick_place on LIBERO libero_goal/8, init state 0 (frames: agentview "
                            "+ wrist, 128 px, every 20 ticks and at events)",
                            measure(libero_episode, 1, 1)))


if __name__ == "__main__":
    main()
