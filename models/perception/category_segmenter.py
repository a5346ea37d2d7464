"""tether's own perception model: a small U-Net that labels every pixel with a catalogue
category, trained from scratch on the simulator's masks (`tether train-perception`).

    segmenter = CategorySegmenter.load(Path("models/checkpoints/segmenter"))
    labels = segmenter.predict(rgb)                  # (h, w) ints: 0 background, k categories[k-1]
    segmenter.category_masks(rgb)                    # {"akita_black_bowl": (h, w) bool, ...}
    segmenter.category_masks_batch(frames, ignore)   # one such dict per frame, one forward pass

A checkpoint directory holds `config.json` (the `SegmenterConfig`), `weights.pt` (the state dict
in float16) and a model card. `LearnedPerception` puts the model behind the `Perception`
protocol (`perception: {checkpoint: DIR}` in a tree): it renders the camera at the model's size,
labels it, and gives each requested entity a connected component of its category's pixels,
largest first in the order the entities are asked for: which of two identical bowls gets which
component is not known to a category segmenter, so look-alikes are told apart by where they are
(`tether.scenes.localization.localize_instances`), not by name. Look-alike categories (one
vocabulary noun: `akita_black_bowl` and `black_bowl` are both "black bowl") are one thing to
the model; `scene_masks` gives a scene's category the pixels of its look-alikes too when the
scene has no object of theirs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.models.perception.base import MODELS
from tether.scenes.robot import Robot
from tether.scenes.vocabulary import category_of, noun

CONFIG = "config.json"
WEIGHTS = "weights.pt"


@dataclass(frozen=True)
class SegmenterConfig:
    """The network: `categories` (label k is categories[k - 1]), input `size` (h, w), `width`
    channels at full resolution, doubled at each of `levels` down-samplings."""

    categories: tuple[str, ...]
    size: tuple[int, int] = (128, 128)
    width: int = 12
    levels: int = 3

    def __post_init__(self) -> None:
        if not self.categories:
            raise TetherError("a segmenter needs at least one category")
        if self.width < 1 or self.levels < 1:
            raise TetherError(f"segmenter width and levels are at least 1, not {self.width}, "
                              f"{self.levels}")
        if any(s % 2 ** self.levels for s in self.size):
            raise TetherError(f"segmenter size {self.size} must divide by 2^levels "
                              f"({2 ** self.levels})")

    @classmethod
    def read(cls, path: Path) -> SegmenterConfig:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(tuple(raw["categories"]), tuple(raw["size"]), int(raw["width"]),
                   int(raw["levels"]))

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")


def network(config: SegmenterConfig):
    """The U-Net of `config` (torch), randomly initialised."""
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = [config.width * 2 ** i for i in range(config.levels + 1)]
            self.down = nn.ModuleList([block(3, w[0])] + [block(w[i], w[i + 1])
                                                          for i in range(config.levels)])
            self.up = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2)
                                     for i in reversed(range(config.levels))])
            self.merge = nn.ModuleList([block(2 * w[i], w[i])
                                        for i in reversed(range(config.levels))])
            self.head = nn.Conv2d(w[0], len(config.categories) + 1, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            skips = []
            for i, down in enumerate(self.down):
                x = down(x if i == 0 else nn.functional.max_pool2d(x, 2))
                skips.append(x)
            for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1]), strict=True):
                x = merge(torch.cat([up(x), skip], dim=1))
            return self.head(x)

    return UNet()


def to_input(rgb: np.ndarray):
    """Upright uint8 frames (n, h, w, 3) or (h, w, 3) as the network's float input."""
    import torch

    x = torch.as_tensor(np.asarray(rgb)).float().div(255.0).sub(0.5)
    x = x.unsqueeze(0) if x.dim() == 3 else x
    return x.permute(0, 3, 1, 2).contiguous()


class CategorySegmenter:
    """A trained segmenter loaded from a checkpoint directory, in eval mode on the CPU."""

    def __init__(self, config: SegmenterConfig, model: Any):
        self.config, self.model = config, model.eval()

    @classmethod
    def load(cls, path: Path) -> CategorySegmenter:
        import torch

        if not (path / CONFIG).is_file() or not (path / WEIGHTS).is_file():
            raise TetherError(f"perception checkpoint: {path} has no {CONFIG} and {WEIGHTS}; "
                              f"train one with `tether train-perception`")
        config = SegmenterConfig.read(path / CONFIG)
        model = network(config)
        state = torch.load(path / WEIGHTS, map_location="cpu", weights_only=True)
        model.load_state_dict({k: v.float() if v.is_floating_point() else v
                               for k, v in state.items()})
        return cls(config, model)

    def predict(self, rgb: np.ndarray) -> np.ndarray:
        """Category labels (h, w) of an upright frame at the model's size (or (n, h, w) of n)."""
        import torch

        if tuple(np.shape(rgb)[-3:-1]) != self.config.size:
            raise TetherError(f"the segmenter takes {self.config.size} frames, not "
                              f"{tuple(np.shape(rgb)[-3:-1])}")
        with torch.no_grad():
            labels = self.model(to_input(rgb)).argmax(dim=1).numpy().astype(np.uint8)
        return labels[0] if np.ndim(rgb) == 3 else labels

    def category_masks(self, rgb: np.ndarray) -> dict[str, np.ndarray]:
        """A boolean mask per category with at least one pixel in the frame."""
        return self.category_masks_batch(np.asarray(rgb)[None])[0]

    def category_masks_batch(self, rgb: np.ndarray, ignore: np.ndarray | None = None
                             ) -> list[dict[str, np.ndarray]]:
        """`category_masks` of each of n frames (n, h, w, 3), labelled in one forward pass;
        pixels where `ignore` (n, h, w) is true are in no category."""
        labels = self.predict(rgb)
        if ignore is not None:
            labels = np.where(ignore, 0, labels)
        return [{c: frame == k for k, c in enumerate(self.config.categories, start=1)
                 if (frame == k).any()} for frame in labels]


@functools.lru_cache(maxsize=4)
def loaded(path: Path) -> CategorySegmenter:
    """The checkpoint at `path`, loaded once per process."""
    return CategorySegmenter.load(path)


def components(mask: np.ndarray, min_pixels: int) -> list[np.ndarray]:
    """The connected components (8-neighbours) of `mask` with at least `min_pixels` pixels,
    largest first."""
    from scipy.ndimage import label

    parts, n = label(mask, structure=np.ones((3, 3)))
    found = [parts == i for i in range(1, n + 1)]
    return sorted((m for m in found if m.sum() >= min_pixels), key=lambda m: -int(m.sum()))


@dataclass(frozen=True)
class CheckpointSpec:
    """`perception: {checkpoint: DIR, min_pixels: N}`: a `tether train-perception` directory;
    category components smaller than `min_pixels` (at the model's size) are noise."""

    checkpoint: Path
    min_pixels: int = 4


def checkpoint_spec(config: Mapping[str, Any]) -> CheckpointSpec:
    """The checked spec of `{checkpoint: DIR, min_pixels: N}`."""
    keys = ("checkpoint", "min_pixels")
    unknown = [k for k in config if k not in keys]
    if unknown:
        raise TetherError(f"perception: unknown option '{unknown[0]}'"
                          f"{did_you_mean(str(unknown[0]), list(keys))}; a checkpoint perception "
                          f"takes {', '.join(keys)}")
    path = Path(config["checkpoint"]).expanduser()
    if not (path / CONFIG).is_file():
        raise TetherError(f"perception checkpoint: {path} has no {CONFIG}; train one with "
                          f"`tether train-perception`")
    min_pixels = int(config.get("min_pixels", 4))
    if min_pixels < 1:
        raise TetherError(f"perception: `min_pixels` is at least 1, not {min_pixels}")
    return CheckpointSpec(path, min_pixels)


@MODELS.register("checkpoint")
class LearnedPerception:
    """The `Perception` of tether's own segmenter (see the module docstring)."""

    def __init__(self, spec: CheckpointSpec):
        self.spec = spec

    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        segmenter = loaded(self.spec.checkpoint)
        frame = robot.render(camera, segmenter.config.size)
        if frame is None:
            raise TetherError(f"model perception needs camera images; {type(robot).__name__} "
                              f"renders none for '{camera}'")
        by_category = scene_masks(segmenter.category_masks(frame),
                                  sorted({category_of(n) for n in names}))
        out: dict[str, np.ndarray] = {}
        for category, mask in by_category.items():
            entities = [n for n in names if category_of(n) == category]
            for entity, part in zip(entities, components(mask, self.spec.min_pixels),
                                    strict=False):
                out[entity] = resize_mask(part, tuple(size))
        return out


def scene_masks(masks: Mapping[str, np.ndarray], categories: Sequence[str]
                ) -> dict[str, np.ndarray]:
    """The masks of a scene's `categories` from a segmenter's `masks` by label: each category's
    own pixels, and those of a label no object of the scene has whose noun is the category's
    (and no other scene category's): a category segmenter cannot tell look-alikes apart, the
    scene says which of them is there."""
    nouns = {c: noun(c) for c in categories}
    owner: dict[str, list[np.ndarray]] = {}
    for label, mask in masks.items():
        if label in nouns:
            owner.setdefault(label, []).append(mask)
            continue
        alike = [c for c, n in nouns.items() if n == noun(label)]
        if len(alike) == 1:
            owner.setdefault(alike[0], []).append(mask)
    return {c: np.logical_or.reduce(parts) for c, parts in owner.items()}


def resize_mask(mask: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A boolean mask resized to `size` (h, w) by nearest neighbour."""
    if mask.shape == size:
        return mask
    rows = (np.arange(size[0]) + 0.5) * mask.shape[0] / size[0]
    cols = (np.arange(size[1]) + 0.5) * mask.shape[1] / size[1]
    return mask[rows.astype(int)[:, None], cols.astype(int)[None, :]]
