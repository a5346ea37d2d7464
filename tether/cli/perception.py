"""The perception verbs of the `tether` command: render a labelled dataset, train the segmenter.

    tether collect-perception TASK... --out DIR [--init-states N] [--first-init-state K]
                              [--variant SPEC]...
    tether train-perception DATASET... --out DIR [--steps N] [--minutes M]

Each parses arguments and calls the library function tests call too
(`tether.datasets.perception.collect_perception`,
`tether.models.perception.training.train_segmenter`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.cli.options import command_line, out


def collect_perception(
    tasks: Annotated[list[str], typer.Argument(metavar="TASK...", help="Tasks to render "
                                               "(SUITE/TASK_NAME or SUITE/INDEX).")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="New dataset folder.")] = Path(
        "data/perception"),
    init_states: Annotated[int, typer.Option(min=1, help="Init states per task.")] = 10,
    first_init_state: Annotated[int, typer.Option(min=0, help="The first of them (keep a "
                                                  "benchmark's evaluated ones out).")] = 0,
    variants: Annotated[list[str] | None, typer.Option(
        "--variant", metavar="KIND[:k=v,...]",
        help="An appearance variant (a perturbation; '' for none); repeatable. Default: none, "
             "recolour, lighting (brighter, dimmer), camera_angle, occlusion, distractors, "
             "identical_copies.")] = None,
    size: Annotated[int, typer.Option(min=16, help="Image height and width (px).")] = 128,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations.")] = 0,
) -> None:
    """Render tasks' cameras (RGB, depth) under appearance perturbations, labelled with the
    simulator's instance masks, into a perception dataset."""
    from tether.cli.progress import LazyBar
    from tether.datasets.perception import VARIANTS, PerceptionCollectConfig
    from tether.datasets.perception import collect_perception as run_collect

    config = PerceptionCollectConfig(tasks=tasks, out=out_dir, init_states=init_states,
                                     first_init_state=first_init_state,
                                     variants=tuple(variants) if variants else VARIANTS,
                                     size=(size, size), seed=seed)
    with LazyBar("scenes", "scene") as bar:
        report = run_collect(config, progress=bar.show)
    for skipped in report.skipped:
        out.print(f"skipped {skipped}")
    out.print(f"rendered {report.frames} frames ({report.scenes} scenes built) in "
              f"{report.seconds:.0f} s to {report.root}")


def train_perception(
    ctx: typer.Context,
    datasets: Annotated[list[Path], typer.Argument(metavar="DATASET...", help="Perception "
                                                   "datasets (from `tether collect-perception`)"
                                                   "; their categories are merged.")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Checkpoint folder (resumed "
                                                              "when it holds a run).")],
    steps: Annotated[int, typer.Option(min=1, help="Total optimisation steps.")] = 3000,
    minutes: Annotated[float | None, typer.Option(help="Stop after this much training time "
                                                       "(resumable).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Batch size.")] = 16,
    crop: Annotated[int, typer.Option(min=8, help="Training windows (px) cut from the frames; "
                                                  "the model labels whole frames.")] = 64,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 2e-3,
    width: Annotated[int, typer.Option(min=1, help="U-Net channels at full resolution.")] = 12,
    holdout: Annotated[int, typer.Option(min=2, help="Init states with init_state % N == N-1 "
                                                     "are held out for evaluation.")] = 5,
    seed: Annotated[int, typer.Option(help="Torch seed.")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="Torch CPU threads.")] = 2,
) -> None:
    """Train tether's category segmenter from scratch on CPU; save it with a model card."""
    from tether.cli.progress import LazyBar
    from tether.models.perception.training import SegmenterTrainConfig, train_segmenter

    config = SegmenterTrainConfig(datasets=list(datasets), out=out_dir, steps=steps,
                                  minutes=minutes, batch_size=batch_size, crop=crop, lr=lr,
                                  width=width, holdout=holdout, seed=seed, threads=threads,
                                  command=command_line(ctx))
    with LazyBar("training", "step") as bar:
        report = train_segmenter(
            config, progress=lambda step, loss: bar.show(step, steps, loss=f"{loss:.3f}"))
    final = f"; final loss {report.loss[-1][1]:.3f}" if report.loss else ""
    out.print(f"trained to step {report.steps} (from {report.resumed_from}) in "
              f"{report.seconds / 60:.1f} min{final}; {report.size_mb:.1f} MB in {report.out} "
              f"(model card: README.md)")


def register(app: typer.Typer) -> None:
    """Add the perception verbs to the `tether` app."""
    app.command("collect-perception")(collect_perception)
    app.command("train-perception")(train_perception)
