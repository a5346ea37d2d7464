"""Rollouts as data: every step of a tether episode appended to a LeRobotDataset
(`tether run|bench --record-dataset DIR`), so the recoveries a tree makes become training data.

A `Rollout` watches one episode (a session observer: `run(config, observers=(rollout.start,))`).
Before each control step it holds the observation the step's command was chosen on (both
cameras rendered at `SIZE` in LIBERO's image convention, the 8-D LIBERO state); after the step
it keeps one frame of the dataset (a tick that ends the tree takes no step and keeps none):

    observation.images.image    agent view, uint8 (h, w, 3)
    observation.images.image2   wrist camera
    observation.state           8-D LIBERO state (eef position, axis-angle, two fingers)
    action                      the 7-D command the robot actually applied (a leaf's, or the
                                hold the tick loop sent when no leaf commanded)
    task                        the episode's instruction (as perturbations rewrote it)
    tree.node                   the leaf that commanded this step ('' for a hold)
    episode.success             the episode's success (its own goal test), on every frame

`Rollout(cameras, language)` records other cameras or sizes, and with a `Language`
(`tether.models.language`) adds the instruction's embedding as `observation.environment_state`
(what `tether collect --tree` records for language-conditioned training).

`append_episode(DIR, frames, success)` adds the episode to the dataset at DIR, creating it
(`LeRobotDataset.create`, images as PNG like `tether collect`) or reopening it
(`LeRobotDataset.resume`). One writer at a time: `tether bench` workers save each episode's
frames beside its trace (`save_frames`), and the bench process appends them in the order the
episodes finish (`load_frames`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tether.datasets.collect import FPS, VIDEO_BACKEND, features
from tether.errors import TetherError
from tether.models.language import FEATURE as LANGUAGE_FEATURE
from tether.models.language import Language
from tether.models.observation import CameraSpec, observe

SIZE = (128, 128)
CAMERAS = (CameraSpec("agentview", SIZE, "image"), CameraSpec("robot0_eye_in_hand", SIZE,
                                                                 "image2"))
NODE, SUCCESS = "tree.node", "episode.success"
FRAMES_FILE = "rollout.npz"


def rollout_features(cameras: tuple[CameraSpec, ...] = CAMERAS,
                     language: Language | None = None) -> dict[str, dict[str, Any]]:
    """The dataset's features: `tether collect`'s, plus the node and the success (and the
    instruction's embedding with a `language`)."""
    out = {**features(cameras), NODE: {"dtype": "string", "shape": (1,), "names": None},
           SUCCESS: {"dtype": "bool", "shape": (1,), "names": None}}
    if language is not None:
        out[LANGUAGE_FEATURE] = language.feature()
    return out


class Rollout:
    """The frames of one episode; `start(root, robot)` is the session observer factory."""

    def __init__(self, cameras: tuple[CameraSpec, ...] = CAMERAS,
                 language: Language | None = None) -> None:
        self.cameras, self.language = cameras, language
        self.frames: list[dict[str, Any]] = []

    def features(self) -> dict[str, dict[str, Any]]:
        return rollout_features(self.cameras, self.language)

    def start(self, root: Any, robot: Any) -> Rollout:
        self.robot, self.frames, self.steps = robot, [], robot.steps
        self.instruction = robot.task.language
        self.extra = ({LANGUAGE_FEATURE: self.language.vector(self.instruction)}
                      if self.language else {})
        self.before = observe(robot, self.cameras, self.instruction)
        return self

    def __enter__(self) -> Rollout:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __call__(self, tick: Any) -> None:
        if self.robot.steps == self.steps:  # the tree finished: no step was taken this tick
            return
        self.steps, obs = self.robot.steps, self.before
        self.frames.append({**{f"observation.images.{k}": v for k, v in obs.images.items()},
                            "observation.state": obs.state,
                            "action": np.asarray(self.robot.sent, dtype=np.float32),
                            "task": self.instruction, NODE: tick.commander or "",
                            **self.extra})
        self.before = observe(self.robot, self.cameras, self.instruction)


def save_frames(path: Path, frames: list[dict[str, Any]]) -> None:
    """Keep an episode's frames in one compressed file (a bench worker's hand-over)."""
    arrays = {key: np.stack([f[key] for f in frames]) for key in frames[0] if key != "task"}
    np.savez_compressed(path, task=np.array([frames[0]["task"]]), **arrays)


def load_frames(path: Path) -> list[dict[str, Any]]:
    """The frames `save_frames` kept."""
    with np.load(path) as data:
        columns = {key: data[key] for key in data.files}
    task = str(columns.pop("task")[0])
    n = len(columns["action"])
    return [{**{key: value[i] for key, value in columns.items()}, "task": task}
            for i in range(n)]


def check_target(root: Path, wanted: dict[str, dict[str, Any]] | None = None, *,
                 option: str = "--record-dataset") -> None:
    """A TetherError, before any episode runs, when `root` cannot take tether's rollouts (with
    `wanted` features, default `rollout_features()`): a folder that is not a LeRobotDataset, or
    one with other features. `option` is what the message tells the user to change."""
    import json

    from lerobot.utils.constants import DEFAULT_FEATURES  # lerobot's own columns

    root = Path(root)
    info = root / "meta" / "info.json"
    if info.is_file():
        try:
            have = json.loads(info.read_text(encoding="utf-8")).get("features", {})
        except (OSError, ValueError) as exc:
            raise TetherError(f"{info}: cannot read the dataset's metadata ({exc})") from None
        wanted = wanted or rollout_features()
        if set(have) - set(DEFAULT_FEATURES) != set(wanted) or any(
                have[k].get("dtype") != v["dtype"]
                or list(have[k].get("shape", ())) != list(v["shape"]) for k, v in wanted.items()):
            raise TetherError(f"{root} is a LeRobotDataset with other features; give "
                              f"{option} a new folder or one tether recorded")
    elif root.is_file() or (root.is_dir() and any(root.iterdir())):
        raise TetherError(f"{root} exists and is not a LeRobotDataset; give {option} a new "
                          "folder or one tether recorded")


def create_dataset(root: Path, wanted: dict[str, dict[str, Any]]) -> None:
    """An empty LeRobotDataset with `wanted` features at `root` (a new or empty folder)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    if root.exists():
        root.rmdir()  # empty: `create` makes the folder itself
    LeRobotDataset.create(repo_id=f"tether/{root.name}", fps=FPS, root=root, features=wanted,
                          robot_type="panda", use_videos=False,
                          video_backend=VIDEO_BACKEND).finalize()


def append_episode(root: Path, frames: list[dict[str, Any]], success: bool,
                   wanted: dict[str, dict[str, Any]] | None = None) -> None:
    """Add one episode to the LeRobotDataset at `root` with `wanted` features (default
    `rollout_features()`; created when missing; `check_target` first). The dataset is reopened
    for the episode and finalised after it, so a killed process loses at most the episode it
    was appending."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    if not frames:
        return
    root = Path(root)
    wanted = wanted or rollout_features()
    check_target(root, wanted)
    if not (root / "meta" / "info.json").is_file():
        create_dataset(root, wanted)
    dataset = LeRobotDataset.resume(f"tether/{root.name}", root=root, video_backend=VIDEO_BACKEND)
    try:
        for frame in frames:
            dataset.add_frame({**frame, NODE: str(frame[NODE]),
                               SUCCESS: np.array([success])})
        dataset.save_episode()
    finally:
        dataset.finalize()
