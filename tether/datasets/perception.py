"""`tether collect-perception`: rendered scenes with the simulator's masks as labels.

For each task, each appearance variant (a list of perturbations: none, recolour, lighting,
camera_angle, occlusion, distractors, identical copies; `robot_init_pose` is always added, so the
wrist camera sees the table from many poses) and each init state, the scene is opened (kept and
reset through a `SceneCache` when the model is the same: reset-stage perturbations reuse it) and
every camera is rendered once with RGB, depth and the simulator's per-entity segmentation. The
frames go into a perception dataset (`tether.models.perception.dataset`) with each entity's true
centre (the centre of its geometry's box), so training and the benchmark need no simulator.

    collect_perception(PerceptionCollectConfig(tasks=["libero_goal/0"], out=Path("data/seg")))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tether.errors import TetherError
from tether.models.perception.dataset import DatasetWriter
from tether.scenes.observations import CAMERAS

VARIANTS = ("", "recolour", "lighting", "lighting:brightness=0.5",
            "camera_angle:yaw=25,pitch=8,random=true", "occlusion", "distractors:n=3",
            "identical_copies:n=2")
ALWAYS = "robot_init_pose:scale=0.3"


@dataclass(frozen=True)
class PerceptionCollectConfig:
    """What to render: `tasks` x `variants` x `init_states` init states from `first_init_state`
    (those a task has), every camera in `cameras` at `size`; `seed` seeds the perturbations."""

    tasks: Sequence[str]
    out: Path
    init_states: int = 10
    first_init_state: int = 0
    variants: Sequence[str] = VARIANTS
    cameras: Sequence[str] = CAMERAS
    size: tuple[int, int] = (128, 128)
    seed: int = 0


@dataclass
class PerceptionCollectReport:
    root: str
    frames: int
    scenes: int
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0


def collect_perception(config: PerceptionCollectConfig,
                       progress: Callable[[int, int], None] | None = None
                       ) -> PerceptionCollectReport:
    """Render and label every (task, variant, init state); `progress(done, total)` after each.
    A variant a task cannot take (no room for distractors, ...) is skipped and reported."""
    from tether.scenes.catalogue import get_task
    from tether.scenes.perturbations import build
    from tether.scenes.perturbations.base import SCENE

    if not config.tasks:
        raise TetherError("no task to render; give SUITE/TASK_NAME or SUITE/INDEX")
    if config.out.exists():
        raise TetherError(f"{config.out} exists; collect-perception writes a new dataset "
                          f"(choose another --out)")
    if config.init_states < 1 or config.first_init_state < 0:
        raise TetherError(f"init states must be at least 1 from a first one >= 0, not "
                          f"{config.init_states} from {config.first_init_state}")
    variants = {v: [build(ALWAYS), *([build(v)] if v else [])] for v in config.variants}
    first = config.first_init_state
    states = {t: range(first, min(first + config.init_states, get_task(t).num_init_states))
              for t in config.tasks}
    from tether.scenes.observations import Observer
    from tether.scenes.scene_cache import SceneCache

    start = time.perf_counter()
    writer = DatasetWriter(config.out, config.size, info={"collect": {
        **{k: v for k, v in asdict(config).items() if k != "out"}, "always": ALWAYS}})
    scenes = SceneCache(size=1)
    total = sum(map(len, states.values())) * len(variants)
    done, skipped, observer = 0, [], None
    try:
        for task in config.tasks:
            for variant, perturbations in variants.items():
                scene_stage = any(p.stage == SCENE for p in perturbations)
                for init_state in states[task]:
                    seed = config.seed if scene_stage else config.seed + init_state
                    try:
                        scene = scenes.open(task, perturbations, init_state=init_state, seed=seed)
                    except TetherError as exc:
                        skipped.append(f"{task} {variant}: {exc}")
                        done += states[task].stop - init_state
                        break
                    if observer is None or observer.scene is not scene:
                        if observer is not None:
                            observer.close()
                        observer = Observer(scene)
                    for camera in config.cameras:
                        view = observer.observe(camera, config.size, depth=True,
                                                segmentation=True)
                        truth = {n: sum(scene.extent_of(n)) / 2 for n in view.masks}
                        writer.add(view.rgb, view.depth, view.geometry, view.masks, truth,
                                   {"task": task, "init_state": init_state,
                                    "variant": variant or "none", "seed": seed})
                    done += 1
                    if progress:
                        progress(done, total)
    finally:
        writer.close()
        if observer is not None:
            observer.close()
        scenes.close()
    return PerceptionCollectReport(str(config.out), len(writer.records), scenes.built, skipped,
                                   round(time.perf_counter() - start, 1))
