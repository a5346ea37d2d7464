"""The perception dataset: rendered RGB-D frames labelled with the simulator's instance masks.

`tether collect-perception` (`tether.datasets.perception`) writes it and `tether
train-perception` (`tether.models.perception.training`) and `benchmarks/perception.py` read it.
A dataset is a directory:

    meta.json           categories (label k is categories[k - 1]; 0 is background), frame size,
                        and one record per frame: task, init state, perturbation, camera, the
                        camera's geometry, and each instance's entity, category and true centre
    shards/00000.npz    rgb (n, h, w, 3) uint8, depth (n, h, w) float32 metres,
                        category (n, h, w) uint8 labels, instance (n, h, w) uint8 (0: none,
                        k: the frame's k-th instance record)

    writer = DatasetWriter(root, size=(128, 128))
    writer.add(rgb, depth, {"plate_1": mask, ...}, truth={"plate_1": centre}, record={...})
    writer.close()
    data = load(root)          # Frames: arrays of every shard, records, categories
    data = load([a, b])        # several datasets, their categories merged
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.scenes.projection import CameraGeometry
from tether.scenes.vocabulary import category_of

META = "meta.json"
SHARDS = "shards"
SHARD_FRAMES = 64


@dataclass
class Frames:
    """A loaded dataset: stacked arrays, one record per frame, the category names."""

    rgb: np.ndarray
    depth: np.ndarray
    category: np.ndarray
    instance: np.ndarray
    records: list[dict[str, Any]]
    categories: list[str]

    def __len__(self) -> int:
        return len(self.records)

    def select(self, keep: np.ndarray) -> Frames:
        """The frames where boolean `keep` is true."""
        idx = np.flatnonzero(keep)
        return Frames(self.rgb[idx], self.depth[idx], self.category[idx], self.instance[idx],
                      [self.records[i] for i in idx], self.categories)


def geometry_of(record: Mapping[str, Any]) -> CameraGeometry:
    """The camera geometry a frame record stores."""
    g = record["geometry"]
    return CameraGeometry(record["camera"], tuple(g["size"]), g["focal"],
                          np.array(g["position"]), np.array(g["rotation"]))


class DatasetWriter:
    """Appends labelled frames to a new dataset directory, a shard every `SHARD_FRAMES`."""

    def __init__(self, root: Path, size: tuple[int, int], info: Mapping[str, Any] | None = None):
        if root.exists():
            raise TetherError(f"{root} exists; collect-perception writes a new dataset (choose "
                              f"another --out)")
        (root / SHARDS).mkdir(parents=True)
        self.root, self.size, self.info = root, tuple(size), dict(info or {})
        self.categories: list[str] = []
        self.records: list[dict[str, Any]] = []
        self._pending: list[tuple[np.ndarray, ...]] = []
        self._shards = 0

    def add(self, rgb: np.ndarray, depth: np.ndarray, geometry: CameraGeometry,
            masks: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray],
            record: Mapping[str, Any]) -> None:
        """One frame: its entities' `masks` become category and instance labels; `truth` is each
        entity's true centre (world, m)."""
        category = np.zeros(self.size, np.uint8)
        instance = np.zeros(self.size, np.uint8)
        instances = []
        for k, (entity, mask) in enumerate(masks.items(), start=1):
            name = category_of(entity)
            if name not in self.categories:
                self.categories.append(name)
            category[mask] = self.categories.index(name) + 1
            instance[mask] = k
            instances.append({"id": k, "entity": entity, "category": name,
                              "centre": [round(float(v), 5) for v in truth[entity]]})
        self.records.append({**record, "camera": geometry.camera, "instances": instances,
                             "geometry": {"size": list(geometry.size), "focal": geometry.focal,
                                          "position": geometry.position.tolist(),
                                          "rotation": geometry.rotation.tolist()}})
        self._pending.append((rgb, depth.astype(np.float32), category, instance))
        if len(self._pending) >= SHARD_FRAMES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            rgb, depth, category, instance = (np.stack(a)
                                              for a in zip(*self._pending, strict=True))
            np.savez_compressed(self.root / SHARDS / f"{self._shards:05d}.npz", rgb=rgb,
                                depth=depth, category=category, instance=instance)
            self._shards += 1
            self._pending = []
        meta = {"size": list(self.size), "categories": self.categories, **self.info,
                "frames": len(self.records), "records": self.records}
        (self.root / META).write_text(json.dumps(meta) + "\n", encoding="utf-8")

    def close(self) -> None:
        """Write the last shard and the metadata (they are written with every shard, so a
        killed collection leaves a dataset of the frames up to its last shard)."""
        self._flush()


def read_meta(root: Path) -> dict[str, Any]:
    """A dataset's metadata; a clear error when `root` is not a perception dataset."""
    path = root / META
    if not path.is_file():
        raise TetherError(f"{root} is not a perception dataset (no {META}); record one with "
                          f"`tether collect-perception`")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise TetherError(f"{path} is not JSON ({exc})") from None
    missing = [k for k in ("size", "categories", "records") if k not in meta]
    if missing:
        raise TetherError(f"{path} is not perception dataset metadata (no '{missing[0]}')")
    if not meta["records"]:
        raise TetherError(f"{root} has no frames; record some with `tether collect-perception`")
    return meta


def load(roots: Path | Sequence[Path]) -> Frames:
    """Every frame of the dataset at `roots` (one or several: their category labels are
    renumbered into the union of their categories, in order of first appearance)."""
    if isinstance(roots, Path):
        return _load_one(roots)
    parts = [_load_one(r) for r in roots]
    if not parts:
        raise TetherError("no perception dataset given")
    categories = list(dict.fromkeys(c for p in parts for c in p.categories))
    for p in parts:
        table = np.array([0, *(categories.index(c) + 1 for c in p.categories)], np.uint8)
        p.category = table[p.category]
    return Frames(*(np.concatenate([getattr(p, k) for p in parts])
                    for k in ("rgb", "depth", "category", "instance")),
                  records=[r for p in parts for r in p.records], categories=categories)


def _load_one(root: Path) -> Frames:
    meta = read_meta(root)
    shards = sorted((root / SHARDS).glob("*.npz"))
    arrays = [np.load(p) for p in shards]
    stacked = {k: np.concatenate([a[k] for a in arrays]) for k in
               ("rgb", "depth", "category", "instance")}
    if len(stacked["rgb"]) != len(meta["records"]):
        raise TetherError(f"{root}: {len(stacked['rgb'])} frames in {SHARDS}/ but "
                          f"{len(meta['records'])} records in {META}")
    return Frames(**stacked, records=meta["records"], categories=meta["categories"])
