"""Camera observations of a scene: RGB, depth and per-object segmentation, rendered on demand.

Nothing is rendered unless asked: a scene steps without any renderer (the cheapest run), and a
consumer (a policy adapter, a perception leaf, `tether scenes show`) calls `Observer.observe`
when it needs a picture. Rendering is MuJoCo's offscreen OpenGL (EGL on a headless CPU machine:
`MUJOCO_GL=egl`), only the visual geoms (robosuite's collision geoms, group 0, are hidden).

    observer = Observer(scene)
    view = observer.observe("agentview", size=(128, 128), depth=True, segmentation=True)
    view.rgb            # (h, w, 3) uint8, upright
    view.depth          # (h, w) float32, metres from the camera plane
    view.geometry       # its CameraGeometry (intrinsics, extrinsics) when depth was asked
    view.masks["akita_black_bowl_1"]   # (h, w) bool: privileged perception
    view.poses["akita_black_bowl_1"]   # its Pose (what the scene reports)
    observer.close()

Segmentation is by entity: every geom is credited to the object or fixture whose body it hangs
from; masks are returned for entities with at least one visible pixel. `PRIVILEGED` serves these
masks behind the perception protocol (`tether.models.perception.base.Perception`): the default
perception of the input interventions, exact and simulation only.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.scenes.cameras import offscreen_renderer, visual_only
from tether.scenes.fast_physics import mesh_edits, textured
from tether.scenes.projection import CameraGeometry
from tether.scenes.robot import Pose, Robot

if TYPE_CHECKING:
    import mujoco

    from tether.scenes.libero_scene import LiberoScene

CAMERAS = ("agentview", "robot0_eye_in_hand")


@dataclass
class CameraView:
    """One camera's picture at one step."""

    camera: str
    rgb: np.ndarray | None = None
    depth: np.ndarray | None = None
    geometry: CameraGeometry | None = None
    masks: dict[str, np.ndarray] = field(default_factory=dict)
    poses: dict[str, Pose] = field(default_factory=dict)
    own: np.ndarray | None = None  # (h, w) bool: the robot's own body, from its kinematics


class Observer:
    """Renders a `LiberoScene`'s cameras when asked; renderers are kept per image size."""

    def __init__(self, scene: LiberoScene) -> None:
        self.scene = scene
        self._model: mujoco.MjModel | None = None
        self._edits = 0  # `mesh_edits` of the model when its renderers were made
        self._renderers: dict[tuple[int, int], mujoco.Renderer] = {}
        self._geom_entity: np.ndarray | None = None
        self._robot_sites: list[int] = []
        self._names: list[str] = []

    def _prepare(self, size: tuple[int, int]) -> mujoco.Renderer:

        model = self.scene._env.env.sim.model._model
        if model is not self._model or mesh_edits(model) != self._edits:  # rebuilt, rescaled
            self.close()
            self._model, self._edits = model, mesh_edits(model)
            self._index_geoms(model)
        drawn = textured(model)  # set to the scene's model now
        if size not in self._renderers:
            self._renderers[size] = offscreen_renderer(drawn, size)
        return self._renderers[size]

    def _index_geoms(self, model: mujoco.MjModel) -> None:
        roots = {body: i for i, (_, body) in enumerate(self.scene._bodies.items())}
        self._names = list(self.scene._bodies)
        owner = np.full(model.ngeom, -1)
        for g in range(model.ngeom):
            b = int(model.geom_bodyid[g])
            while b != 0 and b not in roots:
                b = int(model.body_parentid[b])
            owner[g] = roots.get(b, -1)
        self._geom_entity = owner
        # the sites the robot carries are part of its silhouette: robosuite renders the gripper's
        # grip-axis marker, a thin cylinder from the fingers down through whatever is below them
        robot_bodies = model.geom_bodyid[sorted(self.scene._robot_geoms)]
        robot_roots = np.unique(model.body_rootid[robot_bodies])
        self._robot_sites = np.flatnonzero(
            np.isin(model.body_rootid[model.site_bodyid], robot_roots)).tolist()

    def observe(self, camera: str, size: tuple[int, int] = (128, 128), *, rgb: bool = True,
                depth: bool = False, segmentation: bool = False,
                own_body: bool = False) -> CameraView:
        """Render what `camera` sees now: the requested channels only. `own_body` is the robot's
        silhouette, which a robot knows from its own model and joint angles (a real one renders
        its URDF): camera perception drops those pixels, never the objects' masks."""
        import mujoco

        renderer = self._prepare(size)
        data = self.scene._data
        names = [self._model.camera(i).name for i in range(self._model.ncam)]
        if camera not in names:
            raise TetherError(f"no camera '{camera}'{did_you_mean(camera, names)}; this scene "
                              f"has {', '.join(names)}")
        view = CameraView(camera)
        renderer.update_scene(data, camera=camera, scene_option=visual_only())
        if rgb:
            view.rgb = renderer.render().copy()
        if depth:
            renderer.enable_depth_rendering()
            view.depth = renderer.render().astype(np.float32)
            renderer.disable_depth_rendering()
            view.geometry = CameraGeometry.of(self._model, data, camera, size)
        if not (segmentation or own_body):
            return view
        renderer.enable_segmentation_rendering()
        seg = renderer.render()
        renderer.disable_segmentation_rendering()
        ids, types = seg[..., 0], seg[..., 1]
        geom = np.where(types == int(mujoco.mjtObj.mjOBJ_GEOM), ids, -1)
        if own_body:
            site = np.where(types == int(mujoco.mjtObj.mjOBJ_SITE), ids, -1)
            view.own = (np.isin(geom, list(self.scene._robot_geoms))
                        | np.isin(site, self._robot_sites))
        if segmentation:
            entity = np.where(geom >= 0, self._geom_entity[np.clip(geom, 0, None)], -1)
            for i in np.unique(entity[entity >= 0]):
                name = self._names[int(i)]
                view.masks[name] = entity == i
                view.poses[name] = self.scene.pose_of(name)
        return view

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
        self._model = None


class PrivilegedPerception:
    """Masks from the simulator's segmentation render (one `Observer` per scene)."""

    def __init__(self) -> None:
        self._observers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        from tether.scenes.libero_scene import LiberoScene

        if not isinstance(robot, LiberoScene):
            raise TetherError(f"privileged perception needs a LIBERO scene, not "
                              f"{type(robot).__name__}")
        if robot not in self._observers:
            self._observers[robot] = Observer(robot)
        view = self._observers[robot].observe(camera, size, rgb=False, segmentation=True)
        return {n: view.masks[n] for n in names if n in view.masks}


PRIVILEGED = PrivilegedPerception()
