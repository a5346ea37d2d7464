"""`tether scenes`: what tasks and perturbations exist, and what a perturbed scene looks like.

    tether scenes list [--suite S]                               suites, tasks, perturbations
    tether scenes show TASK [-p KIND[:k=v]]... [--seed N] -o frame.png

`show` renders the agent-view and wrist cameras of the task's settled initial scene, with the
(perturbed) instruction as caption, so a person can look at a perturbation before trusting it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Column, Table

from tether.errors import TetherError

scenes_app = typer.Typer(name="scenes", no_args_is_help=True, add_completion=False,
                         help="List tasks and perturbations; render a (perturbed) scene.")
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(exc: TetherError) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
    return typer.Exit(2)


@scenes_app.command("list")
def list_(suite: Annotated[str | None, typer.Option(help="Only this suite's tasks.")] = None
          ) -> None:
    """Suites with their tasks (LIBERO's and tether's own), then every perturbation kind."""
    from tether.scenes.catalogue import ALL_SUITES, list_tasks
    from tether.scenes.perturbations import REGISTRY

    try:
        rows = list_tasks([suite] if suite else ALL_SUITES)
    except TetherError as exc:
        raise _fail(exc) from None
    tasks = Table(Column("task", no_wrap=True, min_width=max(len(t.id) for t in rows)), "#",
                  "init states", "instruction", title="tasks")
    for t in rows:
        kind = f" [dim]({t.kind})[/]" if t.kind else ""
        tasks.add_row(t.id, str(t.index), "sampled" if t.sampled else "recorded",
                      t.language + kind)
    out.print(tasks)
    kinds = Table(Column("perturbation", no_wrap=True, min_width=max(map(len, REGISTRY))),
                  "acts at", "what it does", title="perturbations "
                  "(--perturb KIND[:key=value,...], see docs/perturbations.md)")
    for name in sorted(REGISTRY):
        kinds.add_row(name, REGISTRY[name].stage, REGISTRY[name].summary)
    out.print(kinds)
    out.print("A task may also be the path of any LIBERO-format .bddl file.")


@scenes_app.command()
def show(
    task: Annotated[str, typer.Argument(help="SUITE/TASK_NAME, SUITE/INDEX or a .bddl file.")],
    perturb: Annotated[list[str] | None, typer.Option(
        "--perturb", "-p", metavar="KIND[:k=v,...]", help="Apply a perturbation "
                                                          "(repeatable).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations; also picks the init "
                                           "state (seed % 50) unless --init-state is given.")] = 0,
    init_state: Annotated[int | None, typer.Option(help="Which initial state.")] = None,
    size: Annotated[int, typer.Option(min=32, help="Pixels per camera image.")] = 256,
    output: Annotated[Path, typer.Option("--output", "-o", help="PNG to write.")] = Path(
        "frame.png"),
) -> None:
    """Render the task's initial scene (agent view and wrist), captioned with its instruction."""
    from tether.scenes.snapshot import snapshot

    try:
        image = snapshot(task, perturb or (), seed=seed, init_state=init_state, size=size)
    except TetherError as exc:
        raise _fail(exc) from None
    output.parent.mkdir(parents=True, exist_ok=True)
    image.save(output)
    out.print(f"wrote {output} ({image.width}x{image.height})")
