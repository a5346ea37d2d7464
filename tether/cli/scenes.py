"""`tether scenes`, `tasks` and `doctor`: what tasks and perturbations exist, what a perturbed
scene looks like, and whether LIBERO is installed right (`tether.scenes`).

    tether scenes list [--suite S]                               suites, tasks, perturbations
    tether scenes show TASK [-p KIND[:k=v]]... [--seed N] -o frame.png
    tether tasks [SUITE | SET | libero_pro]                      LIBERO's and LIBERO-PRO's tasks
    tether doctor                                                LIBERO imports, asset hashes

`show` renders the agent-view and wrist cameras of the task's settled initial scene, with the
(perturbed) instruction as caption, so a person can look at a perturbation before trusting it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from tether.cli.options import PerturbOpt, out

scenes_app = typer.Typer(name="scenes", no_args_is_help=True, add_completion=False,
                         help="List tasks and perturbations; render a (perturbed) scene.")


@scenes_app.command("list")
def list_(suite: Annotated[str | None, typer.Option(help="Only this suite's tasks.")] = None
          ) -> None:
    """Suites with their tasks (LIBERO's and tether's own), then every perturbation kind."""
    from tether.scenes.catalogue import ALL_SUITES, list_tasks
    from tether.scenes.perturbations import REGISTRY

    rows = list_tasks([suite] if suite else ALL_SUITES)
    task_table = Table(Column("task", no_wrap=True, min_width=max(len(t.id) for t in rows)), "#",
                       "init states", "instruction", title="tasks")
    for t in rows:
        kind = f" [dim]({t.kind})[/]" if t.kind else ""
        task_table.add_row(t.id, str(t.index), "sampled" if t.sampled else "recorded",
                      t.language + kind)
    out.print(task_table)
    kinds = Table(Column("perturbation", no_wrap=True, min_width=max(map(len, REGISTRY))),
                  "acts at", "what it does", title="perturbations "
                  "(--perturb KIND[:key=value,...], see docs/perturbations.md)")
    for name in sorted(REGISTRY):
        kinds.add_row(name, REGISTRY[name].stage, REGISTRY[name].summary)
    out.print(kinds)
    out.print("A task may also be the path of any LIBERO-format .bddl file; LIBERO-PRO's "
              "official sets are listed by `tether tasks libero_pro`.")


@scenes_app.command()
def show(
    task: Annotated[str, typer.Argument(help="SUITE/TASK_NAME, SUITE/INDEX or a .bddl file.")],
    perturb: PerturbOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the perturbations; also picks the init "
                                           "state (seed % 50) unless --init-state is given.")] = 0,
    init_state: Annotated[int | None, typer.Option(help="Which initial state.")] = None,
    size: Annotated[int, typer.Option(min=32, help="Pixels per camera image.")] = 256,
    output: Annotated[Path, typer.Option("--output", "-o", help="PNG to write.")] = Path(
        "frame.png"),
) -> None:
    """Render the task's initial scene (agent view and wrist), captioned with its instruction."""
    from tether.scenes.snapshot import snapshot

    image = snapshot(task, perturb or (), seed=seed, init_state=init_state, size=size)
    output.parent.mkdir(parents=True, exist_ok=True)
    image.save(output)
    out.print(f"wrote {output} ({image.width}x{image.height})")


def tasks(suite: Annotated[str | None, typer.Argument(
        help="Only this suite or LIBERO-PRO set; `libero_pro` lists LIBERO-PRO's sets.")] = None
          ) -> None:
    """List LIBERO tasks (address, index, instruction), or LIBERO-PRO's official sets."""
    from tether.scenes.catalogue import PRO_GROUP, SUITES, list_tasks, pro_sets, suite_tasks

    if suite == PRO_GROUP:
        sets = Table(Column("set", no_wrap=True), "tasks", "init states", "step cap",
                     title="LIBERO-PRO's official sets (`tether tasks SET`)")
        for name in pro_sets():
            rows = suite_tasks(name)
            counts = sorted({t.num_init_states for t in rows})
            sets.add_row(name, str(len(rows)), "/".join(map(str, counts)) + " each",
                         str(rows[0].max_steps))
        out.print(sets)
        return
    rows = list_tasks([suite] if suite else SUITES)
    table = Table(Column("task", no_wrap=True, min_width=max(len(t.id) for t in rows)), "#",
                  "instruction")
    for t in rows:
        table.add_row(t.id, str(t.index), t.language)
    out.print(table)


def doctor() -> None:
    """Check the installation: LIBERO imports without a prompt, its assets match the manifest and
    LIBERO-PRO's sets are unpacked."""
    from tether.scenes import libero_pro
    from tether.scenes.assets import verify_assets
    from tether.scenes.libero_setup import import_libero

    import_libero()
    out.print(f"LIBERO imports without a prompt; assets: {verify_assets().summary()}")
    out.print(f"LIBERO-PRO: {len(libero_pro.official_sets())} official sets, "
              f"{len(libero_pro.register_objects())} object categories added")


def register(app: typer.Typer) -> None:
    """Add the `scenes` group, `tasks` and `doctor` to the tether app."""
    app.add_typer(scenes_app)
    app.command()(tasks)
    app.command()(doctor)
