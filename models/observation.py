"""What a policy sees: an `Observation` built from the `Robot`, in LIBERO's conventions.

A policy declares the cameras it needs (`CameraSpec`: the robot's camera name, the image size,
and the key the policy knows it by); `observe` renders only those, on demand, so a scene never
renders frames nobody looks at (a frame costs tens of milliseconds on a CPU).

Conventions, the ones LIBERO's datasets (and the policies trained on them: lerobot's LIBERO
policies, openpi's pi0/pi0.5 LIBERO checkpoints) use:
- images are uint8 (h, w, 3) rotated 180 degrees from robosuite's upside-down render, which is the
  upright frame `Robot.render` returns mirrored left to right (`libero_image`);
- the state is 8-D: end-effector position (3), its orientation as robosuite's axis-angle (3) and
  the two finger joint positions (2) (`libero_state`).

    obs = observe(robot, [CameraSpec("robot0_eye_in_hand", (64, 64), "image2")], "pick up the bowl")
    obs.images["image2"].shape, obs.state.shape     # (64, 64, 3), (8,)

A policy trained on draft frames (`tether collect --draft`: no multisampling, no reflections,
about a third of a full frame's cost on a CPU; `tether.scenes.cameras.Rasteriser`) must see
drafts too: the dataset's meta folder and the checkpoint `tether train` makes from it say so in
`frames.json` (`save_drafted`, `drafted`), and a policy loaded from it declares draft cameras.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tether.errors import TetherError
from tether.scenes.robot import Robot

STATE_NAMES = ("eef_x", "eef_y", "eef_z", "eef_ax", "eef_ay", "eef_az", "finger_l", "finger_r")
ACTION_NAMES = ("dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper")


@dataclass(frozen=True)
class CameraSpec:
    """One image a policy takes: from robot camera `camera` at `size` (h, w), called `key`,
    drawn as a `draft` or in full."""

    camera: str
    size: tuple[int, int]
    key: str
    draft: bool = False


FRAMES = "frames.json"  # in a dataset's meta folder or a checkpoint: {"draft": true|false}


def save_drafted(folder: Path, draft: bool) -> None:
    """Write `folder/frames.json`: whether the images there were drawn as drafts."""
    (folder / FRAMES).write_text(json.dumps({"draft": draft}) + "\n", encoding="utf-8")


def drafted(folder: Path) -> bool:
    """Whether `folder/frames.json` says its images are drafts (no file: full frames)."""
    path = folder / FRAMES
    if not path.is_file():
        return False
    try:
        draft = json.loads(path.read_text(encoding="utf-8"))["draft"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TetherError(f"{path}: not a frames file ({exc!r}); expected "
                          '{"draft": true} or {"draft": false}') from None
    if not isinstance(draft, bool):
        raise TetherError(f"{path}: draft must be true or false, not {draft!r}")
    return draft


@dataclass
class Observation:
    """Images (by the policy's keys), the 8-D LIBERO state and the instruction of one step."""

    images: dict[str, np.ndarray] = field(default_factory=dict)
    state: np.ndarray = field(default_factory=lambda: np.zeros(8, dtype=np.float32))
    instruction: str = ""


def quat_to_axis_angle(quat: np.ndarray) -> np.ndarray:
    """robosuite's `quat2axisangle` of an (x, y, z, w) quaternion: LIBERO's state convention.

    Unlike scipy's `as_rotvec` it does not canonicalise the sign of w, so a gripper pointing
    down (angle near pi) does not flip between +pi and -pi axes.
    """
    x, y, z, w = (float(v) for v in quat)
    w = min(max(w, -1.0), 1.0)
    den = np.sqrt(1.0 - w * w)
    if den < 1e-8:
        return np.zeros(3)
    return np.array([x, y, z]) * 2.0 * np.arccos(w) / den


def libero_state(robot: Robot) -> np.ndarray:
    """eef position, eef axis-angle and finger positions (8 float32s), as LIBERO records them."""
    pose = robot.eef_pose()
    fingers = robot.observe().get("gripper_qpos")
    if fingers is None:  # a scene without finger joints: split the width symmetrically
        half = robot.gripper_width() / 2.0
        fingers = np.array([half, -half])
    return np.concatenate([pose.pos, quat_to_axis_angle(pose.quat), fingers]).astype(np.float32)


def libero_image(upright: np.ndarray) -> np.ndarray:
    """An upright frame (as `Robot.render` gives) in LIBERO's convention: robosuite's, rotated
    180 degrees."""
    return np.ascontiguousarray(upright[:, ::-1])


def observe(robot: Robot, cameras: Sequence[CameraSpec], instruction: str) -> Observation:
    """Render the requested cameras now and read the state. A scene without cameras (the
    kinematic one) gives black frames of the requested size."""
    images = {}
    for spec in cameras:
        frame = robot.render(spec.camera, spec.size, spec.draft)
        if frame is None:
            frame = np.zeros((*spec.size, 3), dtype=np.uint8)
        images[spec.key] = libero_image(frame)
    return Observation(images=images, state=libero_state(robot), instruction=instruction)
