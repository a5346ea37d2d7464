"""`tether collect`: scripted-expert grasp demonstrations recorded as a LeRobotDataset.

Each episode opens a LIBERO scene (one per task, kept and reset to the next init state through a
`tether.scenes.scene_cache.SceneCache`: the same episode a fresh scene gives) and runs a two-leaf
tree through the tick loop (`tether.trees.episode.run_episode`, the command slot, like every other
caller): `move_to` stages the end effector analytically at a pre-grasp pose above the object's grasp
point (with a random offset, so the recorded grasps include corrections the learned policy must make
from what it sees), then the `vla` leaf drives the `ScriptedGrasp` expert until the object is
lifted, through a `Recording` policy that keeps per step the requested camera images (rendered on
demand, in LIBERO's image convention), the 8-D state, the 7-D action and the instruction. Staging is
not recorded and renders nothing. Episodes whose grasp fails are dropped.

    collect(["libero_goal/put_the_bowl_on_the_plate"], episodes=40, root=Path("data/grasp"))

The dataset uses lerobot's own format and writer (`LeRobotDataset.create`, images stored as
PNG, no video encoding), so lerobot's tools and `tether train` read it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import py_trees

from tether.behaviours.conditions import PredicateCall
from tether.behaviours.primitives import MoveTo, Target
from tether.behaviours.vla import VLA
from tether.errors import TetherError
from tether.models.observation import (
    ACTION_NAMES,
    STATE_NAMES,
    CameraSpec,
    Observation,
    save_drafted,
)
from tether.models.policy import Policy, check_chunk
from tether.models.scripted import ScriptedGrasp
from tether.scenes.grasps import grasp_box, grasp_point
from tether.scenes.robot import Robot
from tether.scenes.vocabulary import category_of, noun
from tether.trees.episode import run_episode

FPS = 20
# The datasets hold images, no video. Naming a video backend spares lerobot its probe of
# torchcodec, which warns, with a page of traceback, at every opening where FFmpeg is missing.
VIDEO_BACKEND = "pyav"
WRIST = CameraSpec("robot0_eye_in_hand", (64, 64), "image2")
AGENTVIEW = CameraSpec("agentview", (64, 64), "image")
CAMERAS = {"wrist": WRIST, "agentview": AGENTVIEW}
LIFT = 0.06  # m: a grasp is recorded until the object is this far up
GRASP_STEPS = 100  # expert actions before a grasp counts as failed


@dataclass(frozen=True)
class StageConfig:
    """Where the grasp phase starts: `height` m above the grasp point, plus a uniform random
    offset of up to `jitter_xy` m in x and y and `jitter_z` m in z."""

    height: float = 0.10
    jitter_xy: float = 0.02
    jitter_z: float = 0.01
    tolerance: float = 0.008
    max_steps: int = 150


@dataclass
class CollectReport:
    root: str
    episodes: int
    frames: int
    attempts: int
    seconds: float
    tasks: list[str] = field(default_factory=list)
    cameras: list[str] = field(default_factory=list)
    stage: dict = field(default_factory=dict)
    seed: int = 0
    first_init_state: int = 0

    def save(self) -> None:
        """Write the report beside lerobot's metadata (`meta/tether_collect.json`)."""
        path = Path(self.root) / "meta" / "tether_collect.json"
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")


def instruction_for(name: str) -> str:
    """The sub-task prompt of a grasp: 'pick up the black bowl' for `akita_black_bowl_1`."""
    return "pick up the " + noun(category_of(name))


class Recording:
    """A policy recording what it is asked and answers: it renders `cameras` for each
    observation (the `vla` leaf renders what its policy declares) and keeps every (observation,
    action) of `expert` as a dataset frame."""

    def __init__(self, expert: Policy, cameras: Sequence[CameraSpec]):
        self.expert, self.cameras = expert, tuple(cameras)
        self.frames: list[dict] = []

    def reset(self) -> None:
        self.expert.reset()
        self.frames = []

    def infer(self, obs: Observation) -> np.ndarray:
        action = check_chunk(self.expert.infer(obs))[:1].astype(np.float32)
        self.frames.append({**{f"observation.images.{k}": v for k, v in obs.images.items()},
                            "observation.state": obs.state, "action": action[0],
                            "task": obs.instruction})
        return action


def grasp_tree(robot: Robot, obj: str, recording: Recording, instruction: str,
               config: StageConfig, rng: np.random.Generator) -> py_trees.behaviour.Behaviour:
    """Stage, then grasp: `move_to` (gripper open, orientation kept) a pre-grasp point above
    `obj`'s grasp point with a random offset, then the `vla` leaf driving `recording` until
    `obj` is `LIFT` m up (FAILURE after `GRASP_STEPS` actions)."""
    goal = grasp_point(*grasp_box(robot, obj), hollow=robot.is_hollow(obj)) \
        + np.array([0.0, 0.0, config.height])
    goal = goal + rng.uniform([-config.jitter_xy, -config.jitter_xy, -config.jitter_z],
                              [config.jitter_xy, config.jitter_xy, config.jitter_z])
    stage = MoveTo("stage", Target(world=tuple(float(v) for v in goal)),
                   tolerance=config.tolerance, max_steps=config.max_steps,
                   stuck_steps=config.max_steps, yaw=None)
    grasp = VLA("grasp", policy=recording, instruction=instruction,
                stop=PredicateCall("lifted", {"object": obj, "height": LIFT}),
                max_steps=GRASP_STEPS, max_chunks=None, n_action_steps=None, continue_steps=0,
                stuck=None)
    return py_trees.composites.Sequence("collect", memory=True, children=[stage, grasp])


def record_episode(robot: Robot, obj: str, cameras: Sequence[CameraSpec], instruction: str,
                   config: StageConfig, rng: np.random.Generator) -> list[dict] | None:
    """Frames of one staged expert grasp, run through the tick loop; None when the staging or
    the grasp fails."""
    recording = Recording(ScriptedGrasp(robot, obj), cameras)
    root = grasp_tree(robot, obj, recording, instruction, config, rng)
    result = run_episode(root, robot, budget=robot.steps + config.max_steps + GRASP_STEPS + 1,
                         instruction=instruction)
    done = result.tree_status == "SUCCESS" and robot.is_grasped(obj)
    return recording.frames if done else None


def features(cameras: Sequence[CameraSpec]) -> dict:
    out = {f"observation.images.{c.key}": {"dtype": "image", "shape": (*c.size, 3),
                                           "names": ["height", "width", "channel"]}
           for c in cameras}
    out["observation.state"] = {"dtype": "float32", "shape": (8,), "names": list(STATE_NAMES)}
    out["action"] = {"dtype": "float32", "shape": (7,), "names": list(ACTION_NAMES)}
    return out


def collect(tasks: Sequence[str], *, episodes: int, root: Path, cameras: Sequence[CameraSpec]
            = (WRIST,), first_init_state: int = 0, seed: int = 0,
            stage_config: StageConfig = StageConfig(),
            progress: Callable[[int, int], None] | None = None) -> CollectReport:
    """Record `episodes` successful expert grasps, cycling through `tasks` and their init states
    from `first_init_state`. `progress(done, attempts)` is called after every attempt. An
    interrupt (Ctrl-C) keeps the episodes recorded so far: the dataset is finalised either way;
    when no episode was recorded, `root` is removed again (so the same command can be rerun)."""
    from tether.scenes.catalogue import get_task

    if not tasks:
        raise TetherError("no task to collect from; give SUITE/TASK_NAME or SUITE/INDEX")
    if episodes < 1:
        raise TetherError(f"episodes must be at least 1, not {episodes}")
    if root.exists():
        raise TetherError(f"{root} exists; collect writes a new dataset (choose another --out)")
    for task in tasks:  # before anything is written: a typo must not leave a dataset behind
        if not 0 <= first_init_state < (n := get_task(task).num_init_states):
            raise TetherError(f"{task} has initial states 0..{n - 1}, not {first_init_state}")
    counts = {task: get_task(task).num_init_states for task in tasks}

    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from tether.scenes.scene_cache import SceneCache

    start = time.perf_counter()
    dataset = LeRobotDataset.create(repo_id=f"tether/{root.name}", fps=FPS, root=root,
                                    features=features(cameras), robot_type="panda",
                                    use_videos=False, video_backend=VIDEO_BACKEND)
    save_drafted(root / "meta", any(c.draft for c in cameras))
    rng = np.random.default_rng(seed)
    scenes = SceneCache(size=len(tasks))
    done = attempts = frames = 0
    try:
        while done < episodes:
            if attempts >= 2 * episodes + 10:
                raise TetherError(f"only {done} of {attempts} expert grasps succeeded; giving up")
            task = tasks[attempts % len(tasks)]
            init_state = (first_init_state + attempts // len(tasks)) % counts[task]
            robot = scenes.open(task, init_state=init_state, seed=seed)
            obj = robot.resolve(robot.goal()[0][1])
            attempts += 1
            got = record_episode(robot, obj, cameras, instruction_for(obj), stage_config, rng)
            if got:
                for frame in got:
                    dataset.add_frame(frame)
                dataset.save_episode()
                done, frames = done + 1, frames + len(got)
            if progress:
                progress(done, attempts)
    finally:
        dataset.finalize()
        scenes.close()
        if done == 0:
            shutil.rmtree(root, ignore_errors=True)
    report = CollectReport(str(root), done, frames, attempts,
                           round(time.perf_counter() - start, 1), list(tasks),
                           [f"{c.camera} {c.size[0]}x{c.size[1]} as {c.key}"
                            + " (draft)" * c.draft for c in cameras],
                           asdict(stage_config), seed, first_init_state)
    report.save()
    return report
