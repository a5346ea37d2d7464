"""Input interventions: decorators that change what the `vla` leaf below them shows its policy.

SOMA and VLA² gain most of their robustness by editing the policy's inputs, not the policy:
- `erase` (SOMA's Eraser): distractor objects are masked and inpainted away (OpenCV Telea) in
  every image the policy sees;
- `paint` (SOMA's Paint-to-Action, VLA²'s mask overlay): the target is overlaid with a colour
  from its mask, so an unfamiliar-looking object looks like one the policy knows;
- `rewrite` (SOMA's Prompt-Refiner, VLA²'s vocabulary replacement): the instruction is replaced
  by a template and/or words unseen in training are replaced by known ones (whole words,
  case-insensitive, longest first).

Masks come from a `tether.models.perception.Perception` (the simulator's own segmentation by
default), rendered at the policy's camera size and flipped into its image convention.
Perception-first ordering is the tree author's: filters run outermost decorator first.

Tick contract (every intervention): at `setup` it registers its filter on the first `vla` leaf
below it (a TetherError if there is none); each tick it ticks its child and returns the child's
status. It never commands; the filter runs only when the leaf requests a chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import py_trees

from tether.behaviours.vla import VLA
from tether.blackboard.references import deref, render
from tether.errors import TetherError
from tether.models.observation import Observation, libero_image
from tether.models.perception import PRIVILEGED, Perception
from tether.scenes.robot import Robot

Status = py_trees.common.Status


def erase(image: np.ndarray, mask: np.ndarray, *, radius: int = 3, grow: int = 2) -> np.ndarray:
    """`image` with the pixels under `mask` (grown by `grow` px) inpainted (Telea)."""
    import cv2

    m = mask.astype(np.uint8)
    if grow:
        m = cv2.dilate(m, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
    return cv2.inpaint(np.ascontiguousarray(image), m, radius, cv2.INPAINT_TELEA)


def paint(image: np.ndarray, mask: np.ndarray, colour: Sequence[int], alpha: float) -> np.ndarray:
    """`image` with `colour` blended in at opacity `alpha` under `mask`."""
    out = image.astype(np.float32)
    out[mask] = (1 - alpha) * out[mask] + alpha * np.asarray(colour, np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def rewrite(text: str, replace: dict[str, str]) -> str:
    """`text` with each key of `replace` (a whole word or phrase, any case) replaced in one pass,
    longest keys first (a replacement is never replaced again)."""
    if not replace:
        return text
    keys = sorted(replace, key=len, reverse=True)
    lower = {k.lower(): v for k, v in replace.items()}
    pattern = r"(?<!\w)(" + "|".join(re.escape(k) for k in keys) + r")(?!\w)"
    return re.sub(pattern, lambda m: lower[m.group(1).lower()], text, flags=re.I)


class Intervention(py_trees.decorators.Decorator):
    """Base: registers `apply` on the `vla` leaf below; passes the child's status through."""

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour):
        super().__init__(name=name, child=child)

    def setup(self, **kwargs: Any) -> None:
        leaf = next((n for n in self.decorated.iterate() if isinstance(n, VLA)), None)
        if leaf is None:
            raise TetherError(f"{self.name}: an input intervention must have a `vla` leaf below it")
        leaf.add_filter(self.apply)

    def update(self) -> Status:
        return self.decorated.status

    def apply(self, obs: Observation, robot: Robot) -> Observation:
        raise NotImplementedError


class ImageIntervention(Intervention):
    """An intervention that edits each image through a mask of some entities."""

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, *, objects: list,
                 perception: Perception | None = None):
        super().__init__(name, child)
        self.objects, self.perception = objects, perception or PRIVILEGED

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        leaf = next(n for n in self.decorated.iterate() if isinstance(n, VLA))
        self.leaf = leaf

    def mask(self, robot: Robot, key: str) -> np.ndarray | None:
        spec = next(s for s in self.leaf.policy.cameras if s.key == key)
        names = [robot.resolve(str(deref(o))) for o in self.objects]
        masks = self.perception.masks(robot, spec.camera, spec.size, names)
        if not masks:
            return None
        union = np.logical_or.reduce(list(masks.values()))
        return libero_image(union)  # the same flip as the policy's images

    def apply(self, obs: Observation, robot: Robot) -> Observation:
        for key, image in list(obs.images.items()):
            m = self.mask(robot, key)
            if m is not None and m.any():
                obs.images[key] = self.edit(image, m)
        return obs

    def edit(self, image: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class Erase(ImageIntervention):
    """Inpaint the `objects` (distractors) away in every policy image."""

    def edit(self, image: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return erase(image, mask)


class Paint(ImageIntervention):
    """Overlay `colour` (RGB) at opacity `alpha` on the `objects` (the target)."""

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, *, objects: list,
                 colour: Sequence[int], alpha: float, perception: Perception | None = None):
        super().__init__(name, child, objects=objects, perception=perception)
        self.colour, self.alpha = tuple(colour), alpha

    def edit(self, image: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return paint(image, mask, self.colour, self.alpha)


class Rewrite(Intervention):
    """Replace the instruction by `template` (if given; `${/key}` filled in), then replace words
    by the `replace` map."""

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, *,
                 template: str | None, replace: dict[str, str]):
        super().__init__(name, child)
        self.template, self.replace = template, replace

    def apply(self, obs: Observation, robot: Robot) -> Observation:
        text = render(self.template) if self.template else obs.instruction
        obs.instruction = rewrite(text, self.replace)
        return obs
