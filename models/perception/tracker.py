"""Tracking the target across an episode (VLA², SOMA): SAM2's video model, streamed a frame at a
time from a local checkpoint.

    track = Sam2Tracker(dir)                                  # Sam2VideoModel + Sam2VideoProcessor
    track.start(frame0, size, boxes={"akita_black_bowl_1": [x0, y0, x1, y1]})   # or masks={...}
    track.step(frame1, size)                                  # {"akita_black_bowl_1": bool mask}

`Tracker` is the `Perception`: its first call for a (scene, camera, names) detects the entities
with GroundingDINO and seeds the tracker with their boxes; later calls render the next frame and
propagate. A second call in the same control step reuses that step's result; a step count lower
than the last one (a new episode) starts over. Entities not found on the first frame are not
tracked; an entity the tracker scores as absent is left out of that frame's masks. Frames and
memories older than SAM2's memory window are dropped, so a long episode stays small.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.models.perception.base import MODELS, ModelPerceptionSpec
from tether.models.perception.open_vocab import Detector, frame_of, load
from tether.scenes.robot import Robot


class Sam2Tracker:
    """One streamed video: seeded on its first frame, propagated on each later one."""

    def __init__(self, path: Path, device: str = "cpu"):
        self.path, self.device = path, device
        self.names: list[str] = []
        self.frame_idx = -1
        self._session: Any = None
        self._last: Any = None

    @property
    def started(self) -> bool:
        return self._session is not None

    def start(self, frame: np.ndarray, size: tuple[int, int], *,
              boxes: Mapping[str, Sequence[float]] | None = None,
              masks: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Begin a new video at `frame` with the objects given by pixel `boxes` or by boolean
        `masks` of the frame; their masks at `size`."""
        import torch

        if (boxes is None) == (masks is None) or not (boxes or masks):
            raise TetherError("the tracker starts from boxes or masks of at least one object")
        model, processor = load("Sam2VideoModel", "Sam2VideoProcessor", self.path, self.device)
        self._session = processor.init_video_session(inference_device=self.device,
                                                     dtype=torch.float32)
        self.frame_idx = -1
        seeds = boxes if boxes is not None else masks
        self.names = list(seeds)
        ids = list(range(1, len(self.names) + 1))
        inputs = processor(images=frame, return_tensors="pt")
        if boxes is not None:
            processor.add_inputs_to_inference_session(
                inference_session=self._session, frame_idx=0, obj_ids=ids,
                input_boxes=[[list(map(float, boxes[n])) for n in self.names]],
                original_size=inputs.original_sizes[0])
        else:
            self._session.video_height, self._session.video_width = frame.shape[:2]
            processor.add_inputs_to_inference_session(
                inference_session=self._session, frame_idx=0, obj_ids=ids,
                input_masks=[np.asarray(masks[n], bool) for n in self.names])
        return self._advance(inputs.pixel_values[0], size)

    def step(self, frame: np.ndarray, size: tuple[int, int]) -> dict[str, np.ndarray]:
        """Propagate to the next `frame`; masks at `size` of the objects still present."""
        if not self.started:
            raise TetherError("the tracker has not been started")
        _, processor = load("Sam2VideoModel", "Sam2VideoProcessor", self.path, self.device)
        return self._advance(processor(images=frame, return_tensors="pt").pixel_values[0], size)

    def last(self, size: tuple[int, int]) -> dict[str, np.ndarray]:
        """The latest frame's masks again, at `size`."""
        return self._masks(size)

    def _advance(self, pixels: Any, size: tuple[int, int]) -> dict[str, np.ndarray]:
        import torch

        model, _ = load("Sam2VideoModel", "Sam2VideoProcessor", self.path, self.device)
        self.frame_idx += 1
        with torch.no_grad():
            self._last = model(inference_session=self._session, frame=pixels,
                               frame_idx=self.frame_idx)
        self._forget(model.config)
        return self._masks(size)

    def _masks(self, size: tuple[int, int]) -> dict[str, np.ndarray]:
        _, processor = load("Sam2VideoModel", "Sam2VideoProcessor", self.path, self.device)
        out = self._last
        masks = processor.post_process_masks([out.pred_masks.float().cpu()], [list(size)])[0]
        present = (out.object_score_logits.reshape(-1) > 0).cpu().tolist()
        by_id = {i: n for i, n in enumerate(self.names, start=1)}
        rows = zip(out.object_ids, masks[:, 0].numpy().astype(bool), present, strict=True)
        return {by_id[i]: m for i, m, p in rows if p and m.any()}

    def _forget(self, config: Any) -> None:
        """Drop frames and per-frame memories SAM2 no longer reads (its memory window)."""
        session, now = self._session, self.frame_idx
        for k in [k for k in session.processed_frames if k < now]:
            del session.processed_frames[k]
        window = max(config.num_maskmem, config.max_object_pointers_in_encoder)
        for outputs in session.output_dict_per_obj.values():
            old = outputs["non_cond_frame_outputs"]
            for k in [k for k in old if k < now - window]:
                del old[k]
        for tracked in session.frames_tracked_per_obj.values():
            for k in [k for k in tracked if k < now - window]:
                del tracked[k]


@dataclass
class _Video:
    tracker: Sam2Tracker
    step: int


@MODELS.register("tracker")
class Tracker:
    """The `Perception` that detects once, then tracks (see the module docstring)."""

    def __init__(self, spec: ModelPerceptionSpec):
        self.spec = spec
        self.detector = Detector(spec.detector, spec.device)
        self._videos: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def masks(self, robot: Robot, camera: str, size: tuple[int, int],
              names: Sequence[str]) -> dict[str, np.ndarray]:
        size = tuple(size)
        videos = self._videos.setdefault(robot, {})
        key = (camera, tuple(names))
        video = videos.get(key)
        if video is not None and video.step == robot.steps:
            return video.tracker.last(size)
        if video is not None and video.step < robot.steps:
            video.step = robot.steps
            return video.tracker.step(frame_of(robot, camera, self.spec.frame), size)
        frame = frame_of(robot, camera, self.spec.frame)  # first call, or a new episode
        boxes = self.detector.detect(frame, {n: self.spec.phrase(n) for n in names},
                                     self.spec.box_threshold)
        if not boxes:
            videos.pop(key, None)
            return {}
        tracker = Sam2Tracker(self.spec.tracker, self.spec.device)
        videos[key] = _Video(tracker, robot.steps)
        return tracker.start(frame, size, boxes=boxes)
