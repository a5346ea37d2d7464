"""`tether train`: a small ACT trained from scratch on a LeRobotDataset, on the CPU.

lerobot's own pieces do the work: the dataset (`LeRobotDataset` with action chunks through
`delta_timestamps`), `ACTConfig`/`ACTPolicy` with `pretrained_backbone_weights=None` (nothing is
downloaded; the ResNet-18 learns from scratch, at the transformer's learning rate), the
normalising pre/post-processors built from the dataset's statistics, and `save_pretrained` for the
policy and both processors, so `LerobotPolicy` (and any lerobot tool) loads the result. Weights are
stored in float16 (the ResNet-18 alone is 45 MB in float32); lerobot loads them into its float32
model. A model card (README.md) records the data, the command, the steps, the loss curve (drawn in
loss.png) and the training time; `benchmarks/vla_grasp.py` adds the measured success.

Batches come from a `tether.models.frame_cache.FrameCache`: the dataset's frames decoded once
into memory, then indexed (the same samples `LeRobotDataset.__getitem__` gives, without its
per-frame Arrow queries and PNG decoding); a dataset with videos is read through lerobot's
DataLoader instead.

Training resumes (the loop is `tether.models.training_loop.TrainingLoop`). Every `save_every` steps
(and when it ends or is interrupted) the checkpoint, its card and `training_state.pt` are written
(atomically: a kill never leaves half a file): the float32 weights, the optimiser's state, the
step, the loss curve, the time spent and torch's RNG. Batches come in a fixed order (epoch `e` is
the permutation seeded `seed + e`), so `resume=True` continues from the saved step with the
batches, dropout draws and loss curve the run would have had without the interruption; the dataset
must be the one training started on (same frame count). `training_state.pt` is for resuming only: a
committed checkpoint leaves it out.

A dataset with `observation.environment_state` and a `meta/language.json` (what `tether
collect --tree` records) trains a language-conditioned policy: the `Language` is copied into
the checkpoint, and `LerobotPolicy` embeds the instruction the same way at run time.

    report = train(TrainConfig(dataset=Path("data/grasp"), out=Path("models/checkpoints/x")))
    report = train(TrainConfig(..., steps=4000, resume=True))   # from the last save
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.models.backbone_features import BackboneFeatures, load_backbone
from tether.models.frame_cache import FrameCache
from tether.models.observation import drafted, save_drafted
from tether.models.training_loop import LossCurve, TrainingLoop, atomic_save, loss_card_lines

CARD = "README.md"
TRAINING = "training.json"
STATE = "training_state.pt"


class BatchOrder:
    """Index batches of a dataset of `n` frames from optimisation step `start` on: epoch `e` is
    the permutation of torch's generator seeded `seed + e`, cut into full batches."""

    def __init__(self, n: int, batch_size: int, seed: int, start: int = 0) -> None:
        self.n, self.batch_size, self.seed, self.start = n, batch_size, seed, start
        self.per_epoch = n // batch_size

    def __iter__(self):
        import torch

        epoch, first = divmod(self.start, self.per_epoch)
        while True:
            order = torch.randperm(self.n, generator=torch.Generator().manual_seed(
                self.seed + epoch)).tolist()
            for i in range(first, self.per_epoch):
                yield order[i * self.batch_size:(i + 1) * self.batch_size]
            epoch, first = epoch + 1, 0


@dataclass
class TrainConfig:
    dataset: Path
    out: Path
    steps: int = 2000
    batch_size: int = 32
    lr: float = 1e-4
    chunk_size: int = 10
    n_action_steps: int = 10  # actions run per call when deployed (<= chunk_size); not trained
    dim_model: int = 128
    dim_feedforward: int = 512
    n_encoder_layers: int = 2
    use_vae: bool = False  # the scripted expert's demonstrations are unimodal
    seed: int = 0
    threads: int = 2
    save_every: int = 100  # steps between saves
    resume: bool = False  # continue from `out`'s training_state.pt
    backbone: Path | None = None  # a checkpoint whose vision backbone is taken, frozen
    command: str = ""  # how it was invoked, for the model card

    def __post_init__(self) -> None:
        self.dataset, self.out = Path(self.dataset), Path(self.out)
        self.backbone = None if self.backbone is None else Path(self.backbone)
        if min(self.steps, self.batch_size, self.chunk_size, self.n_action_steps,
               self.save_every, self.threads) < 1:
            raise TetherError("steps, batch size, chunk size, n_action_steps, save_every and "
                              "threads are at least 1")
        if self.n_action_steps > self.chunk_size:
            raise TetherError(f"n_action_steps ({self.n_action_steps}) cannot exceed the chunk "
                              f"size ({self.chunk_size}): a call predicts only that many")
        if not self.lr > 0:
            raise TetherError(f"the learning rate must be positive, not {self.lr}")

    def recipe(self) -> dict:
        """What must not change when a run resumes (`steps` may grow, `threads` and the
        deploy-time `n_action_steps` change)."""
        return {"dataset": str(self.dataset.resolve()), "batch_size": self.batch_size,
                "lr": self.lr, "chunk_size": self.chunk_size, "dim_model": self.dim_model,
                "dim_feedforward": self.dim_feedforward,
                "n_encoder_layers": self.n_encoder_layers, "use_vae": self.use_vae,
                "seed": self.seed,
                "backbone": None if self.backbone is None else str(self.backbone.resolve())}


@dataclass
class TrainReport:
    out: str
    steps: int
    seconds: float
    episodes: int
    frames: int
    parameters: int
    size_mb: float
    loss: list[tuple[int, float]] = field(default_factory=list)  # (step, mean loss since last)
    resumed_from: int = 0  # the step this call started at


def act_config(config: TrainConfig, features: dict):
    """The small ACT: lerobot's ACTConfig with no pretrained backbone."""
    from lerobot.configs.types import FeatureType
    from lerobot.policies.act.configuration_act import ACTConfig

    return ACTConfig(
        input_features={k: f for k, f in features.items() if f.type is not FeatureType.ACTION},
        output_features={k: f for k, f in features.items() if f.type is FeatureType.ACTION},
        chunk_size=config.chunk_size, n_action_steps=config.n_action_steps,
        pretrained_backbone_weights=None, dim_model=config.dim_model,
        dim_feedforward=config.dim_feedforward, n_encoder_layers=config.n_encoder_layers,
        n_decoder_layers=1, use_vae=config.use_vae, n_vae_encoder_layers=2, optimizer_lr=config.lr,
        optimizer_lr_backbone=config.lr, device="cpu", push_to_hub=False,
    )


def train(config: TrainConfig, progress: Callable[[int, float], None] | None = None
          ) -> TrainReport:
    """Train (or, with `config.resume`, continue) and save the checkpoint, its model card and
    the training state in `config.out`; `progress(step, loss)` is called after every
    optimisation step."""
    fps = check_dataset(config.dataset)["fps"]
    state_path = config.out / STATE
    if config.resume and not state_path.is_file():
        raise TetherError(f"{config.out} has no {STATE} to resume from; train without --resume")
    if not config.resume and state_path.is_file():
        raise TetherError(f"{config.out} holds a training run; give --resume to continue it or "
                          "another --out")
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from lerobot.policies.act.modeling_act import ACTPolicy
    from lerobot.policies.factory import make_pre_post_processors
    from lerobot.utils.feature_utils import dataset_to_policy_features

    from tether.models.language import FEATURE as LANGUAGE_FEATURE
    from tether.models.language import Language

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    dataset = LeRobotDataset(f"tether/{config.dataset.name}", root=config.dataset,
                             delta_timestamps={"action": [i / fps
                                                          for i in range(config.chunk_size)]})
    meta = dataset.meta
    language = Language.load(config.dataset / "meta")
    if (LANGUAGE_FEATURE in meta.features) != (language is not None):
        raise TetherError(f"{config.dataset}: {LANGUAGE_FEATURE} and meta/language.json go "
                          "together (the file names the embedder that made the feature)")
    cfg = act_config(config, dataset_to_policy_features(meta.features))
    if len(dataset) < config.batch_size:  # full batches only: the loop would never step
        raise TetherError(f"{config.dataset} has {len(dataset)} frames, fewer than one batch "
                          f"({config.batch_size}); lower --batch-size or collect more episodes")
    policy = ACTPolicy(cfg)
    if config.backbone is not None:
        if meta.video_keys:
            raise TetherError(f"--backbone: {config.dataset} stores its images as videos; the "
                              "features are computed from frames held in memory")
        load_backbone(policy, config.backbone)
    preprocessor, postprocessor = make_pre_post_processors(cfg, dataset_stats=meta.stats)
    optimiser = torch.optim.AdamW(policy.get_optim_params(), lr=config.lr, weight_decay=1e-4)
    loop = TrainingLoop(policy, optimiser, LossCurve(config.steps, 20), steps=config.steps,
                        save_every=config.save_every, clip=10.0, progress=progress)
    if config.resume:
        state = torch.load(state_path, map_location="cpu", weights_only=False)
        changed = [k for k, v in config.recipe().items() if state["recipe"].get(k) != v]
        if changed:
            was = ", ".join(str(state["recipe"].get(k)) for k in changed)
            raise TetherError(f"{state_path}: the run was started with other "
                              f"{', '.join(changed)} ({was}); resume with the same options or "
                              "train afresh into another --out")
        if state["frames"] != len(dataset):
            raise TetherError(f"{config.dataset} has {len(dataset)} frames, but the run in "
                              f"{config.out} started on {state['frames']}; train afresh into "
                              "another --out")
        loop.restore(state)
        loop.curve.restore(state["loss"])
    order = BatchOrder(len(dataset), config.batch_size, config.seed, loop.step)
    if meta.video_keys:  # lerobot decodes video frames per sample
        batches = iter(torch.utils.data.DataLoader(dataset, batch_sampler=order, num_workers=0))

        def loss() -> Any:
            return policy.forward(preprocessor(next(batches)))[0]
    else:  # decoded once, then batches by indexing: the same samples, a fifth of a step less
        picks = iter(order)

        @functools.cache  # at the first step: a resumed run with no step left decodes nothing
        def frames() -> tuple[FrameCache, BackboneFeatures | None]:
            cache = FrameCache(dataset)
            return cache, None if config.backbone is None else \
                BackboneFeatures.of(policy, preprocessor, cache)

        def loss() -> Any:
            cache, features = frames()
            indices = next(picks)
            batch = preprocessor(cache.batch(indices))
            if features is None:
                return policy.forward(batch)[0]
            with features.served(policy):
                return policy.forward(features.batch(batch, indices))[0]
    if config.resume:  # after the DataLoader's iterator, which draws from torch's RNG
        torch.set_rng_state(state["rng"])
    config.out.mkdir(parents=True, exist_ok=True)
    report: TrainReport | None = None

    def save() -> None:
        nonlocal report
        saved = loop.state()
        atomic_save({"recipe": config.recipe(), "frames": len(dataset), **saved,
                            "loss": loop.curve.state(), "rng": torch.get_rng_state()},
                    state_path)
        half = {k: v.half() if v.is_floating_point() else v
                for k, v in policy.state_dict().items()}
        policy.save_pretrained(config.out, state_dict=half)
        preprocessor.save_pretrained(config.out)
        postprocessor.save_pretrained(config.out)
        if language is not None:
            language.save(config.out)
        save_drafted(config.out, drafted(config.dataset / "meta"))
        size = sum(p.stat().st_size for p in config.out.iterdir()
                   if p.is_file() and p.name != STATE) / 1e6
        report = TrainReport(out=str(config.out), steps=loop.step,
                             seconds=round(saved["seconds"], 1),
                             episodes=meta.total_episodes, frames=meta.total_frames,
                             parameters=sum(p.numel() for p in policy.parameters()),
                             size_mb=round(size, 2), loss=list(loop.curve.points),
                             resumed_from=loop.resumed_from)
        (config.out / TRAINING).write_text(json.dumps(
            {"config": {k: str(v) for k, v in asdict(config).items()}, "report": asdict(report),
             "dataset": dataset_summary(config.dataset)}, indent=2) + "\n", encoding="utf-8")
        write_card(config.out)

    loop.run(loss, save)
    assert report is not None  # the loop saves when it ends
    return report


def check_dataset(root: Path) -> dict:
    """`root`'s meta/info.json, or a clear error unless `root` is a local LeRobotDataset with at
    least one episode (lerobot itself would try to download anything missing from the hub)."""
    path = root / "meta" / "info.json"
    if not path.is_file():
        raise TetherError(f"{root} is not a LeRobotDataset (no meta/info.json); "
                          "record one with `tether collect`")
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        episodes, _ = info["total_episodes"], info["fps"]
    except (ValueError, KeyError) as exc:
        raise TetherError(f"{path} is not LeRobotDataset metadata ({exc})") from None
    if not episodes:
        raise TetherError(f"{root} has no episodes; record some with `tether collect`")
    return info


def dataset_summary(root: Path) -> dict:
    """Tasks, episode and frame counts, features and fps of a LeRobotDataset, from its meta."""
    info = json.loads((root / "meta" / "info.json").read_text(encoding="utf-8"))
    tasks_file = root / "meta" / "tasks.parquet"
    tasks: list[str] = []
    if tasks_file.exists():
        import pandas as pd

        tasks = [str(t) for t in pd.read_parquet(tasks_file).index]
    return {"root": str(root), "episodes": info["total_episodes"], "frames": info["total_frames"],
            "fps": info["fps"], "features": {k: v["shape"] for k, v in info["features"].items()
                                             if k.startswith(("observation", "action"))},
            "tasks": tasks, "collect": collect_meta(root), "demos": demos_meta(root)}


def collect_meta(root: Path) -> dict:
    """What `tether collect` recorded about the dataset (meta/tether_collect.json), if anything."""
    path = root / "meta" / "tether_collect.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def demos_meta(root: Path) -> dict:
    """What `tether collect --tree` recorded (its recipe, and per task the init states attempted
    and kept, from meta/tether_demos.json and .jsonl), if anything."""
    recipe, ledger = root / "meta" / "tether_demos.json", root / "meta" / "tether_demos.jsonl"
    if not recipe.exists():
        return {}
    tasks: dict[str, dict] = {}
    for line in ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else ():
        attempt = json.loads(line)
        row = tasks.setdefault(attempt["task"], {"attempted": [], "kept": 0, "seconds": 0.0})
        row["attempted"].append(attempt["init_state"])
        row["kept"] += bool(attempt["success"])
        row["seconds"] += attempt["seconds"]
    for row in tasks.values():
        row["init_states"] = f"{min(row['attempted'])}-{max(row['attempted'])}"
        del row["attempted"]
    return {**json.loads(recipe.read_text(encoding="utf-8")), "tasks": tasks}


def write_card(out: Path) -> None:
    """(Re)write the model card from training.json and, when present, success.json."""
    training = json.loads((out / TRAINING).read_text(encoding="utf-8"))
    cfg, rep, data = training["config"], training["report"], training["dataset"]
    demos = data.get("demos") or {}
    what = ("whole-task demonstrations from the robot's start pose, recorded by `tether collect "
            f"--tree` (expert: `{demos.get('tree')}` on privileged perception, successful "
            "episodes only)" if demos else
            "scripted-expert grasps recorded by `tether collect` from a jittered pre-grasp pose")
    backbone = cfg.get("backbone") not in (None, "None")
    lines = [
        f"# {out.name}: a small ACT trained by tether", "",
        (f"Trained on CPU by `tether train` (lerobot ACT, the vision backbone of "
         f"`{cfg['backbone']}` frozen: its features of every frame computed once, the rest "
         "trained on them)" if backbone else
         "Trained from scratch on CPU by `tether train` (lerobot ACT, no pretrained backbone)")
        + f" on {what}.", "",
        "## Data", "",
        f"- dataset: `{data['root']}`: {data['episodes']} episodes, {data['frames']} frames at "
        f"{data['fps']} fps",
        f"- features: {', '.join(f'`{k}` {v}' for k, v in data['features'].items())}",
        f"- instructions: {', '.join(repr(t) for t in data['tasks'])}",
        *([f"- collected by `tether collect` from tasks {', '.join(data['collect']['tasks'])} "
           f"(init states from {data['collect']['first_init_state']}), cameras "
           f"{', '.join(data['collect']['cameras'])}, staging {data['collect']['stage']}; "
           f"{data['collect']['episodes']} successful of {data['collect']['attempts']} attempts "
           f"in {data['collect']['seconds'] / 60:.1f} min"] if data["collect"] else []),
        *([f"- cameras {demos['cameras']}, language `{demos['language']}`, step budget "
           f"{demos['budget'] or 'the task cap'}; per task (init states attempted: kept): "
           + "; ".join(f"{t} ({r['init_states']}: {r['kept']})"
                       for t, r in demos["tasks"].items())] if demos else []),
        "", "## Training", "",
        f"- command: `{cfg['command'] or 'tether train'}`",
        f"- steps: {rep['steps']} at batch {cfg['batch_size']}, lr {cfg['lr']}, chunk "
        f"{cfg['chunk_size']} (n_action_steps {cfg['n_action_steps']}), dim_model "
        f"{cfg['dim_model']}, {cfg['n_encoder_layers']} encoder layers, VAE {cfg['use_vae']}",
        f"- parameters: {rep['parameters'] / 1e6:.2f} M, stored in float16: "
        f"{rep['size_mb']:.1f} MB",
        f"- time: {rep['seconds'] / 60:.1f} min on {cfg['threads']} CPU threads"
        + (f" (resumed at step {rep['resumed_from']})" if rep.get("resumed_from") else ""),
        *loss_card_lines(rep["loss"], out),
        "", "## Success", "",
    ]
    success = out / "success.md"
    lines.append(success.read_text(encoding="utf-8").strip() if success.exists() else
                 "Not measured yet: run " + (
                     "the held-out suite of docs/policies.md (A fair end-to-end baseline)."
                     if demos else "`benchmarks/vla_grasp.py`."))
    (out / CARD).write_text("\n".join(lines) + "\n", encoding="utf-8")
