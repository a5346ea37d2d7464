"""The perception protocol, the config of the model-backed perceptions, and their registry.

`Perception.masks(robot, camera, size, names)` returns a boolean (h, w) mask per requested entity
that is visible, upright (as `Robot.render` frames are). Input interventions ask it where the
distractors and the target are. `tether.models.perception.perception_for(spec)` builds one from
a tree's config:

    privileged   (the default) the simulator's own segmentation
                 (`tether.scenes.observations.PrivilegedPerception`): exact, simulation only
    {detector: DIR, segmenter: DIR}
                 GroundingDINO boxes for each entity's phrase, SAM2 masks from those boxes, every
                 frame (`tether.models.perception.open_vocab.DetectSegment`)
    {detector: DIR, tracker: DIR}
                 GroundingDINO boxes on the first frame seed a SAM2 video tracker that propagates
                 the masks frame by frame (`tether.models.perception.tracker.Tracker`)

Options of the model-backed kinds: `frame` ([h, w] the camera is rendered at for the models,
default [256, 256]; masks are resized to the requested size), `box_threshold` (0.35),
`device` (cpu), `phrases` ({entity: text prompt}; default `tether.scenes.vocabulary.phrase`).
DIRs are local `save_pretrained` directories (model and processor); nothing is downloaded. A
spec is checked when the tree is compiled (directory, model type); the weights load on first use.

Each model-backed kind registers itself in `MODELS` under the option that selects it
(`segmenter`, `tracker`); adapters import this module, never the package's factory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.registry import Registry
from tether.scenes.robot import Robot
from tether.scenes.vocabulary import phrase


class Perception(Protocol):
    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        """Upright boolean masks of the visible entities among `names`."""


def model_dir(path: str | Path, role: str, types: Sequence[str]) -> Path:
    """`path` checked to be a local `save_pretrained` directory of one of the model `types`."""
    p = Path(path).expanduser()
    if not p.is_dir():
        raise TetherError(f"perception {role}: no model directory {p} (a local save_pretrained "
                          f"directory is needed; nothing is downloaded)")
    config = p / "config.json"
    if not config.is_file():
        raise TetherError(f"perception {role}: {p} has no config.json; is it a save_pretrained "
                          f"directory?")
    kind = json.loads(config.read_text()).get("model_type")
    if kind not in types:
        raise TetherError(f"perception {role}: {p} holds a '{kind}' model, not "
                          f"{' or '.join(repr(t) for t in types)}")
    return p


DETECTOR_TYPES = ("grounding-dino",)
SEGMENTER_TYPES = ("sam2", "sam2_video")  # SAM2.1 checkpoints are saved as `sam2_video`
TRACKER_TYPES = ("sam2_video",)


@dataclass(frozen=True)
class ModelPerceptionSpec:
    """A checked config of the model-backed perceptions (see the module docstring)."""

    detector: Path
    segmenter: Path | None = None
    tracker: Path | None = None
    frame: tuple[int, int] = (256, 256)
    box_threshold: float = 0.35
    device: str = "cpu"
    phrases: dict[str, str] = field(default_factory=dict)

    def phrase(self, entity: str) -> str:
        return self.phrases.get(entity) or phrase(entity)


_KEYS = ("detector", "segmenter", "tracker", "frame", "box_threshold", "device", "phrases")


def spec_of(config: Mapping[str, Any]) -> ModelPerceptionSpec:
    """The checked spec of a model-backed perception's config mapping."""
    unknown = [k for k in config if k not in _KEYS]
    if unknown:
        raise TetherError(f"perception: unknown option '{unknown[0]}'"
                          f"{did_you_mean(str(unknown[0]), list(_KEYS))}; options: "
                          f"{', '.join(_KEYS)}")
    if "detector" not in config:
        raise TetherError("perception: a model-backed perception needs `detector` (a local "
                          "GroundingDINO directory)")
    if ("segmenter" in config) == ("tracker" in config):
        raise TetherError("perception: give exactly one of `segmenter` (SAM2, every frame) and "
                          "`tracker` (SAM2 video, propagated)")
    frame = tuple(int(v) for v in config.get("frame", (256, 256)))
    if len(frame) != 2 or min(frame) < 1:
        raise TetherError(f"perception: `frame` is [height, width], got {config['frame']!r}")
    threshold = float(config.get("box_threshold", 0.35))
    if not 0.0 <= threshold <= 1.0:
        raise TetherError(f"perception: `box_threshold` is in [0, 1], got {threshold}")
    phrases = config.get("phrases", {})
    if not isinstance(phrases, Mapping):
        raise TetherError("perception: `phrases` maps entity names to text prompts")
    return ModelPerceptionSpec(
        detector=model_dir(config["detector"], "detector", DETECTOR_TYPES),
        segmenter=(model_dir(config["segmenter"], "segmenter", SEGMENTER_TYPES)
                   if "segmenter" in config else None),
        tracker=(model_dir(config["tracker"], "tracker", TRACKER_TYPES)
                 if "tracker" in config else None),
        frame=frame, box_threshold=threshold, device=str(config.get("device", "cpu")),
        phrases={str(k): str(v) for k, v in phrases.items()})


MODELS: Registry[Callable[[ModelPerceptionSpec], Perception]] = Registry("model perception")
