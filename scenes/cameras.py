"""Camera frames rendered on demand from a MuJoCo scene.

Rendering a camera costs tens of milliseconds per frame on a CPU (more under load), far more
than a control step, so scenes do not render every step: `Cameras.render` draws one frame of a
named camera when asked. Frames are upright RGB arrays (h, w, 3, uint8), unlike robosuite's
observations, which are upside down.

Rendering is two steps: `capture` reads the sim state into a visual scene (`mujoco.MjvScene`:
every geom's pose and colour; tens of microseconds), `draw` rasterises it (the whole cost). A
`View` is a capture that can be drawn later, on another thread, with that thread's own `Cameras`
(a GL context belongs to the thread that made it): the trace recorder captures at the tick and
draws on its writer thread. A robot whose frames are images already gives a `Still`.

    cameras = Cameras()
    image = cameras.render(model, data, "agentview", (128, 128))    # capture + draw, here
    sketch = cameras.render(model, data, "agentview", (128, 128), draft=True)  # ~3x cheaper
    view = View(model, cameras.capture(model, data, "agentview"), (128, 128), cameras)
    image = view.draw(painter)        # later, on the thread that owns the Cameras `painter`
    cameras.close()
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.scenes.fast_physics import mesh_edits, textured

if TYPE_CHECKING:
    import mujoco


DECOR = 64  # room in a visual scene beyond the model's own elements
FONT_SCALE = 150  # mujoco.mjtFontScale.mjFONTSCALE_150
LIGHT_TEXELS = 4  # texels per pixel a light `Cameras`' textures keep (frame's longer side)
FOG_RGBA, AUX_WIDTH = 20, 56  # byte offsets of two arrays in MuJoCo's `mjrContext` struct


def scene_capacity(model: mujoco.MjModel) -> int:
    """Abstract geoms a visual scene of `model` needs room for: its geoms, sites, tendon and
    wrap segments, skins and flexes, and some decoration. Allocating a scene costs time in
    proportion (mujoco.Renderer's 10,000 take ~70 ms; a LIBERO scene needs ~400)."""
    return (model.ngeom + model.nsite + model.ntendon + model.nwrap + model.nskin + model.nflex
            + DECOR)


def offscreen_renderer(model: mujoco.MjModel, size: tuple[int, int]) -> mujoco.Renderer:
    """A `mujoco.Renderer` of `size` (h, w); a located error when there is no GL context."""
    import mujoco

    try:
        return mujoco.Renderer(model, height=size[0], width=size[1])
    except mujoco.FatalError as exc:
        raise TetherError(f"cannot render camera frames ({exc}); without a display, "
                          "set MUJOCO_GL=egl (or osmesa)") from None


@cache
def _mujoco_library() -> ctypes.CDLL | None:
    import mujoco

    found = sorted(Path(mujoco.__file__).parent.glob("libmujoco.so*"))
    return ctypes.CDLL(str(found[0])) if found else None


def render_context(model: mujoco.MjModel) -> mujoco.MjrContext:
    """`mujoco.MjrContext(model, FONT_SCALE)` for the current GL context, made without holding
    Python's GIL. The binding holds it while it uploads the model's textures and meshes (~2 s
    for a LIBERO scene's 143 MB of textures), stopping every other thread, the tick loop
    included; MuJoCo's `mjr_makeContext` called through ctypes releases it. It fills the struct
    of an empty binding context, found from the address of its `fogRGBA` array once the offset of
    `auxWidth` confirms the struct's layout; elsewhere (no library file, another layout) the
    binding makes it."""
    import mujoco

    context, library = mujoco.MjrContext(), _mujoco_library()
    address = context.fogRGBA.__array_interface__["data"][0] - FOG_RGBA
    if library is None or context.auxWidth.__array_interface__["data"][0] - address != AUX_WIDTH:
        return mujoco.MjrContext(model, FONT_SCALE)
    library.mjr_makeContext(ctypes.c_void_p(model._address), ctypes.c_void_p(address),
                            FONT_SCALE)
    return context


class Rasteriser:
    """An offscreen GL context and MuJoCo render context of one size, for the thread that made
    it: `draw(scene)` rasterises a captured visual scene into an upright RGB frame (what
    `mujoco.Renderer.render` does after `update_scene`). A `draft` rasteriser draws without
    multisampling (the model's `offsamples`, 4 in LIBERO) and without reflections (LIBERO's
    table and objects reflect, which draws the scene twice): about a third of the cost on a
    CPU, with jagged edges and no mirror images: for frames people look at, and for a policy
    trained on drafts (`tether.models.observation.CameraSpec.draft`)."""

    def __init__(self, model: mujoco.MjModel, size: tuple[int, int], draft: bool = False):
        import mujoco

        self.size, self.draft = size, draft
        self.rect = mujoco.MjrRect(0, 0, size[1], size[0])
        try:
            self.gl = mujoco.GLContext(size[1], size[0])
            self.gl.make_current()
            self.context = render_context(model)
        except (mujoco.FatalError, RuntimeError, ImportError) as exc:
            raise TetherError(f"cannot render camera frames ({exc}); without a display, "
                              "set MUJOCO_GL=egl (or osmesa)") from None
        if draft and self.context.offSamples:
            self.context.offSamples = 0
            mujoco.mjr_resizeOffscreen(size[1], size[0], self.context)  # single-sample buffers
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.context)

    def draw(self, scene: mujoco.MjvScene) -> np.ndarray:
        import mujoco

        self.gl.make_current()
        out = np.empty((*self.size, 3), dtype=np.uint8)
        reflection = mujoco.mjtRndFlag.mjRND_REFLECTION.value
        kept = scene.flags[reflection]
        if self.draft:  # the scene goes back to a pool other drawers use: its flag is restored
            scene.flags[reflection] = 0
        try:
            mujoco.mjr_render(self.rect, scene, self.context)
        finally:
            scene.flags[reflection] = kept
        mujoco.mjr_readPixels(out, None, self.rect, self.context)
        return np.flipud(out).copy()

    def close(self) -> None:
        self.context.free()
        self.gl.free()


def visual_only() -> mujoco.MjvOption:
    """Render options that hide robosuite's collision geoms (geom group 0), as robosuite's own
    cameras do: drawn, they cover the robot and fixtures in flat colours."""
    import mujoco

    option = mujoco.MjvOption()
    option.geomgroup[0] = 0
    return option


class Cameras:
    """Captures of a model's cameras (with a pool of visual scenes to capture into) and one
    `Rasteriser` per image size and quality (`draft` or not, see there), rebuilt when the model
    is (a hard reset); `draw` and `close` belong to one thread. `light` ones draw with the
    model's image textures reduced to `LIGHT_TEXELS` texels per pixel of the frame's longer
    side (`tether.scenes.light_textures`): the same picture to the eye, and a render context
    made in half the time (a trace's frames); others, with the textures as they are (what a
    policy or camera perception sees)."""

    def __init__(self, light: bool = False) -> None:
        self.light = light
        self._model: mujoco.MjModel | None = None
        self._edits = 0  # `mesh_edits` of the model when its rasterisers were made
        self._rasterisers: dict[tuple[tuple[int, int], bool], Rasteriser] = {}
        self._free: list[mujoco.MjvScene] = []  # visual scenes drawn and handed back

    def capture(self, model: mujoco.MjModel, data: mujoco.MjData,
                camera: str) -> mujoco.MjvScene:
        """The visual scene `camera` sees in `data` now (hand it back with `release`)."""
        import mujoco

        camera_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA.value, camera)
        if camera_id == -1:
            names = [model.camera(i).name for i in range(model.ncam)]
            raise TetherError(f"no camera '{camera}'{did_you_mean(camera, names)}; this scene "
                              f"has {', '.join(names)}")
        view = mujoco.MjvCamera()
        view.type, view.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, camera_id
        try:
            scene = self._free.pop()
        except IndexError:
            scene = mujoco.MjvScene(model=model, maxgeom=scene_capacity(model))
        while True:
            mujoco.mjv_updateScene(model, data, visual_only(), None, view,
                                   mujoco.mjtCatBit.mjCAT_ALL.value, scene)
            if scene.ngeom < scene.maxgeom:  # a full scene may have left geoms out
                return scene
            scene = mujoco.MjvScene(model=model, maxgeom=2 * scene.maxgeom)

    def release(self, model: mujoco.MjModel, scene: mujoco.MjvScene) -> None:
        """Take back a drawn visual scene for the next capture (of the same model)."""
        if model is self._model or self._model is None:
            self._free.append(scene)

    def draw(self, model: mujoco.MjModel, scene: mujoco.MjvScene, size: tuple[int, int],
             draft: bool = False) -> np.ndarray:
        """Rasterise a visual scene of `model` at `size` (h, w), as a `draft` or not, on this
        thread."""
        if model is not self._model or mesh_edits(model) != self._edits:  # rebuilt, rescaled
            self.close()
            self._model, self._edits = model, mesh_edits(model)
        key = (size, draft)
        if key not in self._rasterisers:
            limit = LIGHT_TEXELS * max(size) if self.light else None
            self._rasterisers[key] = Rasteriser(textured(model, limit), size, draft)
        return self._rasterisers[key].draw(scene)

    def render(self, model: mujoco.MjModel, data: mujoco.MjData, camera: str,
               size: tuple[int, int], draft: bool = False) -> np.ndarray:
        """Capture and draw `camera` now."""
        scene = self.capture(model, data, camera)
        image = self.draw(model, scene, size, draft)
        self.release(model, scene)
        return image

    def close(self) -> None:
        for rasteriser in self._rasterisers.values():
            rasteriser.close()
        self._rasterisers.clear()
        self._free.clear()
        self._model = None


class Capture(Protocol):
    """A camera's frame taken at one step, drawn (maybe later, on another thread) by `draw`."""

    def draw(self, cameras: Cameras) -> np.ndarray:
        """The frame, drawn with `cameras` (owned by the calling thread)."""


@dataclass(frozen=True)
class Still:
    """A frame already rendered when it was taken."""

    image: np.ndarray

    def draw(self, cameras: Cameras) -> np.ndarray:
        return self.image


@dataclass(frozen=True)
class View:
    """A MuJoCo camera's visual scene captured at one step by `source`, drawn at `size` (as a
    `draft` or not); the scene goes back to `source`'s pool once drawn."""

    model: mujoco.MjModel
    scene: mujoco.MjvScene
    size: tuple[int, int]
    source: Cameras
    draft: bool = False

    def draw(self, cameras: Cameras) -> np.ndarray:
        try:
            return cameras.draw(self.model, self.scene, self.size, self.draft)
        finally:
            self.source.release(self.model, self.scene)
