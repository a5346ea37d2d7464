"""The resumable training loop `tether train` and `tether train-perception` share.

A `TrainingLoop` owns what every training run repeats: the optimisation step (zero the
gradients, back-propagate, clip when asked, step the optimiser), the `LossCurve`, the progress
callback, a save every `save_every` steps and a save in `finally`, so a run that ends, runs out
of `minutes`, raises or is interrupted (Ctrl-C) loses nothing. It counts steps and training time
over interruptions: `state()` is the part of a checkpoint it owns (model, optimiser, step,
seconds) and `restore(state)` continues from it. What a save writes, and how the loss curve is
stored, is each trainer's own (its checkpoint format).

    loop = TrainingLoop(model, optimiser, LossCurve(steps, 20), steps=steps, save_every=100)
    if resuming:
        loop.restore(saved)
    loop.run(lambda: loss_of(next(batches)), save)   # save() reads loop.step, loop.seconds
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


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

    def state(self) -> dict:
        """The points and the open stretch, for `restore`."""
        return {"points": [list(p) for p in self.points], "sum": self._sum, "count": self._count}

    def restore(self, state: dict) -> None:
        self.points = [tuple(p) for p in state["points"]]
        self._sum, self._count = state["sum"], state["count"]


class TrainingLoop:
    """Optimisation steps of `model` by `optimiser` up to step `steps` (see the module)."""

    def __init__(self, model: Any, optimiser: Any, curve: LossCurve, *, steps: int,
                 save_every: int, minutes: float | None = None, clip: float | None = None,
                 progress: Callable[[int, float], None] | None = None) -> None:
        self.model, self.optimiser, self.curve = model, optimiser, curve
        self.steps, self.save_every, self.minutes, self.clip = steps, save_every, minutes, clip
        self.progress = progress
        self.step = self.resumed_from = 0
        self._spent, self._start = 0.0, None
        self._saved: int | None = None  # the step last saved by this run

    @property
    def seconds(self) -> float:
        """Training time so far, earlier runs of a resumed one included."""
        return self._spent + (0.0 if self._start is None else time.perf_counter() - self._start)

    def state(self) -> dict:
        """The model's and optimiser's state, the step and the seconds, for `restore`."""
        return {"model": self.model.state_dict(), "optimiser": self.optimiser.state_dict(),
                "step": self.step, "seconds": self.seconds}

    def restore(self, state: dict) -> None:
        """Continue from a `state()` (the loss curve is the caller's to restore)."""
        self.model.load_state_dict(state["model"])
        self.optimiser.load_state_dict(state["optimiser"])
        self.step = self.resumed_from = state["step"]
        self._spent = state["seconds"]

    def run(self, loss: Callable[[], Any], save: Callable[[], None]) -> None:
        """Step until `steps` (or `minutes` of training time): `loss()` is the next batch's loss
        tensor; `save()` every `save_every` steps and once more however the loop ends, unless
        that step is saved already."""
        self._start = time.perf_counter()
        self.model.train()
        try:
            while self.step < self.steps and not self._out_of_time():
                value = loss()
                self.optimiser.zero_grad()
                value.backward()
                if self.clip is not None:
                    import torch

                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                self.optimiser.step()
                self.step, number = self.step + 1, value.item()
                self.curve.add(self.step, number)
                if self.progress:
                    self.progress(self.step, number)
                if self.step % self.save_every == 0:
                    self._save(save)
        finally:
            self.model.eval()
            self._save(save)

    def _out_of_time(self) -> bool:
        return self.minutes is not None and self.seconds >= 60 * self.minutes

    def _save(self, save: Callable[[], None]) -> None:
        if self._saved != self.step:
            save()
            self._saved = self.step


def atomic_save(obj: Any, path: Path) -> None:
    """`torch.save` to a temporary file renamed over `path`: a kill leaves the old file."""
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


LOSS_PLOT = "loss.png"


def loss_card_lines(points: list, out: Path) -> list[str]:
    """A model card's loss lines: the mean loss of each interval as text, and the curve drawn
    into `out`/loss.png (log scale) when there are at least two points."""
    lines = ["- loss (mean over each interval): " + ", ".join(f"{s}: {v:.3f}" for s, v in points)]
    if len(points) < 2:
        return lines
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, losses = zip(*points, strict=True)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(steps, losses, marker="o", markersize=3)
    ax.set_yscale("log")
    ax.set_xlabel("optimisation step")
    ax.set_ylabel("mean loss of the interval")
    ax.set_title(f"{out.name}: training loss")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / LOSS_PLOT, dpi=100)
    plt.close(fig)
    return [*lines, "", f"![training loss]({LOSS_PLOT})"]
