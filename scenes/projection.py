"""A camera's pinhole geometry: pixels with metric depth to world points, and back.

MuJoCo's cameras are pinholes with a vertical field of view `fovy`, square pixels and the
principal point at the image centre; a camera looks along its own -z with +x to the right and +y
up, and its pose in the world is `data.cam_xpos` / `data.cam_xmat`. Frames here are upright
(row 0 at the top, as `Robot.render` and `Observer.observe` give them), and depth is metric: the
distance from the camera plane along its axis (`mujoco.Renderer` turns the depth buffer into
metres with the model's `znear`, `zfar` and `extent`).

    geometry = CameraGeometry.of(model, data, "agentview", (128, 128))
    points = geometry.back_project(depth, mask)        # (n, 3) world points of the mask's pixels
    pixels, ahead = geometry.project(points)           # (n, 2) (col, row), (n,) metres ahead
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError, did_you_mean

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class CameraGeometry:
    """Intrinsics (`focal` in pixels, image `size` (h, w)) and extrinsics (`position`, and
    `rotation`: camera axes in world coordinates, columns x right, y up, z backwards) of one
    camera at one instant."""

    camera: str
    size: tuple[int, int]
    focal: float
    position: np.ndarray
    rotation: np.ndarray

    @classmethod
    def of(cls, model: mujoco.MjModel, data: mujoco.MjData, camera: str,
           size: tuple[int, int]) -> CameraGeometry:
        """The geometry of `model`'s `camera` in `data` (its current pose) at image `size`."""
        names = [model.camera(i).name for i in range(model.ncam)]
        if camera not in names:
            raise TetherError(f"no camera '{camera}'{did_you_mean(camera, names)}; this scene "
                              f"has {', '.join(names)}")
        i = names.index(camera)
        focal = 0.5 * size[0] / math.tan(math.radians(float(model.cam_fovy[i])) / 2)
        return cls(camera, (int(size[0]), int(size[1])), focal,
                   np.array(data.cam_xpos[i], dtype=np.float64),
                   np.array(data.cam_xmat[i], dtype=np.float64).reshape(3, 3))

    @property
    def centre(self) -> tuple[float, float]:
        """The principal point (col, row): the image centre."""
        return self.size[1] / 2, self.size[0] / 2

    def back_project(self, depth: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """World points (n, 3) of the pixels in `mask` (all pixels when None) with positive,
        finite `depth` (h, w); a pixel stands for its centre."""
        if depth.shape != self.size:
            raise TetherError(f"depth of {depth.shape} does not match camera '{self.camera}' "
                              f"at {self.size}")
        keep = np.isfinite(depth) & (depth > 0)
        if mask is not None:
            keep &= mask
        rows, cols = np.nonzero(keep)
        d = depth[rows, cols].astype(np.float64)
        cx, cy = self.centre
        local = np.stack([(cols + 0.5 - cx) / self.focal * d,
                          -(rows + 0.5 - cy) / self.focal * d, -d], axis=1)
        return self.position + local @ self.rotation.T

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (n, 2) as (col, row) of world `points` (n, 3), and how far ahead of
        the camera plane each is (negative: behind the camera)."""
        local = (np.asarray(points, np.float64).reshape(-1, 3) - self.position) @ self.rotation
        ahead = -local[:, 2]
        cx, cy = self.centre
        with np.errstate(divide="ignore", invalid="ignore"):
            pixels = np.stack([cx + self.focal * local[:, 0] / ahead,
                               cy - self.focal * local[:, 1] / ahead], axis=1)
        return pixels, ahead
