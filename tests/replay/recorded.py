"""Recorded runs for trace and viewer tests: the library's pick_place tree on a physics-free
scene whose first grasp slips (an EMPTY_GRASP, then the grasp subtree's recovery), with a
top-down "camera" so frames can be checked without MuJoCo.

    run_dir, result = record_pick_place(tmp_path / "run", frame_every=5)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.trees.harness import BOXES, scene
from tether.replay.recorder import FrameSettings, Recorder
from tether.scenes.kinematic import FINGER_SPEED, KinematicScene
from tether.scenes.robot import CLOSE
from tether.trees.compiler import LIBRARY, compile_tree
from tether.trees.episode import EpisodeResult, run_episode

PICK_PLACE = LIBRARY / "pick_place.yaml"
PIXELS_PER_M = 200  # the top-down camera sees 0.64 m x 0.64 m at 128 px


class SlipperyScene(KinematicScene):
    """The first `slips` grasps close on nothing; `render` draws the table from above."""

    def __init__(self, *args, slips: int = 1, **kwargs):
        super().__init__(*args, **kwargs)
        self.slips, self.slipping = slips, False

    def _apply(self, action: np.ndarray) -> None:
        if action[6] < CLOSE:
            self.slipping = False
        super()._apply(action)

    def _close_fingers(self) -> None:
        if self.held is None and self.slips > 0 and not self.slipping:
            self.slips, self.slipping = self.slips - 1, True
        if self.slipping:
            self.width = max(0.0, self.width - FINGER_SPEED)
            return
        super()._close_fingers()

    def render(self, camera: str, size: tuple[int, int], draft: bool = False) -> np.ndarray:
        h, w = size
        image = np.full((h, w, 3), (205, 180, 140), np.uint8)

        def px(x: float, y: float) -> tuple[int, int]:
            return int(h / 2 - y * PIXELS_PER_M), int(w / 2 + x * PIXELS_PER_M)

        for i, box in enumerate(self.boxes.values()):
            r0, c0 = px(box.pos[0] - box.half[0], box.pos[1] + box.half[1])
            r1, c1 = px(box.pos[0] + box.half[0], box.pos[1] - box.half[1])
            image[max(r0, 0):max(r1, 0), max(c0, 0):max(c1, 0)] = (60 + 70 * i, 90, 200 - 60 * i)
        r, c = px(*self.eef[:2])
        colour = (220, 30, 30) if self.width < 0.07 else (30, 160, 30)
        image[max(r - 3, 0):r + 3, max(c - 3, 0):c + 3] = colour
        return image


def record_pick_place(run_dir: Path, *, frame_every: int = 5, slips: int = 1,
                      budget: int = 600, cameras: tuple[str, ...] = ("top",),
                      ) -> tuple[Path, EpisodeResult]:
    """Run pick_place on a `SlipperyScene` with the recorder on; the run directory and result."""
    robot = SlipperyScene(BOXES, goal=scene().goal(), slips=slips)
    compiled = compile_tree(PICK_PLACE, {"object": "akita_black_bowl_1", "target": "plate_1"},
                            resolve=robot.resolve)
    recorder = Recorder(run_dir, compiled.root, robot, meta={"tree": str(PICK_PLACE),
                        "task": "kinematic/put_the_bowl_on_the_plate"},
                        frames=FrameSettings(cameras=cameras, every=frame_every))
    result = run_episode(compiled.root, robot, budget=budget, task="kinematic",
                         params=compiled.bindings, observers=(recorder,))
    recorder.finish(result)
    return run_dir, result


def statuses_at(records: list[dict]) -> dict[int, dict[int, str]]:
    """Every node's status after each tick, replayed from a trace's change records."""
    nodes = next(r["nodes"] for r in records if r["k"] == "tree")
    now = {n["id"]: "INVALID" for n in nodes}
    out = {}
    for r in records:
        if r["k"] == "tick":
            for i, (status, _) in r.get("changes", {}).items():
                now[int(i)] = status
            out[r["t"]] = dict(now)
    return out
