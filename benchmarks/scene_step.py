"""Control-step time of tether's scenes against bare LIBERO, in the same run; prints a table.

    python benchmarks/scene_step.py                       # libero_goal/8, 40 steps per row
    python benchmarks/scene_step.py --task tether/0 --steps 100

Rows: LIBERO's `ControlEnv` without cameras and with two 128 px cameras (robosuite renders them
every step), then `LiberoScene` the same two ways, a `PerturbedScene` with run-time
perturbations, and an on-demand `Observer` render (RGB only, and RGB + depth + masks). Every row
steps the same seeded random OSC_POSE actions after a reset and the usual settling; only the
stepping is timed. Ratios are against bare LIBERO with the same cameras.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from rich.console import Console
from rich.table import Table

os.environ.setdefault("MUJOCO_GL", "egl")  # offscreen on a machine without a display

from tether.scenes.catalogue import get_task
from tether.scenes.libero_setup import import_libero

CAMS = ["agentview", "robot0_eye_in_hand"]


def actions(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    a = rng.uniform(-0.3, 0.3, (n, 7))
    a[:, 6] = -1.0
    return a


def time_steps(step, acts: np.ndarray) -> float:
    start = time.perf_counter()
    for a in acts:
        step(a)
    return (time.perf_counter() - start) / len(acts) * 1000


def bare(task, acts, cameras: bool) -> float:
    import_libero()
    from libero.libero.envs.env_wrapper import ControlEnv

    env = ControlEnv(bddl_file_name=str(task.bddl_file), controller="OSC_POSE",
                     use_camera_obs=cameras, has_offscreen_renderer=cameras,
                     camera_names=CAMS, camera_heights=128, camera_widths=128)
    try:
        env.seed(0)
        env.reset()
        if not task.sampled:
            env.set_init_state(task.init_states()[0])
        return time_steps(env.step, acts)
    finally:
        env.close()


def scene_row(task, acts, **kwargs) -> float:
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(task, init_state=0, seed=0, **kwargs)
    try:
        return time_steps(scene.step, acts)
    finally:
        scene.close()


def perturbed_row(task, acts) -> float:
    from tether.scenes.perturbations import build
    from tether.scenes.perturbations.scene import PerturbedScene

    specs = ["actuation_noise", "pose_noise", "object_move:fallback_step=0"]
    scene = PerturbedScene(task, [build(s) for s in specs], init_state=0, seed=0)
    try:
        return time_steps(scene.step, acts)
    finally:
        scene.close()


def observer_rows(task, acts) -> tuple[float, float]:
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.observations import Observer

    scene = LiberoScene(task, init_state=0, seed=0)
    observer = Observer(scene)
    try:
        def rgb(a):
            scene.step(a)
            for c in CAMS:
                observer.observe(c, (128, 128))

        def full(a):
            scene.step(a)
            for c in CAMS:
                observer.observe(c, (128, 128), depth=True, segmentation=True)

        return time_steps(rgb, acts), time_steps(full, acts)
    finally:
        observer.close()
        scene.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="libero_goal/put_the_bowl_on_the_plate")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    task, acts = get_task(args.task), actions(args.steps)
    bare_none, bare_cams = bare(task, acts, False), bare(task, acts, True)
    rows = [
        ("LIBERO ControlEnv, no cameras", bare_none, bare_none),
        ("LIBERO ControlEnv, 2 cameras 128 px every step", bare_cams, bare_cams),
        ("LiberoScene, no cameras", scene_row(task, acts), bare_none),
        ("LiberoScene, 2 cameras 128 px every step",
         scene_row(task, acts, cameras=CAMS, image_size=(128, 128)), bare_cams),
        ("PerturbedScene (actuation+pose noise, object_move), no cameras",
         perturbed_row(task, acts), bare_none),
    ]
    rgb, full = observer_rows(task, acts)
    rows += [("LiberoScene + Observer: 2 cameras RGB on demand, every step", rgb, bare_cams),
             ("LiberoScene + Observer: 2 cameras RGB+depth+masks, every step", full, bare_cams)]
    table = Table("configuration", "ms / step", "ratio to bare LIBERO (same cameras)",
                  title=f"control step on {task.id}, {args.steps} steps")
    for name, ms, ref in rows:
        table.add_row(name, f"{ms:.1f}", f"{ms / ref:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
