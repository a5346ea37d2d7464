"""Camera localization: where objects are, from RGB-D frames and instance masks only.

A `Sighting` is one camera's metric depth, its geometry (`tether.scenes.projection`) and boolean
masks by label, from any perception: the simulator's per-entity masks (privileged, the oracle) or
a model's. Each mask is eroded (`erode` pixels) or cut where its depth jumps (`gap`: what lies
behind the object's edge or in front of it), back-projected to world points (one `Cloud` per
view, with the ring of points around the mask), and the points of every view that saw the object
are pooled (agent view and wrist fused). The estimate is robust: the object's `lower`/`upper`
extent is the `low`-`high` percentile box of its points, its `position` that box's centre, and
`median` the points' median, kept beside it (the median leans toward the faces the camera sees: a
bowl's inner wall, ~2 cm; the box centre does not, see the research note on camera
localization). A camera sees an object's top and near side only, so the box can be completed
(`LocalizeConfig`): its bottom lowered to the surface seen around it, half a pixel added around,
a tall object's hidden far half filled in; `benchmarks/localization_geometry.py` measures each
rule against the simulator's boxes.

    sightings = [Sighting.of(observer.observe(c, (128, 128), depth=True, segmentation=True))
                 for c in ("agentview", "robot0_eye_in_hand")]
    localize(sightings, ["plate_1", "akita_black_bowl_1"])     # by instance label (entity names)
    # {"plate_1": Located(...), "akita_black_bowl_1": NotFound(..., reason="not seen ...")}
    localize_instances(sightings, "akita_black_bowl")           # one label, several copies

Labels that are instances (entity names, instance ids) are localized by `localize`: one object
per label, however many pieces occlusion cuts its mask into. A label shared by identical copies
(a category's mask from a category segmenter) goes to `localize_instances`, which keeps the
copies apart: each view's mask is split into connected components, and components of all views
whose positions are closer than `merge` are one object; knowing how many copies there are, it
joins the pieces an occluder cut apart and splits copies that touch. An object no view shows is a
`NotFound` with the reason, never a guess.
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

PAIR = 1.6  # a footprint this many times as long as wide may be two copies side by side
SURFACE = 90.0  # the percentile of the heights around and under an object taken as its support
TOP_BAND, TOP_DEPTH = 0.25, 0.5  # a top showing this deep a share of the width shows the far side


@dataclass(frozen=True)
class LocalizeConfig:
    """`erode` border pixels are dropped from each mask (kept whole when fewer than `min_pixels`
    would remain); a sighting needs `min_pixels` pixels with depth; the extent is the `low`-`high`
    percentile box of the points; instances of one label nearer than `merge` m are one.

    Four completions of what a camera cannot see (0 or False: off): the mask's points across a
    gap in depth wider than `gap` m from their median depth are dropped (the background a mask's
    border takes in past the object's far edge, or the edge of an occluder in front of it), and
    so are pieces holding less than a `stray` share of its points that no chain of neighbouring
    pixels closer than `gap` in space joins to the rest (a border pixel on what stands nearby);
    the bottom is lowered to the supporting surface seen around the mask when that lies at most
    `support` m under the lowest point (objects rest on something); with `far_side` the hidden
    far half of a tall object's footprint is completed: as deep along the horizontal view
    direction as it is wide across it (see `_completed`); and with `pad` the box grows by half
    a pixel's footprint on each horizontal side (the outermost points are pixel centres)."""

    erode: int = 1
    min_pixels: int = 4
    low: float = 2.0
    high: float = 98.0
    merge: float = 0.05
    gap: float = 0.0
    stray: float = 0.0
    support: float = 0.0
    far_side: bool = False
    pad: bool = False

    def __post_init__(self) -> None:
        if self.erode < 0 or self.min_pixels < 1 or self.merge <= 0:
            raise TetherError(f"localization: erode >= 0, min_pixels >= 1 and merge > 0, not "
                              f"{self.erode}, {self.min_pixels}, {self.merge}")
        if not 0.0 <= self.low < self.high <= 100.0:
            raise TetherError(f"localization: percentiles need 0 <= low < high <= 100, not "
                              f"{self.low}, {self.high}")
        if self.gap < 0 or self.support < 0 or not 0.0 <= self.stray < 1.0:
            raise TetherError(f"localization: gap >= 0, support >= 0 and 0 <= stray < 1, not "
                              f"{self.gap}, {self.support}, {self.stray}")


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


@dataclass(frozen=True)
class Cloud:
    """One view's sight of one object: its world `points` (n, 3), the world points of the ring
    of pixels just outside its mask (`around`, what it stands out from), the unit horizontal
    direction (x, y) the camera looks along (`view`) and the width (m) a pixel covers at the
    object's median depth (`pixel`)."""

    camera: str
    points: np.ndarray
    around: np.ndarray
    view: np.ndarray
    pixel: float


def _eroded(mask: np.ndarray, config: LocalizeConfig) -> np.ndarray:
    from scipy.ndimage import binary_erosion

    if config.erode == 0:
        return mask
    inner = binary_erosion(mask, iterations=config.erode)
    return inner if inner.sum() >= config.min_pixels else mask


def _detached(depth: np.ndarray, mask: np.ndarray, gap: float) -> np.ndarray:
    """The mask's pixels across a gap in depth wider than `gap` from its median: behind the
    first such gap beyond the median (the background seen past the object's far edge) or in
    front of the last one before it (an occluder's edge, the arm's). An object's own surface
    fills its depths without gaps."""
    d = np.where(mask & np.isfinite(depth) & (depth > 0), depth, np.nan)
    values = np.sort(d[np.isfinite(d)])
    out = np.zeros_like(mask)
    if len(values) < 2:
        return out
    middle = len(values) // 2
    far, near = values[middle:], values[:middle + 1]
    jumps = np.flatnonzero(np.diff(far) > gap)
    if len(jumps):
        out |= np.isfinite(d) & (d > far[jumps[0]])
    jumps = np.flatnonzero(np.diff(near) > gap)
    if len(jumps):
        out |= np.isfinite(d) & (d < near[jumps[-1] + 1])
    return out


def _strays(geometry: CameraGeometry, depth: np.ndarray, mask: np.ndarray,
            config: LocalizeConfig) -> np.ndarray:
    """The mask's pixels in pieces (`_surfaces`) holding less than `stray` of its points."""
    piece = _surfaces(geometry, depth, mask, config.gap)
    valid = piece >= 0
    out = np.zeros_like(mask)
    out[valid] = np.bincount(piece[valid])[piece[valid]] < config.stray * valid.sum()
    return out


def _surfaces(geometry: CameraGeometry, depth: np.ndarray, mask: np.ndarray,
              gap: float) -> np.ndarray:
    """The mask's pixels with depth labelled by piece (-1 elsewhere), pieces being what
    neighbouring pixels (8-connected) whose world points lie closer than `gap` join: one
    surface each, so two objects one in front of the other are two pieces."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    valid = mask & np.isfinite(depth) & (depth > 0)
    rows, cols = np.nonzero(valid)
    points = geometry.back_project(depth, valid)  # in np.nonzero's order
    index = np.full(mask.shape, -1)
    index[rows, cols] = np.arange(len(rows))
    pairs = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        r, c = rows + dr, cols + dc
        inside = (r < mask.shape[0]) & (c >= 0) & (c < mask.shape[1])
        j = np.full(len(rows), -1)
        j[inside] = index[r[inside], c[inside]]
        i = np.flatnonzero(j >= 0)
        near = np.linalg.norm(points[i] - points[j[i]], axis=1) < gap
        pairs.append(np.stack([i[near], j[i][near]]))
    a, b = np.concatenate(pairs, axis=1)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(rows), len(rows)))
    out = np.full(mask.shape, -1)
    out[rows, cols] = connected_components(graph, directed=False)[1]
    return out


def _cloud(sighting: Sighting, mask: np.ndarray, config: LocalizeConfig) -> Cloud | None:
    """The view's cloud of the object `mask` shows; None when it has too few points."""
    from scipy.ndimage import binary_dilation

    geometry = sighting.geometry
    mask = np.asarray(mask, bool)
    if mask.shape != geometry.size:
        raise TetherError(f"a mask of {mask.shape} does not match camera "
                          f"'{geometry.camera}' at {geometry.size}")
    keep = _eroded(mask, config)
    if config.gap > 0:
        keep = keep & ~_detached(sighting.depth, keep, config.gap)
    if config.gap > 0 and config.stray > 0:
        keep = keep & ~_strays(geometry, sighting.depth, keep, config)
    points = geometry.back_project(sighting.depth, keep)
    if len(points) < config.min_pixels:
        return None
    around = geometry.back_project(sighting.depth, binary_dilation(mask, iterations=2) & ~mask)
    forward = -geometry.rotation[:2, 2]
    norm = float(np.linalg.norm(forward))
    view = forward / norm if norm > 1e-6 else np.zeros(2)  # looking straight down: no far side
    seen = sighting.depth[keep & np.isfinite(sighting.depth) & (sighting.depth > 0)]
    pixel = float(np.median(seen)) / geometry.focal
    return Cloud(geometry.camera, points, around, view, pixel)


def estimate(label: str, clouds: Sequence[Cloud],
             config: LocalizeConfig = LocalizeConfig()) -> Located:
    """The robust estimate of one object from the `clouds` of the views that saw it (>= 1): the
    percentile box of their pooled points, completed below and behind as `config` says."""
    points = np.concatenate([c.points for c in clouds])
    lower = np.percentile(points, config.low, axis=0)
    upper = np.percentile(points, config.high, axis=0)
    if config.support > 0:
        lower[2] = _supported(lower[2], np.concatenate([c.around for c in clouds]), config)
    main = max(clouds, key=lambda c: len(c.points))  # the view that saw the most of it
    if config.pad:
        half = np.array([main.pixel / 2, main.pixel / 2, 0.0])
        lower, upper = lower - half, upper + half
    if config.far_side:
        lower, upper = _completed(points, lower, upper, main, config)
    return Located(label, (lower + upper) / 2, lower, upper, np.median(points, axis=0),
                   len(points), tuple(dict.fromkeys(c.camera for c in clouds)))


def _supported(bottom: float, around: np.ndarray, config: LocalizeConfig) -> float:
    """The bottom lowered to the surface the object stands on: the highest of what the ring
    shows under the lowest visible point (its `SURFACE` percentile: a box the object stands on
    shows around it above the table), when that is at most `support` below it."""
    under = around[around[:, 2] < bottom, 2]
    if len(under) == 0:
        return bottom
    surface = float(np.percentile(under, SURFACE))
    return surface if bottom - surface <= config.support else bottom


def _completed(points: np.ndarray, lower: np.ndarray, upper: np.ndarray, cloud: Cloud,
               config: LocalizeConfig) -> tuple[np.ndarray, np.ndarray]:
    """The box with its hidden far side. An object at least as tall as it is wide across the
    view shows mostly its near face (its top is too small to show how deep it is): when its
    points reach less deep along the horizontal view direction than they are wide across it,
    the box is swept away from the camera by the difference (a round or square footprint seen
    from one side). A lower object's top shows its depth, and so does a tall one's whose top
    `TOP_BAND` of points reaches `TOP_DEPTH` of its width deep (a handle makes a mug or a moka
    pot wider than deep, and its open top or lid shows how deep): its box is left as it was."""
    view = cloud.view
    if not view.any():
        return lower, upper
    along, across = (np.percentile(points[:, :2] @ d, [config.low, config.high])
                     for d in (view, np.array([-view[1], view[0]])))
    width, depth = across[1] - across[0], along[1] - along[0]
    if upper[2] - lower[2] < width or depth >= width:
        return lower, upper
    top = points[points[:, 2] >= upper[2] - TOP_BAND * (upper[2] - lower[2]), :2] @ view
    if len(top) >= config.min_pixels and np.subtract(
            *np.percentile(top, [config.high, config.low])) >= TOP_DEPTH * width:
        return lower, upper  # its top shows its far side: a mug's far rim, a pot's lid
    shift = np.zeros(3)
    shift[:2] = (width - depth) * view
    return np.minimum(lower, lower + shift), np.maximum(upper, upper + shift)


def localize(sightings: Sequence[Sighting], labels: Sequence[str],
             config: LocalizeConfig = LocalizeConfig()) -> dict[str, Located | NotFound]:
    """Each instance label's object from the clouds of every sighting that masks it."""
    cameras = ", ".join(s.geometry.camera for s in sightings) or "no camera"
    out: dict[str, Located | NotFound] = {}
    for label in labels:
        clouds = [c for s in sightings if label in s.masks
                  if (c := _cloud(s, s.masks[label], config)) is not None]
        if not clouds:
            out[label] = NotFound(label, f"'{label}' is not seen (enough) by {cameras}")
            continue
        out[label] = estimate(label, clouds, config)
    return out


def localize_instances(sightings: Sequence[Sighting], label: str,
                       config: LocalizeConfig = LocalizeConfig(),
                       count: int | None = None) -> list[Located]:
    """The separate objects a label's masks show (identical copies kept apart), most points
    first; empty when no view shows one. Each mask's connected components are pieces. With
    `count` (how many copies the scene holds), while more objects are found, stray pieces are
    dropped (`_drop_strays`) and the smallest piece joins the one it comes nearest (`_absorb`:
    an occluder cuts one in two); while fewer are, the masks are cut where depth jumps as well
    (`_surfaces`: a copy in front of another), kept when that finds more objects that are no
    strays (`_substantial`), and copies that touch are split apart (`_split`)."""
    clusters = _pieces(sightings, label, config, count, by_surface=False)
    if count is not None and 0 < len(clusters) < count and config.gap > 0:
        cut = _pieces(sightings, label, config, count, by_surface=True)
        clusters = cut if _substantial(cut, config) > _substantial(clusters, config) else clusters
    while count is not None and 0 < len(clusters) < count:
        widest = max(range(len(clusters)), key=lambda i: _span(clusters[i]))
        halves = _split(clusters[widest], config)
        if halves is None:
            break
        clusters[widest:widest + 1] = halves
    found = [estimate(label, c, config) for c in clusters]
    return sorted(found, key=lambda f: -f.points)


def _pieces(sightings: Sequence[Sighting], label: str, config: LocalizeConfig,
            count: int | None, by_surface: bool) -> list[list[Cloud]]:
    """The clouds of every view's pieces of the label's mask (connected components, or
    `_surfaces` when `by_surface`), joined as `localize_instances` says."""
    from scipy.ndimage import label as components

    clusters: list[list[Cloud]] = []
    for s in sightings:
        if label not in s.masks:
            continue
        mask = np.asarray(s.masks[label], bool)
        if by_surface:
            parts = _surfaces(s.geometry, s.depth, mask, config.gap) + 1
            n = int(parts.max())
        else:
            parts, n = components(mask, structure=np.ones((3, 3)))
        sizes = np.bincount(parts.ravel(), minlength=n + 1)
        for i in np.flatnonzero(sizes[1:] >= config.min_pixels) + 1:
            cloud = _cloud(s, parts == i, config)
            if cloud is not None:
                clusters.append([cloud])
    _join(clusters, label, config)
    if count is not None:  # strays, then pieces of one object an occluder cut
        _drop_strays(clusters, config, keep=count)
        _absorb(clusters, config, keep=count)
    return clusters


def _join(clusters: list[list[Cloud]], label: str, config: LocalizeConfig) -> None:
    """Join the pair of clusters whose estimates' middles lie nearest while nearer than
    `merge` (in place)."""
    while len(clusters) > 1:
        found = [estimate(label, c, config) for c in clusters]
        distance, i, j = min((float(np.linalg.norm(found[i].position - found[j].position)), i, j)
                             for i in range(len(clusters)) for j in range(i + 1, len(clusters)))
        if distance >= config.merge:
            return
        clusters[i] = clusters[i] + clusters.pop(j)


def _absorb(clusters: list[list[Cloud]], config: LocalizeConfig, keep: int) -> None:
    """Join the smallest cluster that comes nearer than `merge` to another (`_apart`) to the
    one it comes nearest, while more than `keep` are left (in place): a piece goes to the
    object it was cut from, and two copies that touch stay two."""
    while len(clusters) > keep:
        sizes = [_size(cluster) for cluster in clusters]
        for small in np.argsort(sizes, kind="stable"):
            distance, near = min((_apart(clusters[small], other), k)
                                 for k, other in enumerate(clusters) if k != small)
            if distance < config.merge:
                clusters[near] = clusters[near] + clusters[small]
                del clusters[small]
                break
        else:
            return


def _substantial(clusters: list[list[Cloud]], config: LocalizeConfig) -> int:
    """How many clusters hold at least a `stray` share of the largest one's points."""
    sizes = [_size(cluster) for cluster in clusters]
    return sum(size >= config.stray * max(sizes, default=0) for size in sizes)


def _drop_strays(clusters: list[list[Cloud]], config: LocalizeConfig, keep: int) -> None:
    """Drop the smallest cluster holding less than a `stray` share of the largest one's points
    and lying `merge` or more from every other (`_apart`), while more than `keep` are left (in
    place): a few mislabelled pixels apart are no copy, and joining them would join two copies
    instead."""
    while len(clusters) > keep:
        sizes = [_size(cluster) for cluster in clusters]
        strays = [i for i, size in enumerate(sizes) if size < config.stray * max(sizes)
                  and all(_apart(clusters[i], other) >= config.merge
                          for k, other in enumerate(clusters) if k != i)]
        if not strays:
            return
        clusters.pop(min(strays, key=lambda i: sizes[i]))


def _size(cluster: list[Cloud]) -> int:
    """How many points a cluster's clouds hold."""
    return sum(len(c.points) for c in cluster)


def _apart(a: list[Cloud], b: list[Cloud]) -> float:
    """How far apart two clusters' nearest points are (m)."""
    from scipy.spatial import cKDTree

    distances, _ = cKDTree(np.concatenate([c.points for c in a])).query(
        np.concatenate([c.points for c in b]))
    return float(np.min(distances))


def _span(clouds: list[Cloud]) -> float:
    """The longer horizontal side of the points' box."""
    points = np.concatenate([c.points for c in clouds])[:, :2]
    return float(np.max(points.max(axis=0) - points.min(axis=0)))


def _split(clouds: list[Cloud], config: LocalizeConfig) -> list[list[Cloud]] | None:
    """One object's clouds as two (2-means on the points' horizontal positions, started at the
    two ends of their longer principal axis), or None when their footprint is not `PAIR` times
    as long as it is wide, or the halves' middles would lie nearer than `merge`: one object,
    not two copies touching."""
    from scipy.cluster.vq import kmeans2

    points = np.concatenate([c.points for c in clouds])[:, :2]
    centred = points - points.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2]
    along, across = centred @ axes[0], centred @ axes[1]
    length, width = (float(np.subtract(*np.percentile(v, [config.high, config.low])))
                     for v in (along, across))
    if length < PAIR * width:
        return None
    start = points[[int(np.argmin(along)), int(np.argmax(along))]]
    centres, side = kmeans2(points, start, minit="matrix")
    if float(np.linalg.norm(centres[0] - centres[1])) < config.merge or min(
            np.bincount(side, minlength=2)) < config.min_pixels:
        return None
    halves: list[list[Cloud]] = [[], []]
    first = 0
    for c in clouds:
        mine = side[first:first + len(c.points)]
        first += len(c.points)
        for k in (0, 1):
            if (mine == k).sum() >= config.min_pixels:
                halves[k].append(Cloud(c.camera, c.points[mine == k], c.around, c.view, c.pixel))
    return halves if all(halves) else None
