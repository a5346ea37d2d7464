"""`tether train-perception`: the category segmenter trained from scratch on CPU.

The frames of one or more perception datasets (`tether collect-perception`) whose init state is not
held out (`init_state % holdout == holdout - 1` is kept for evaluation, `benchmarks/perception.py`)
train a `SegmenterConfig` U-Net with pixel cross-entropy (background down-weighted), AdamW, and
light augmentation (random `crop` x `crop` windows, horizontal flips, per-channel gains); the
network is fully convolutional, so it is trained on crops and labels whole frames. Training resumes
(the loop is `tether train`'s, `tether.models.training_loop.TrainingLoop`): `state.pt` in the
output directory holds the model, the optimiser, the step, the loss curve and the time spent, and
is written every `save_every` steps, at the end, when `minutes` of training time are spent and on
Ctrl-C; running again with more `steps` continues from it. The checkpoint (`config.json`,
`weights.pt` in float16) and the model card (README.md, from `training.json` and, once measured,
`evaluation.md`) are rewritten at each save, so a stopped run leaves a usable checkpoint.

    report = train_segmenter(SegmenterTrainConfig(datasets=[Path("data/seg")], out=Path("ckpt")))
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tether.errors import TetherError
from tether.models.perception.category_segmenter import (
    CONFIG,
    WEIGHTS,
    SegmenterConfig,
    network,
    to_input,
)
from tether.models.perception.dataset import Frames, load, read_meta
from tether.models.training_loop import LossCurve, TrainingLoop, atomic_save, loss_card_lines

STATE = "state.pt"
TRAINING = "training.json"
EVALUATION = "evaluation.md"
CARD = "README.md"


@dataclass
class SegmenterTrainConfig:
    datasets: list[Path]
    out: Path
    steps: int = 3000
    batch_size: int = 16
    crop: int = 64  # training windows (px); whole frames when as large as the frames
    lr: float = 2e-3
    width: int = 12
    levels: int = 3
    holdout: int = 5
    background_weight: float = 0.3
    minutes: float | None = None  # stop (resumably) after this much training time
    save_every: int = 100
    seed: int = 0
    threads: int = 2
    command: str = ""

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.save_every < 1 or self.crop < 1:
            raise TetherError("steps, batch size, crop and save_every are at least 1")
        if self.holdout < 2:
            raise TetherError(f"holdout keeps every holdout-th init state out; it is at least "
                              f"2, not {self.holdout}")
        if not self.lr > 0 or (self.minutes is not None and not self.minutes > 0):
            raise TetherError("the learning rate and minutes must be positive")


@dataclass
class SegmenterTrainReport:
    out: str
    steps: int
    seconds: float
    frames: int
    held_out: int
    parameters: int
    size_mb: float
    resumed_from: int = 0
    loss: list[tuple[int, float]] = field(default_factory=list)


def held_out(frames: Frames, holdout: int) -> np.ndarray:
    """Which frames are evaluation frames: their init state is `holdout - 1` modulo `holdout`."""
    return np.array([r["init_state"] % holdout == holdout - 1 for r in frames.records])


def _batch(frames: Frames, rng: np.random.Generator, size: int, crop: int):
    import torch

    idx = rng.integers(0, len(frames), size)
    h, w = frames.rgb.shape[1:3]
    ch, cw = min(crop, h), min(crop, w)
    top, left = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
    rgb = frames.rgb[idx, top:top + ch, left:left + cw].astype(np.float32)
    rgb *= rng.uniform(0.7, 1.3, (size, 1, 1, 3))
    labels = frames.category[idx, top:top + ch, left:left + cw].astype(np.int64)
    flip = rng.random(size) < 0.5
    rgb[flip], labels[flip] = rgb[flip, :, ::-1], labels[flip, :, ::-1]
    return to_input(np.clip(rgb, 0, 255)), torch.as_tensor(np.ascontiguousarray(labels))


def train_segmenter(config: SegmenterTrainConfig,
                    progress: Callable[[int, float], None] | None = None
                    ) -> SegmenterTrainReport:
    """Train (or resume) and save the checkpoint and its card in `config.out`; `progress(step,
    loss)` after every step."""
    import torch

    frames = load(config.datasets)
    collected = [read_meta(root).get("collect", {}) for root in config.datasets]
    test = held_out(frames, config.holdout)
    train = frames.select(~test)
    if not len(train):
        raise TetherError(f"{', '.join(map(str, config.datasets))}: every frame's init state "
                          f"is held out (holdout {config.holdout}); collect more init states")
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    seg = SegmenterConfig(tuple(frames.categories), tuple(train.rgb.shape[1:3]), config.width,
                          config.levels)
    model = network(seg)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=1e-4)
    state_path = config.out / STATE
    state = torch.load(state_path, map_location="cpu", weights_only=False) \
        if state_path.is_file() else None
    if state is not None and (tuple(state["config"]["categories"]) != seg.categories or
                              state["config"]["width"] != seg.width or
                              state["config"]["levels"] != seg.levels):
        raise TetherError(f"{state_path} is a run of another model or dataset; choose "
                          f"another --out")
    loop = TrainingLoop(model, optimiser,
                        LossCurve(config.steps, 30, None if state is None else state["loss"]),
                        steps=config.steps, save_every=config.save_every,
                        minutes=config.minutes, progress=progress)
    if state is not None:
        loop.restore(state)
    config.out.mkdir(parents=True, exist_ok=True)
    weight = torch.ones(len(seg.categories) + 1)
    weight[0] = config.background_weight
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    rng = np.random.default_rng(config.seed + loop.step)
    report: SegmenterTrainReport | None = None

    def loss():
        x, y = _batch(train, rng, config.batch_size, config.crop)
        return loss_fn(model(x), y)

    def save() -> None:
        nonlocal report
        saved = loop.state()
        atomic_save({"config": asdict(seg), **saved, "loss": loop.curve.points}, state_path)
        seg.write(config.out / CONFIG)
        atomic_save({k: v.half() if v.is_floating_point() else v
                     for k, v in model.state_dict().items()}, config.out / WEIGHTS)
        size = sum((config.out / f).stat().st_size for f in (CONFIG, WEIGHTS)) / 1e6
        report = SegmenterTrainReport(str(config.out), loop.step, round(saved["seconds"], 1),
                                      len(train), int(test.sum()),
                                      sum(p.numel() for p in model.parameters()),
                                      round(size, 2), loop.resumed_from, list(loop.curve.points))
        dataset = {"roots": [str(d) for d in config.datasets], "frames": len(frames),
                   "size": list(seg.size), "categories": frames.categories,
                   "collect": collected}
        (config.out / TRAINING).write_text(json.dumps(
            {"config": {k: str(v) for k, v in asdict(config).items()}, "report": asdict(report),
             "dataset": dataset}, indent=2) + "\n", encoding="utf-8")
        write_card(config.out)

    loop.run(loss, save)
    assert report is not None  # the loop saves when it ends
    return report


def write_card(out: Path) -> None:
    """(Re)write the model card from training.json and, when present, evaluation.md."""
    training = json.loads((out / TRAINING).read_text(encoding="utf-8"))
    cfg, rep, data = training["config"], training["report"], training["dataset"]
    lines = [
        f"# {out.name}: tether's category segmenter", "",
        "A small U-Net trained from scratch on CPU by `tether train-perception` (no downloaded "
        "weights) to label every pixel of an upright RGB frame with a catalogue category; the "
        "labels are the simulator's instance masks rendered by `tether collect-perception`. "
        "Loaded by `perception: {checkpoint: DIR}` "
        "(`tether.models.perception.category_segmenter`).", "",
        "## Data", "",
        f"- datasets: {', '.join(f'`{r}`' for r in data['roots'])}: {data['frames']} frames "
        f"({data['size'][0]}x{data['size'][1]} RGB); {rep['frames']} train, "
        f"{rep['held_out']} held out (init states with `init_state % {cfg['holdout']} == "
        f"{int(cfg['holdout']) - 1}`)",
        *(f"- rendered by `tether collect-perception` from {', '.join(c['tasks'])}: init states "
          f"{c.get('first_init_state', 0)}-{c.get('first_init_state', 0) + c['init_states'] - 1}, "
          f"variants {', '.join(v or 'none' for v in c['variants'])} "
          f"(each with {c['always']}), cameras {', '.join(c['cameras'])}"
          for c in data.get("collect", []) if c),
        f"- categories ({len(data['categories'])}): {', '.join(data['categories'])}",
        "", "## Training", "",
        f"- command: `{cfg['command'] or 'tether train-perception'}`"
        + (f" (resumed a run saved at step {rep['resumed_from']})" if rep.get("resumed_from")
           else ""),
        f"- steps: {rep['steps']} at batch {cfg['batch_size']} ({cfg['crop']} px crops), lr "
        f"{cfg['lr']}, width "
        f"{cfg['width']}, {cfg['levels']} levels, background weight {cfg['background_weight']}",
        f"- parameters: {rep['parameters'] / 1e6:.2f} M, stored in float16: "
        f"{rep['size_mb']:.1f} MB",
        f"- time: {rep['seconds'] / 60:.1f} min on {cfg['threads']} CPU threads (shared machine)",
        *loss_card_lines(rep["loss"], out),
        "", "## Evaluation", "",
    ]
    evaluation = out / EVALUATION
    lines.append(evaluation.read_text(encoding="utf-8").strip() if evaluation.exists() else
                 "Not measured yet: run `benchmarks/perception.py`.")
    (out / CARD).write_text("\n".join(lines) + "\n", encoding="utf-8")
