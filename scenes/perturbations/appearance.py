"""Perturbations of what the cameras see: other assets, colours, light, viewpoint.

- `object_replace` (scene): an object becomes another LIBERO asset under the same name, so the
  goal and instruction stand while what is seen and grasped changes (LIBERO-PRO "object").
- `recolour` (reset): an object's geoms get a flat colour, textures dropped (appearance/texture).
- `lighting` (reset): lights brighter or dimmer, strong specular glare on every material
  (LIBERO-PRO's visual_noise_glare).
- `camera_angle` (reset): the agent-view camera orbits the table centre by a yaw (and tilts by a
  pitch) (LIBERO-PRO's camera_view_angle).
- `light_levels` (reset): every light set to fixed levels (LIBERO-PRO's dim lighting).
- `image_noise` (run): rendered camera images (what a policy, verifier or detector gets)
  darkened, with Gaussian pixel noise.
- `camera_pose` (reset): a camera put at a given position and orientation.
- `object_scale` (reset): an object's geometry scaled about its body (LIBERO-PRO object_shape).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from tether.errors import TetherError
from tether.scenes.bddl import Problem
from tether.scenes.perturbations.base import RESET, RUN, SCENE, Perturbation, numbers, register
from tether.scenes.perturbations.edits import main_object

if TYPE_CHECKING:
    from tether.scenes.perturbations.scene import PerturbedScene

# Assets of similar size and grasp, one family per line: a replacement stays in its family.
FAMILIES = (
    ("akita_black_bowl", "white_bowl", "glazed_rim_porcelain_ramekin"),
    ("porcelain_mug", "red_coffee_mug", "white_yellow_mug"),
    ("cream_cheese", "butter", "chocolate_pudding"),
    ("alphabet_soup", "tomato_sauce", "ketchup", "bbq_sauce", "salad_dressing",
     "milk", "orange_juice"),
    ("black_book", "yellow_book"),
)


@dataclass(frozen=True)
class ReplaceConfig:
    object: str = ""  # default: the task's main object
    category: str = ""  # the new asset; default: a seeded choice from the object's family


@register
class ObjectReplace(Perturbation):
    name, stage, Config = "object_replace", SCENE, ReplaceConfig
    summary = "an object becomes another asset of its family under the same name"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        target = main_object(problem, self.config.object)
        old = problem.category_of(target)
        new = self.config.category
        if not new:
            family = next((f for f in FAMILIES if old in f), ())
            choices = [c for c in family if c != old]
            if not choices:
                raise TetherError(f"object_replace: no replacement family for '{old}'; give "
                                  "category=...")
            new = choices[int(rng.integers(len(choices)))]
        objects: dict[str, list[str]] = {}
        for category, names in problem.objects.items():  # keep body order: joints follow it
            for n in names:
                key = new if n == target else category
                if objects and list(objects)[-1] != key and key in objects:
                    raise TetherError("object_replace would reorder the scene's objects")
                objects.setdefault(key, []).append(n)
        return problem.copy(objects=objects)


def _object_geoms(scene: PerturbedScene, name: str) -> list[int]:
    model = scene.model
    root = scene._bodies[scene._canonical(name)]
    geoms = []
    for g in range(model.ngeom):
        b = int(model.geom_bodyid[g])
        while b not in (0, root):
            b = int(model.body_parentid[b])
        if b == root:
            geoms.append(g)
    return geoms


@dataclass(frozen=True)
class RecolourConfig:
    object: str = ""  # default: the task's main object
    rgb: str = ""  # 'r g b' in 0..1; default: a seeded saturated colour


@register
class Recolour(Perturbation):
    name, stage, Config = "recolour", RESET, RecolourConfig
    summary = "an object's texture is replaced by a flat colour"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        if self.config.rgb:
            rgb = np.array([float(v) for v in self.config.rgb.split()])
        else:
            rgb = np.array(colorsys.hsv_to_rgb(rng.uniform(), 0.9, 0.9))
        target = scene.resolve(self.config.object) if self.config.object else \
            main_object(scene.problem)
        for g in _object_geoms(scene, target):
            scene.model.geom_matid[g] = -1
            scene.model.geom_rgba[g, :3] = rgb


@dataclass(frozen=True)
class LightingConfig:
    brightness: float = 1.8  # factor on every light's diffuse colour (< 1 dims)
    glare: float = 1.0  # specular strength of lights and materials (0..1)


@register
class Lighting(Perturbation):
    name, stage, Config = "lighting", RESET, LightingConfig
    summary = "brighter or dimmer lights with specular glare on every surface"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        m = scene.model
        m.light_diffuse[:] = np.clip(m.light_diffuse * self.config.brightness, 0.0, 1.0)
        m.light_specular[:] = self.config.glare
        m.mat_specular[:] = self.config.glare
        m.mat_shininess[:] = max(float(self.config.glare), 0.5)
        m.mat_reflectance[:] = np.maximum(m.mat_reflectance, 0.3 * self.config.glare)


@dataclass(frozen=True)
class CameraConfig:
    yaw: float = 15.0  # degrees about the vertical through the table centre
    pitch: float = 0.0  # degrees about the camera's own horizontal axis (+ looks further down)
    random: bool = False  # draw yaw and pitch uniformly in [-value, value] instead
    camera: str = "agentview"


@register
class CameraAngle(Perturbation):
    name, stage, Config = "camera_angle", RESET, CameraConfig
    summary = "the agent-view camera orbits the table and tilts"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        m, c = scene.model, self.config
        yaw, pitch = (rng.uniform(-c.yaw, c.yaw), rng.uniform(-c.pitch, c.pitch)) if c.random \
            else (c.yaw, c.pitch)
        try:
            cam = m.camera(c.camera).id
        except KeyError:
            raise TetherError(f"camera_angle: no camera '{c.camera}'") from None
        pivot = np.array([0.0, 0.0, m.cam_pos[cam][2]])
        turn = Rotation.from_euler("z", yaw, degrees=True)
        m.cam_pos[cam] = pivot + turn.apply(m.cam_pos[cam] - pivot)
        wxyz = m.cam_quat[cam]
        old = Rotation.from_quat([wxyz[1], wxyz[2], wxyz[3], wxyz[0]])
        # a MuJoCo camera looks along its -z with +x to the right: pitch about its own x
        new = turn * old * Rotation.from_euler("x", -pitch, degrees=True)
        x, y, z, w = new.as_quat()
        m.cam_quat[cam] = [w, x, y, z]


@dataclass(frozen=True)
class LightLevelsConfig:
    ambient: float = 0.02  # every light's ambient level (LIBERO-PRO dims to 0.02)
    diffuse: float = 0.16  # every light's diffuse level
    specular: float = 0.01  # every light's specular level

    def __post_init__(self) -> None:
        if min(self.ambient, self.diffuse, self.specular) < 0:
            raise ValueError("light levels must be >= 0")


@register
class LightLevels(Perturbation):
    name, stage, Config = "light_levels", RESET, LightLevelsConfig
    summary = "every light set to fixed ambient, diffuse and specular levels (dim scene)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        m = scene.model
        m.light_active[:] = 1
        m.light_ambient[:] = self.config.ambient
        m.light_diffuse[:] = self.config.diffuse
        m.light_specular[:] = self.config.specular


@dataclass(frozen=True)
class ImageNoiseConfig:
    brightness: float = 0.68  # factor on every pixel
    sigma: float = 12.0  # Gaussian noise, standard deviation in 0..255 pixel units

    def __post_init__(self) -> None:
        if self.brightness < 0 or self.sigma < 0:
            raise ValueError("brightness and sigma must be >= 0")


@register
class ImageNoise(Perturbation):
    name, stage, Config = "image_noise", RUN, ImageNoiseConfig
    summary = "rendered camera images are darkened and get Gaussian pixel noise"

    def see(self, camera: str, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        noisy = image.astype(np.float32) * self.config.brightness
        noisy += rng.normal(0.0, self.config.sigma, image.shape)
        return np.clip(noisy, 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class CameraPoseConfig:
    pos: str = "0.48 0.24 1.62"  # 'x y z', world metres
    quat: str = "0.6099232 0.3594558 0.3594558 0.6099232"  # 'w x y z'
    camera: str = "agentview"

    def __post_init__(self) -> None:
        numbers("pos", self.pos, 3)
        if np.linalg.norm(numbers("quat", self.quat, 4)) < 1e-6:
            raise ValueError("quat is a zero quaternion")


@register
class CameraPose(Perturbation):
    name, stage, Config = "camera_pose", RESET, CameraPoseConfig
    summary = "a camera moved to a given position and orientation (LIBERO-PRO camera_view_angle)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        m, c = scene.model, self.config
        try:
            cam = m.camera(c.camera).id
        except KeyError:
            raise TetherError(f"camera_pose: no camera '{c.camera}'") from None
        quat = numbers("quat", c.quat, 4)
        m.cam_pos[cam] = numbers("pos", c.pos, 3)
        m.cam_quat[cam] = quat / np.linalg.norm(quat)


@dataclass(frozen=True)
class ScaleConfig:
    object: str = ""  # default: the task's main object
    scale: float = 0.5  # factor on its size, about its body origin

    def __post_init__(self) -> None:
        if not 0 < self.scale <= 10:
            raise ValueError("scale must be in (0, 10]")


def scale_object(scene: PerturbedScene, name: str, factor: float) -> None:
    """Scale `name`'s geometry (meshes, primitive sizes, geom and site offsets, child bodies)
    by `factor` about its root body, in the live model and in robosuite's renderer."""
    import mujoco

    from tether.scenes.fast_physics import meshes_edited

    m = scene.model
    root = scene._bodies[scene._canonical(name)]
    bodies = {root} | {b for b in range(m.nbody) if _descends(m, b, root)}
    geoms = [g for g in range(m.ngeom) if int(m.geom_bodyid[g]) in bodies]
    meshes = sorted({int(m.geom_dataid[g]) for g in geoms
                     if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH})
    for mesh in meshes:  # vertices in the mesh's frame; faces, hulls and polygons index them
        start = int(m.mesh_vertadr[mesh])
        m.mesh_vert[start:start + int(m.mesh_vertnum[mesh])] *= factor
    if meshes:
        meshes_edited(m)  # the scene's own cameras and observers make their contexts again
    for g in geoms:
        m.geom_pos[g] *= factor
        m.geom_size[g] *= factor
        m.geom_rbound[g] *= factor
        m.geom_aabb[g] *= factor
    for b in bodies - {root}:
        m.body_pos[b] *= factor
    for s in range(m.nsite):
        if int(m.site_bodyid[s]) in bodies:
            m.site_pos[s] *= factor
            m.site_size[s] *= factor
    context = getattr(scene._env.env.sim, "_render_context_offscreen", None)
    if context is not None and meshes:
        context.gl_ctx.make_current()
        for mesh in meshes:
            mujoco.mjr_uploadMesh(m, context.con, mesh)
    scene._index_model()  # extents follow the new geometry


def _descends(model, body: int, root: int) -> bool:
    while body not in (0, root):
        body = int(model.body_parentid[body])
    return body == root and body != 0


@register
class ObjectScale(Perturbation):
    name, stage, Config = "object_scale", RESET, ScaleConfig
    summary = "an object's shape scaled (default x0.5: half size) (LIBERO-PRO object_shape)"

    def on_reset(self, scene: PerturbedScene, rng: np.random.Generator) -> None:
        target = scene.resolve(self.config.object) if self.config.object else \
            main_object(scene.problem)
        scale_object(scene, target, self.config.scale)
