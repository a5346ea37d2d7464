"""Perception: object masks in a camera's frame, from the simulator or from local models.

The protocol and the model config are in `base`; the adapters are `open_vocab` (GroundingDINO
boxes, SAM2 masks on every frame), `tracker` (SAM2's video tracker seeded by GroundingDINO) and
`category_segmenter` (tether's own segmenter, `tether train-perception`), each registered in
`base.MODELS` under the option that selects it. The privileged perception
(the simulator's segmentation) lives with the scene's observations
(`tether.scenes.observations.PrivilegedPerception`). This module imports every adapter and
builds a perception from a tree's config (see docs/perception.md):

    perception_for(None)                                            # the privileged one
    perception_for({"detector": "models/gdino", "tracker": "models/sam2.1"})
    perception_for({"checkpoint": "models/checkpoints/segmenter"})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.errors import TetherError
from tether.models.perception import category_segmenter, open_vocab, tracker
from tether.models.perception.base import MODELS, Perception, spec_of
from tether.scenes.observations import PRIVILEGED

__all__ = ["PRIVILEGED", "Perception", "perception_for"]

ADAPTERS = (open_vocab, tracker, category_segmenter)  # imported: each registers its kind


def perception_for(spec: Any = None) -> Perception:
    """The perception a config names: None or "privileged", a mapping of local model directories
    (see `tether.models.perception.base`), a mapping with a `checkpoint` of tether's own
    segmenter, or a `Perception` object itself."""
    if spec is None or spec == "privileged":
        return PRIVILEGED
    if hasattr(spec, "masks"):
        return spec
    if isinstance(spec, Mapping) and "checkpoint" in spec:
        return MODELS.get("checkpoint")(category_segmenter.checkpoint_spec(spec))
    if isinstance(spec, Mapping):
        checked = spec_of(spec)
        return MODELS.get("tracker" if checked.tracker is not None else "segmenter")(checked)
    raise TetherError(f"perception: expected 'privileged' or a mapping with `detector` and "
                      f"`segmenter` or `tracker` directories, or a `checkpoint`, got {spec!r}")
