"""`LerobotPolicy`: a lerobot checkpoint saved with `save_pretrained`, as a `Policy`.

The checkpoint directory holds `config.json` (its `type` picks the policy class: ACT, Diffusion,
SmolVLA, pi0, ...), the weights, and the pre/post-processor pipelines lerobot saved with it. The
adapter maps the robot to the checkpoint's input features and back:
- each image feature `observation.images.KEY` is rendered from the robot camera KEY stands for
  (LIBERO's names: `image` is the agent view, `image2` the wrist; also `agentview`, `wrist`, ...)
  at the feature's size, in LIBERO's image convention (`tether.models.observation`);
- `observation.state` is the 8-D LIBERO state; the instruction goes in as `task`, and, when
  the checkpoint takes `observation.environment_state` and names a `Language` (its
  `language.json`, written by `tether train`), as that feature: the instruction's embedding
  (`tether.models.language`), as it was recorded in the training data;
- normalisation is the checkpoint's own (its saved pre/post-processors, loaded with lerobot's
  `make_pre_post_processors(..., pretrained_path=...)`);
- `infer` returns the first `n_action_steps` (default: the checkpoint's) rows of the
  un-normalised chunk from `predict_action_chunk`; with `temporal_ensemble` (ACT only: ACT's
  temporal ensembling, lerobot's `temporal_ensemble_coeff`, 0.01 in the ACT paper) it returns
  one action, the weighted mean of what every chunk predicted so far predicts for this step, so
  the policy is queried at every step.

    policy = LerobotPolicy(Path("models/checkpoints/grasp_act"))
    chunk = policy.infer(observe(robot, policy.cameras, "pick up the black bowl"))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.models.language import FEATURE as LANGUAGE_FEATURE
from tether.models.language import Language
from tether.models.observation import CameraSpec, Observation, drafted
from tether.models.policy import Policy, PolicyConfig
from tether.scenes.robot import Robot

IMAGE_PREFIX = "observation.images."
STATE = "observation.state"
# lerobot image keys and the LIBERO cameras they name.
CAMERA_OF_KEY = {
    "image": "agentview", "agentview": "agentview", "agentview_image": "agentview",
    "front": "agentview",
    "image2": "robot0_eye_in_hand", "wrist": "robot0_eye_in_hand",
    "wrist_image": "robot0_eye_in_hand", "eye_in_hand": "robot0_eye_in_hand",
    "robot0_eye_in_hand": "robot0_eye_in_hand",
}


@PolicyConfig.register("lerobot")
@dataclass
class LerobotConfig(PolicyConfig):
    """A lerobot checkpoint directory (config.json, model.safetensors, processor files)."""

    path: str
    n_action_steps: int | None = None  # actions used per chunk; default: the checkpoint's own
    device: str | None = None  # cpu, cuda, cuda:N, mps; None: the run's --device, else cpu
    temporal_ensemble: float | None = None  # ACT's temporal ensembling coefficient; None: off

    def build(self, robot: Robot) -> Policy:
        return LerobotPolicy(Path(self.path), n_action_steps=self.n_action_steps,
                             device=self.device or "cpu",
                             temporal_ensemble=self.temporal_ensemble)

    def on(self, device: str) -> LerobotConfig:
        return self if self.device else replace(self, device=device)

    @property
    def gpu(self) -> bool:
        return (self.device or "").startswith("cuda")


class LerobotPolicy:
    """A lerobot policy loaded from a local directory; `latencies` holds each `infer`'s seconds."""

    def __init__(self, path: Path, *, n_action_steps: int | None = None, device: str = "cpu",
                 temporal_ensemble: float | None = None):
        import torch
        from lerobot.configs.policies import PreTrainedConfig
        from lerobot.policies.factory import get_policy_class, make_pre_post_processors

        if not (path / "config.json").exists():
            raise TetherError(f"{path} is not a lerobot checkpoint (no config.json); train one "
                              "with `tether train` or give a `save_pretrained` directory")
        available = {"cuda": torch.cuda.is_available,
                     "mps": torch.backends.mps.is_available}.get(device.split(":")[0])
        if available is not None and not available():
            raise TetherError(f"{path}: device {device} is not available on this machine (torch "
                              "finds none); give --device cpu")
        torch.set_num_threads(min(torch.get_num_threads(), 2))
        self.torch = torch
        cfg = PreTrainedConfig.from_pretrained(str(path))
        cfg.device = device
        self.ensembling = temporal_ensemble is not None
        if self.ensembling:
            coeff = temporal_ensemble
            if cfg.type != "act" or isinstance(coeff, bool) \
                    or not isinstance(coeff, (int, float)) or not np.isfinite(coeff):
                raise TetherError(f"{path}: temporal_ensemble is ACT's temporal ensembling and "
                                  f"takes a finite coefficient (e.g. 0.01); got "
                                  f"{coeff!r} for a '{cfg.type}' policy")
            cfg.temporal_ensemble_coeff, cfg.n_action_steps = float(coeff), 1
            n_action_steps = 1
        self.model = get_policy_class(cfg.type).from_pretrained(str(path), config=cfg)
        self.model.eval()
        self.pre, self.post = make_pre_post_processors(
            cfg, pretrained_path=str(path),
            preprocessor_overrides={"device_processor": {"device": device}})
        self.n_action_steps = n_action_steps or getattr(cfg, "n_action_steps", None)
        draft = drafted(path)  # trained on drafts: fed drafts
        self.cameras = tuple(self._camera(key, feature.shape, draft)
                             for key, feature in cfg.input_features.items()
                             if key.startswith(IMAGE_PREFIX))
        state = cfg.input_features.get(STATE)
        if state is not None and tuple(state.shape) != (8,):
            raise TetherError(f"{path}: observation.state has shape {tuple(state.shape)}; tether "
                              "feeds LIBERO's 8-D state (eef pos, axis-angle, 2 fingers)")
        self.uses_state = state is not None
        self.language = Language.load(path)
        if LANGUAGE_FEATURE in cfg.input_features:
            if self.language is None:
                raise TetherError(f"{path}: the policy takes {LANGUAGE_FEATURE} but the "
                                  "checkpoint has no language.json naming the embedder that "
                                  "made it; train it with `tether train` on a dataset from "
                                  "`tether collect --tree`")
            want = tuple(cfg.input_features[LANGUAGE_FEATURE].shape)
            if want != (self.language.dim,):
                raise TetherError(f"{path}: {LANGUAGE_FEATURE} has shape {want}, but the "
                                  f"{self.language.embedder} embedder gives "
                                  f"({self.language.dim},)")
        elif self.language is not None:
            raise TetherError(f"{path}: language.json names an embedder but the policy takes "
                              f"no {LANGUAGE_FEATURE}")
        self.path = path
        self.latencies: list[float] = []

    @staticmethod
    def _camera(key: str, shape: tuple[int, ...], draft: bool) -> CameraSpec:
        name = key[len(IMAGE_PREFIX):]
        if name not in CAMERA_OF_KEY:
            raise TetherError(f"image feature '{key}': no robot camera is known by '{name}'"
                              + did_you_mean(name, CAMERA_OF_KEY)
                              + f"; known: {', '.join(CAMERA_OF_KEY)}")
        return CameraSpec(CAMERA_OF_KEY[name], (int(shape[-2]), int(shape[-1])), name, draft)

    def reset(self) -> None:
        self.model.reset()

    def infer(self, obs: Observation) -> np.ndarray:
        torch = self.torch
        start = time.perf_counter()
        batch: dict = {"task": obs.instruction}
        for spec in self.cameras:
            image = torch.from_numpy(obs.images[spec.key]).permute(2, 0, 1).float() / 255.0
            batch[IMAGE_PREFIX + spec.key] = image
        if self.uses_state:
            batch[STATE] = torch.from_numpy(np.asarray(obs.state, dtype=np.float32))
        if self.language is not None:
            batch[LANGUAGE_FEATURE] = torch.from_numpy(self.language.vector(obs.instruction))
        with torch.inference_mode():
            batch = self.pre(batch)
            chunk = self.post(self.model.select_action(batch) if self.ensembling
                              else self.model.predict_action_chunk(batch))
        actions = chunk.reshape(-1, chunk.shape[-1]).cpu().numpy().astype(float)
        self.latencies.append(time.perf_counter() - start)
        return actions[:self.n_action_steps] if self.n_action_steps else actions
