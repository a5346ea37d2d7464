"""Camera localization: where objects are, from RGB-D frames and instance masks only.

A `Sighting` is one camera's metric depth, its geometry (`tether.scenes.projection`) and boolean
masks by label, from any perception: the simulator's per-entity masks (privileged, the oracle) or
a model's. Each mask is eroded (its border pixels mix the object's depth with what is behind it),
back-projected to world points, and the points of every view that saw the object are pooled
(agent view and wrist fused). The estimate is robust: the object's `lower`/`upper` extent is the
2nd-98th percentile box of its points, its `position` that box's centre, and `median` the points'
median, kept beside it (the median leans toward the faces the camera sees: a bowl's inner wall,
~2 cm; the box centre does not, see the research note on camera localization).

    sightings = [Sighting.of(observer.observe(c, (128, 128), depth=True, segmentation=True))
                 for c in ("agentview", "robot0_eye_in_hand")]
    localize(sightings, ["plate_1", "akita_black_bowl_1"])     # by instance label (entity names)
    # {"plate_1": Located(...), "akita_black_bowl_1": NotFound(..., reason="not seen ...")}
    localize_instances(sightings, "akita_black_bowl")           # one label, several copies

Labels that are instances (entity names, instance ids) are localized by `localize`: one object
per label, however many pieces occlusion cuts its mask into. A label shared by identical copies
(a category's mask from a category segmenter) goes to `localize_instances`, which keeps the
copies apart: each view's mask is split into connected components, and components of all views
whose positions are closer than `merge` are one object. An object no view shows is a `NotFound`
with the reason, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError
from tether.scenes.projection import CameraGeometry

if TYPE_CHECKING:
    from tether.scenes.observations import CameraView


@dataclass(frozen=True)
class LocalizeConfig:
    """`erode` border pixels are dropped from each mask (kept whole when fewer than `min_pixels`
    would remain); a sighting needs `min_pixels` pixels with depth; the extent is the `low`-`high`
    percentile box of the points; instances of one label nearer than `merge` m are one."""

    erode: int = 1
    min_pixels: int = 4
    low: float = 2.0
    high: float = 98.0
    merge: float = 0.05

    def __post_init__(self) -> None:
        if self.erode < 0 or self.min_pixels < 1 or self.merge <= 0:
            raise TetherError(f"localization: erode >= 0, min_pixels >= 1 and merge > 0, not "
                              f"{self.erode}, {self.min_pixels}, {self.merge}")
        if not 0.0 <= self.low < self.high <= 100.0:
            raise TetherError(f"localization: percentiles need 0 <= low < high <= 100, not "
                              f"{self.low}, {self.high}")


@dataclass(frozen=True)
class Sighting:
    """One camera's frame as localization reads it: metric `depth` (h, w), the camera's
    `geometry` and boolean `masks` (h, w) by label."""

    geometry: CameraGeometry
    depth: np.ndarray
    masks: Mapping[str, np.ndarray]

    @classmethod
    def of(cls, view: CameraView, masks: Mapping[str, np.ndarray] | None = None) -> Sighting:
        """A `CameraView` rendered with depth, with its own (privileged) masks or `masks`."""
        if view.depth is None or view.geometry is None:
            raise TetherError(f"localization needs depth from camera '{view.camera}'; observe "
                              f"it with depth=True")
        return cls(view.geometry, view.depth, view.masks if masks is None else masks)


@dataclass(frozen=True)
class Located:
    """An object found: `position` (the centre of its robust box), the box `lower`/`upper`, the
    points' `median`, how many points and which cameras saw it."""

    label: str
    position: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    median: np.ndarray
    points: int
    cameras: tuple[str, ...]
    found = True

    @property
    def extent(self) -> tuple[np.ndarray, np.ndarray]:
        return self.lower, self.upper


@dataclass(frozen=True)
class NotFound:
    """An object no view shows (enough of), and why."""

    label: str
    reason: str
    found = False


def _eroded(mask: np.ndarray, config: LocalizeConfig) -> np.ndarray:
    from scipy.ndimage import binary_erosion

    if config.erode == 0:
        return mask
    inner = binary_erosion(mask, iterations=config.erode)
    return inner if inner.sum() >= config.min_pixels else mask


def _points(sighting: Sighting, mask: np.ndarray, config: LocalizeConfig) -> np.ndarray:
    mask = np.asarray(mask, bool)
    if mask.shape != sighting.geometry.size:
        raise TetherError(f"a mask of {mask.shape} does not match camera "
                          f"'{sighting.geometry.camera}' at {sighting.geometry.size}")
    points = sighting.geometry.back_project(sighting.depth, _eroded(mask, config))
    return points if len(points) >= config.min_pixels else points[:0]


def estimate(label: str, points: np.ndarray, cameras: Sequence[str],
             config: LocalizeConfig = LocalizeConfig()) -> Located:
    """The robust estimate of one object from its world `points` (n, 3), n >= 1."""
    lower = np.percentile(points, config.low, axis=0)
    upper = np.percentile(points, config.high, axis=0)
    return Located(label, (lower + upper) / 2, lower, upper, np.median(points, axis=0),
                   len(points), tuple(dict.fromkeys(cameras)))


def localize(sightings: Sequence[Sighting], labels: Sequence[str],
             config: LocalizeConfig = LocalizeConfig()) -> dict[str, Located | NotFound]:
    """Each instance label's object from the points of every sighting that masks it."""
    cameras = ", ".join(s.geometry.camera for s in sightings) or "no camera"
    out: dict[str, Located | NotFound] = {}
    for label in labels:
        clouds = [(s.geometry.camera, _points(s, s.masks[label], config))
                  for s in sightings if label in s.masks]
        clouds = [(c, p) for c, p in clouds if len(p)]
        if not clouds:
            out[label] = NotFound(label, f"'{label}' is not seen (enough) by {cameras}")
            continue
        out[label] = estimate(label, np.concatenate([p for _, p in clouds]),
                              [c for c, _ in clouds], config)
    return out


def localize_instances(sightings: Sequence[Sighting], label: str,
                       config: LocalizeConfig = LocalizeConfig()) -> list[Located]:
    """The separate objects a label's masks show (identical copies kept apart), most points
    first; empty when no view shows one."""
    from scipy.ndimage import label as components

    clusters: list[tuple[list[str], np.ndarray]] = []
    for s in sightings:
        if label not in s.masks:
            continue
        parts, n = components(np.asarray(s.masks[label], bool), structure=np.ones((3, 3)))
        for i in range(1, n + 1):
            points = _points(s, parts == i, config)
            if len(points):
                clusters.append(([s.geometry.camera], points))
    merged = True
    while merged:  # join the closest pair nearer than `merge` until none is
        merged = False
        centres = [estimate(label, p, c, config).position for c, p in clusters]
        best = None
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                d = float(np.linalg.norm(centres[i] - centres[j]))
                if d < config.merge and (best is None or d < best[0]):
                    best = (d, i, j)
        if best is not None:
            _, i, j = best
            (ci, pi), (cj, pj) = clusters[i], clusters.pop(j)
            clusters[i] = (ci + cj, np.concatenate([pi, pj]))
            merged = True
    found = [estimate(label, p, c, config) for c, p in clusters]
    return sorted(found, key=lambda f: -f.points)
