"""Camera frames rendered on demand from a MuJoCo scene.

Rendering a camera costs tens of milliseconds per frame on a CPU (more under load), far more
than a control step, so scenes do not render every step: `Cameras.render` draws one frame of a
named camera when asked (the trace recorder asks every N ticks and at events). Frames are upright
RGB arrays (h, w, 3, uint8), unlike robosuite's observations, which are upside down.

    cameras = Cameras()
    image = cameras.render(model, data, "agentview", (128, 128))
    cameras.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError, did_you_mean

if TYPE_CHECKING:
    import mujoco


def offscreen_renderer(model: mujoco.MjModel, size: tuple[int, int]) -> mujoco.Renderer:
    """A `mujoco.Renderer` of `size` (h, w); a located error when there is no GL context."""
    import mujoco

    try:
        return mujoco.Renderer(model, height=size[0], width=size[1])
    except mujoco.FatalError as exc:
        raise TetherError(f"cannot render camera frames ({exc}); without a display, "
                          "set MUJOCO_GL=egl (or osmesa)") from None


def visual_only() -> mujoco.MjvOption:
    """Render options that hide robosuite's collision geoms (geom group 0), as robosuite's own
    cameras do: drawn, they cover the robot and fixtures in flat colours."""
    import mujoco

    option = mujoco.MjvOption()
    option.geomgroup[0] = 0
    return option


class Cameras:
    """One `mujoco.Renderer` per image size, rebuilt when the model is (a hard reset)."""

    def __init__(self) -> None:
        self._model: mujoco.MjModel | None = None
        self._renderers: dict[tuple[int, int], mujoco.Renderer] = {}

    def render(self, model: mujoco.MjModel, data: mujoco.MjData, camera: str,
               size: tuple[int, int]) -> np.ndarray:
        if model is not self._model:
            self.close()
            self._model = model
        if size not in self._renderers:
            self._renderers[size] = offscreen_renderer(model, size)
        renderer = self._renderers[size]
        try:
            renderer.update_scene(data, camera=camera, scene_option=visual_only())
        except ValueError:
            names = [model.camera(i).name for i in range(model.ncam)]
            raise TetherError(f"no camera '{camera}'{did_you_mean(camera, names)}; this scene "
                              f"has {', '.join(names)}") from None
        return renderer.render().copy()

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
        self._model = None
