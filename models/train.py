"""`tether train`: a small ACT trained from scratch on a LeRobotDataset, on the CPU.

lerobot's own pieces do the work: the dataset (`LeRobotDataset` with action chunks through
`delta_timestamps`), `ACTConfig`/`ACTPolicy` with `pretrained_backbone_weights=None` (nothing is
downloaded; the ResNet-18 learns from scratch, at the transformer's learning rate), the
normalising pre/post-processors built from the dataset's statistics, and `save_pretrained` for the
policy and both processors, so `LerobotPolicy` (and any lerobot tool) loads the result. Weights are
stored in float16 (the ResNet-18 alone is 45 MB in float32); lerobot loads them into its float32
model. A model card (README.md) records the data, the command, the steps, the loss curve and the
training time; `benchmarks/vla_grasp.py` adds the measured success.

    report = train(TrainConfig(dataset=Path("data/grasp"), out=Path("models/checkpoints/x")))
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tether.errors import TetherError

CARD = "README.md"
TRAINING = "training.json"



class LossCurve:
    """A training run's loss curve: the mean loss of each stretch of `steps // stretches` steps,
    as `(step, mean)` pairs in `points` (which a resumed run passes in to continue)."""

    def __init__(self, steps: int, stretches: int, points: list | None = None) -> None:
        self.steps, self.every = steps, max(1, steps // stretches)
        self.points = [tuple(p) for p in points or ()]
        self._sum, self._count = 0.0, 0

    def add(self, step: int, loss: float) -> None:
        """Count the loss of optimisation step `step`; close a stretch where one ends."""
        self._sum, self._count = self._sum + loss, self._count + 1
        if step % self.every == 0 or step == self.steps:
            self.points.append((step, round(self._sum / self._count, 4)))
            self._sum, self._count = 0.0, 0

@dataclass
class TrainConfig:
    dataset: Path
    out: Path
    steps: int = 2000
    batch_size: int = 32
    lr: float = 1e-4
    chunk_size: int = 10
    n_action_steps: int = 10
    dim_model: int = 128
    dim_feedforward: int = 512
    n_encoder_layers: int = 2
    use_vae: bool = False  # the scripted expert's demonstrations are unimodal
    seed: int = 0
    threads: int = 2
    command: str = ""  # how it was invoked, for the model card


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
    """Train, save the checkpoint and its model card in `config.out`; `progress(step, loss)` is
    called after every optimisation step."""
    check_dataset(config.dataset)
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset, LeRobotDatasetMetadata
    from lerobot.policies.act.modeling_act import ACTPolicy
    from lerobot.policies.factory import make_pre_post_processors
    from lerobot.utils.feature_utils import dataset_to_policy_features

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    start = time.perf_counter()
    meta = LeRobotDatasetMetadata(f"tether/{config.dataset.name}", root=config.dataset)
    cfg = act_config(config, dataset_to_policy_features(meta.features))
    dataset = LeRobotDataset(f"tether/{config.dataset.name}", root=config.dataset,
                             delta_timestamps={"action": [i / meta.fps
                                                          for i in range(config.chunk_size)]})
    policy = ACTPolicy(cfg)
    policy.train()
    preprocessor, postprocessor = make_pre_post_processors(cfg, dataset_stats=meta.stats)
    optimiser = torch.optim.AdamW(policy.get_optim_params(), lr=config.lr, weight_decay=1e-4)
    loader = torch.utils.data.DataLoader(dataset, batch_size=config.batch_size, shuffle=True,
                                         drop_last=True, num_workers=0)
    if len(loader) == 0:  # drop_last: no full batch, so the loop below would never step
        raise TetherError(f"{config.dataset} has {len(dataset)} frames, fewer than one batch "
                          f"({config.batch_size}); lower --batch-size or collect more episodes")
    curve, step = LossCurve(config.steps, 20), 0
    while step < config.steps:
        for batch in loader:
            loss, _ = policy.forward(preprocessor(batch))
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 10.0)
            optimiser.step()
            step += 1
            curve.add(step, loss.item())
            if progress:
                progress(step, loss.item())
            if step >= config.steps:
                break
    seconds = time.perf_counter() - start
    policy.eval()
    config.out.mkdir(parents=True, exist_ok=True)
    half = {k: v.half() if v.is_floating_point() else v for k, v in policy.state_dict().items()}
    policy.save_pretrained(config.out, state_dict=half)
    preprocessor.save_pretrained(config.out)
    postprocessor.save_pretrained(config.out)
    size = sum(p.stat().st_size for p in config.out.iterdir() if p.is_file()) / 1e6
    report = TrainReport(out=str(config.out), steps=step, seconds=round(seconds, 1),
                         episodes=meta.total_episodes, frames=meta.total_frames,
                         parameters=sum(p.numel() for p in policy.parameters()),
                         size_mb=round(size, 2), loss=curve.points)
    (config.out / TRAINING).write_text(json.dumps(
        {"config": {k: str(v) for k, v in asdict(config).items()}, "report": asdict(report),
         "dataset": dataset_summary(config.dataset)}, indent=2) + "\n", encoding="utf-8")
    write_card(config.out)
    return report


def check_dataset(root: Path) -> None:
    """A clear error unless `root` is a local LeRobotDataset with at least one episode (lerobot
    itself would try to download anything missing from the hub)."""
    info = root / "meta" / "info.json"
    if not info.is_file():
        raise TetherError(f"{root} is not a LeRobotDataset (no meta/info.json); "
                          "record one with `tether collect`")
    try:
        episodes = json.loads(info.read_text(encoding="utf-8"))["total_episodes"]
    except (ValueError, KeyError) as exc:
        raise TetherError(f"{info} is not LeRobotDataset metadata ({exc})") from None
    if not episodes:
        raise TetherError(f"{root} has no episodes; record some with `tether collect`")


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
            "tasks": tasks, "collect": collect_meta(root)}


def collect_meta(root: Path) -> dict:
    """What `tether collect` recorded about the dataset (meta/tether_collect.json), if anything."""
    path = root / "meta" / "tether_collect.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_card(out: Path) -> None:
    """(Re)write the model card from training.json and, when present, success.json."""
    training = json.loads((out / TRAINING).read_text(encoding="utf-8"))
    cfg, rep, data = training["config"], training["report"], training["dataset"]
    lines = [
        f"# {out.name}: a small ACT for the grasp phase, trained by tether", "",
        "Trained from scratch on CPU by `tether train` (lerobot ACT, no pretrained backbone) on "
        "scripted-expert grasps recorded by `tether collect` from a jittered pre-grasp pose.", "",
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
        "", "## Training", "",
        f"- command: `{cfg['command'] or 'tether train'}`",
        f"- steps: {rep['steps']} at batch {cfg['batch_size']}, lr {cfg['lr']}, chunk "
        f"{cfg['chunk_size']} (n_action_steps {cfg['n_action_steps']}), dim_model "
        f"{cfg['dim_model']}, {cfg['n_encoder_layers']} encoder layers, VAE {cfg['use_vae']}",
        f"- parameters: {rep['parameters'] / 1e6:.2f} M, stored in float16: "
        f"{rep['size_mb']:.1f} MB",
        f"- time: {rep['seconds'] / 60:.1f} min on {cfg['threads']} CPU threads",
        "- loss (mean over each interval): " + ", ".join(f"{s}: {v:.3f}" for s, v in rep["loss"]),
        "", "## Success", "",
    ]
    success = out / "success.md"
    lines.append(success.read_text(encoding="utf-8").strip() if success.exists() else
                 "Not measured yet: run `benchmarks/vla_grasp.py`.")
    (out / CARD).write_text("\n".join(lines) + "\n", encoding="utf-8")
