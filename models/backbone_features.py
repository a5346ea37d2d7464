"""A trained ACT's vision backbone, frozen, and its feature maps of every frame, computed once.

`tether train --backbone CHECKPOINT` starts a new ACT whose ResNet is the one `CHECKPOINT` learned
(its `model.backbone.*` weights), frozen. With the backbone fixed, each camera frame's feature map
is the same at every step, so `BackboneFeatures` computes them once for a `FrameCache` (the
frames as the policy's preprocessor normalises them, through the backbone) and a training step
serves them in place of the images: the transformer trains on them without running the ResNet
forward and backward, most of a step's cost on a CPU. The saved checkpoint holds the backbone
like any other, so it runs as any ACT does.

    features = BackboneFeatures.of(policy, preprocessor, cache)     # after `load_backbone`
    with features.served(policy):
        loss = policy.forward(features.batch(preprocessor(cache.batch(idx)), idx))[0]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tether.errors import TetherError

PREFIX = "model.backbone."
CHUNK = 256  # frames through the backbone at a time


def load_backbone(policy: Any, checkpoint: Path) -> None:
    """Copy `checkpoint`'s vision backbone into `policy`'s and freeze it."""
    from safetensors.torch import load_file

    weights = checkpoint / "model.safetensors"
    if not weights.is_file():
        raise TetherError(f"--backbone {checkpoint}: no model.safetensors (a `tether train` "
                          "checkpoint folder)")
    saved = {k[len(PREFIX):]: v for k, v in load_file(weights).items() if k.startswith(PREFIX)}
    backbone = policy.model.backbone
    wanted = backbone.state_dict()
    if saved.keys() != wanted.keys() or any(saved[k].shape != wanted[k].shape for k in saved):
        raise TetherError(f"--backbone {checkpoint}: its vision backbone is not this policy's "
                          f"({len(saved)} tensors, this one has {len(wanted)}; both must be "
                          "the same ResNet)")
    backbone.load_state_dict({k: v.float() for k, v in saved.items()})
    backbone.requires_grad_(False)


class BackboneFeatures:
    """Per camera, the frozen backbone's feature map of every frame of a `FrameCache`."""

    def __init__(self, maps: dict[str, Any]) -> None:
        self.maps = maps

    @classmethod
    def of(cls, policy: Any, preprocessor: Any, cache: Any) -> BackboneFeatures:
        """Run every frame of `cache` through `preprocessor` and `policy`'s backbone."""
        import torch

        keys = list(policy.config.image_features)
        parts: dict[str, list] = {k: [] for k in keys}
        with torch.no_grad():
            for start in range(0, len(cache), CHUNK):
                batch = preprocessor(cache.batch(range(start, min(start + CHUNK, len(cache)))))
                for key in keys:
                    parts[key].append(policy.model.backbone(batch[key])["feature_map"])
        return cls({k: torch.cat(v) for k, v in parts.items()})

    def batch(self, batch: dict[str, Any], indices: Sequence[int]) -> dict[str, Any]:
        """`batch` (preprocessed, of the frames at `indices`) with each camera's images
        replaced by their feature maps."""
        import torch

        at = torch.as_tensor(list(indices), dtype=torch.long)
        return {**batch, **{key: maps[at] for key, maps in self.maps.items()}}

    @staticmethod
    @contextmanager
    def served(policy: Any) -> Iterator[None]:
        """While open, `policy`'s backbone passes what it is given through as its feature map
        (a batch from `batch` holds feature maps where the images were)."""
        backbone = policy.model.backbone
        backbone.forward = lambda features: {"feature_map": features}
        try:
            yield
        finally:
            del backbone.forward
