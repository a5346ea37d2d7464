"""Open-vocabulary perception from local checkpoints: GroundingDINO boxes, SAM2 masks.

    detector = Detector(dir)                     # GroundingDinoForObjectDetection + its processor
    boxes = detector.detect(frame, {"akita_black_bowl_1": "black bowl"}, threshold=0.35)
    # {"akita_black_bowl_1": array([x0, y0, x1, y1])} in the frame's pixels
    masks = Segmenter(dir).segment(frame, boxes, size=(128, 128))   # Sam2Model + Sam2Processor
    # {"akita_black_bowl_1": (128, 128) bool}

The detector is prompted once per frame with every phrase ("black bowl. plate."); a query's score
for a phrase is its best token probability over that phrase's tokens, and each query goes to the
phrase it scores highest. Entities sharing a phrase take that phrase's boxes best first, after
non-maximum suppression. `DetectSegment` puts both behind the `Perception` protocol: it renders
the camera upright at the spec's `frame` size and returns masks at the requested size.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.models.perception.base import MODELS, ModelPerceptionSpec
from tether.scenes.robot import Robot

NMS_IOU = 0.5


@functools.lru_cache(maxsize=8)
def load(model_class: str, processor_class: str, path: Path, device: str) -> tuple[Any, Any]:
    """A transformers model (eval mode, on `device`) and its processor from a local directory;
    loaded once per (class, directory, device)."""
    import transformers

    model = getattr(transformers, model_class).from_pretrained(path, local_files_only=True)
    processor = getattr(transformers, processor_class).from_pretrained(path,
                                                                       local_files_only=True)
    return model.to(device).eval(), processor


def frame_of(robot: Robot, camera: str, size: tuple[int, int]) -> np.ndarray:
    """The camera's upright RGB frame at `size`; a TetherError when the scene renders none."""
    frame = robot.render(camera, size)
    if frame is None:
        raise TetherError(f"model perception needs camera images; {type(robot).__name__} renders "
                          f"none for '{camera}'")
    return np.ascontiguousarray(frame)


def to_pixels(boxes: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Normalised (cx, cy, w, h) boxes -> pixel (x0, y0, x1, y1) in an image of `size` (h, w),
    clipped to the image."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    h, w = size
    xyxy = np.stack([b[:, 0] - b[:, 2] / 2, b[:, 1] - b[:, 3] / 2,
                     b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2], axis=1)
    return np.clip(xyxy * [w, h, w, h], 0, [w, h, w, h])


def prompt(phrases: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """GroundingDINO's text for distinct `phrases` ("black bowl. plate.") and each phrase's
    character span in it."""
    text, spans = "", []
    for p in phrases:
        p = " ".join(p.lower().split())
        spans.append((len(text), len(text) + len(p)))
        text += p + ". "
    return text.strip(), spans


class Detector:
    """GroundingDINO from a local directory: a box per entity from its text phrase."""

    def __init__(self, path: Path, device: str = "cpu"):
        self.path, self.device = path, device

    def detect(self, frame: np.ndarray, phrases: Mapping[str, str],
               threshold: float) -> dict[str, np.ndarray]:
        """Pixel (x0, y0, x1, y1) boxes in `frame` for the entities found, keyed like `phrases`
        (entity -> phrase)."""
        import torch
        from torchvision.ops import nms

        if not phrases:
            return {}
        model, processor = load("GroundingDinoForObjectDetection", "AutoProcessor", self.path,
                                self.device)
        distinct = list(dict.fromkeys(phrases.values()))
        text, spans = prompt(distinct)
        inputs = processor(images=frame, text=text, return_tensors="pt").to(self.device)
        offsets = processor.tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
        with torch.no_grad():
            out = model(**inputs)
        probs = out.logits[0].sigmoid()  # (queries, text tokens)
        scores = torch.stack([probs[:, [t for t, (a, b) in enumerate(offsets)
                                        if b > a and a >= s and b <= e]].max(dim=1).values
                              for s, e in spans], dim=1)  # (queries, phrases)
        best, which = scores.max(dim=1)
        boxes = torch.as_tensor(to_pixels(out.pred_boxes[0].float().cpu().numpy(),
                                          frame.shape[:2]), dtype=torch.float32)
        found: dict[str, np.ndarray] = {}
        for i, phrase in enumerate(distinct):
            keep = ((which == i) & (best > threshold)).nonzero().flatten().cpu()
            if not len(keep):
                continue
            kept = keep[nms(boxes[keep], best[keep].float().cpu(), NMS_IOU)]  # best first
            entities = [e for e, p in phrases.items() if p == phrase]
            for entity, q in zip(entities, kept.tolist(), strict=False):  # extra boxes unused
                found[entity] = boxes[q].numpy().astype(np.float64)
        return found


class Segmenter:
    """SAM2 from a local directory: a mask per box."""

    def __init__(self, path: Path, device: str = "cpu"):
        self.path, self.device = path, device

    def segment(self, frame: np.ndarray, boxes: Mapping[str, np.ndarray],
                size: tuple[int, int]) -> dict[str, np.ndarray]:
        """Boolean masks at `size` (h, w) of the objects in pixel `boxes` of `frame`; empty masks
        are left out."""
        import torch

        if not boxes:
            return {}
        model, processor = load("Sam2Model", "Sam2Processor", self.path, self.device)
        names = list(boxes)
        inputs = processor(images=frame, input_boxes=[[list(map(float, boxes[n]))
                                                        for n in names]],
                           return_tensors="pt").to(self.device)
        with torch.no_grad():
            out = model(**inputs, multimask_output=False)
        masks = processor.post_process_masks(out.pred_masks.cpu(), [list(size)])[0][:, 0]
        return {n: m for n, m in zip(names, masks.numpy().astype(bool), strict=True)
                if m.any()}


@MODELS.register("segmenter")
class DetectSegment:
    """The `Perception` of detection then segmentation on every call (no memory across frames)."""

    def __init__(self, spec: ModelPerceptionSpec):
        self.spec = spec
        self.detector = Detector(spec.detector, spec.device)
        self.segmenter = Segmenter(spec.segmenter, spec.device)

    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        frame = frame_of(robot, camera, self.spec.frame)
        boxes = self.detector.detect(frame, {n: self.spec.phrase(n) for n in names},
                                     self.spec.box_threshold)
        return self.segmenter.segment(frame, boxes, tuple(size))
