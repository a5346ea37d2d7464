"""The `tether` command: thin verbs over library functions.

    tether run TREE --task SUITE/TASK [--seed N] [--with KEY=VALUE]...   run one episode
        [--verifier vlm --base-url URL --model NAME]                     (a VLM judges verify)
        [--diagnoser llm --base-url URL --model NAME]                    (an LLM diagnoses)
    tether check FILE... [--task SUITE/TASK]                             validate and print trees
    tether tasks [SUITE]                                                 list LIBERO tasks
    tether doctor                                                        check the installation
    tether view RUN_DIR [--port N] [--host H] [--live]                   replay a run in a browser
    tether export RUN_DIR -o run.html                                    the replay as one file
    tether render TREE -o tree.svg|png                                   draw a tree (graphviz)
    tether memory list|search|show|stats|export|import|rebuild-index     the long-term store
    tether plan "INSTRUCTION" --task T -o tree.yaml / do "INSTRUCTION" --task T   planning
    tether collect TASK... --episodes N / train DATASET / serve-policy CKPT  policies
    tether bench SUITE [--workers N] [--gate BASE.json] / bench compare A B  benchmark suites

Exit codes: 0 success, 1 the task failed (run) or a tree has errors (check), 2 usage or input
errors (printed as one clear message, never a traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import py_trees
import typer
from rich.console import Console
from rich.table import Column, Table

from tether.errors import TetherError
from tether.cli.bench import register as register_bench_verb
from tether.cli.memory import memory_app
from tether.cli.planning import (
    BaseUrl,
    DiagnoserOpt,
    Model,
    Timeout,
    Verifier,
    VerifierBackend,
    chat_services,
)
from tether.cli.planning import register as register_planning_verbs
from tether.cli.policy import register as register_policy_verbs
from tether.cli.scenes import scenes_app

app = typer.Typer(
    name="tether", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="A reactive behaviour-tree executive for robot manipulation: YAML task trees compiled "
         "to py_trees and ticked against LIBERO scenes.",
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
app.add_typer(memory_app)
app.add_typer(scenes_app)
register_planning_verbs(app)
register_policy_verbs(app)
register_bench_verb(app)

WithOpt = Annotated[list[str] | None, typer.Option(
    "--with", "-w", metavar="KEY=VALUE",
    help="Bind a tree parameter (repeatable); overrides what the task's goal binds.")]
TaskOpt = Annotated[str, typer.Option(
    "--task", "-t", metavar="SUITE/TASK",
    help="A task as SUITE/TASK_NAME, SUITE/INDEX or a .bddl file (see `tether scenes list`).")]
PerturbOpt = Annotated[list[str] | None, typer.Option(
    "--perturb", "-p", metavar="KIND[:k=v,...]",
    help="Apply a perturbation (repeatable, applied in order; see `tether scenes list`).")]


def _fail(exc: TetherError) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
    return typer.Exit(2)


def _bindings(pairs: list[str] | None) -> dict:
    from tether.trees.compiler import parse_binding

    return dict(parse_binding(p) for p in pairs or [])


@app.command()
def run(
    tree: Annotated[Path, typer.Argument(
        help="Tree file (YAML), e.g. trees/library/pick_place.yaml")],
    task: TaskOpt,
    seed: Annotated[int, typer.Option(help="Seed; also picks the init state (seed % 50) unless "
                                           "--init-state is given.")] = 0,
    init_state: Annotated[int | None, typer.Option(
        help="Which of the task's 50 init states.")] = None,
    with_: WithOpt = None,
    budget: Annotated[int, typer.Option(help="Step budget of the episode.")] = 1000,
    runs: Annotated[Path, typer.Option(
        help="Folder that receives the run directory.")] = Path("runs"),
    live: Annotated[bool | None, typer.Option(
        "--live/--lines", help="Redraw the tree each tick, or print a line per running leaf "
                               "(default: live on a terminal).")] = None,
    record_trace: Annotated[bool, typer.Option(
        "--record/--no-record", help="Write the run's trace (trace.jsonl, frames/) for "
                                     "`tether view`.")] = True,
    frame_every: Annotated[int, typer.Option(
        min=0, help="Save camera frames (agentview and wrist, 128 px) every N ticks and at every "
                    "event; 0: no frames.")] = 20,
    memory: Annotated[str | None, typer.Option(
        metavar="PATH|fresh|none", help="Long-term memory store: a file (created when missing), "
        "'fresh' (a new store in the run directory) or 'none' (memory off). Default: "
        "RUNS/memory.db.")] = None,
    perturb: PerturbOpt = None,
    verifier: Verifier = "sim",
    verifier_backend: VerifierBackend = "openai",
    model: Model = "",
    base_url: BaseUrl = "http://localhost:8000/v1",
    timeout: Timeout = 60.0,
    diagnoser: DiagnoserOpt = "rules",
) -> None:
    """Run one episode of TREE on a LIBERO task and report the result.

    Exit code 0 when the task succeeded (its own goal test), 1 when it did not.
    """
    from dataclasses import replace

    from tether.behaviours.services import NO_SERVICES
    from tether.cli.progress import LiveTree, TipLines
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig
    from tether.session.run import run as run_tree
    from tether.session.session import DEFAULT_FRAMES, SessionConfig

    use_live = out.is_terminal if live is None else live

    def display(root: py_trees.behaviour.Behaviour, robot):
        return LiveTree(root, robot, out) if use_live else TipLines(robot, out)

    services = NO_SERVICES
    try:
        services = chat_services(verifier, diagnoser, verifier_backend or "", model, base_url,
                                 timeout)
        record = run_tree(RunConfig(tree, SessionConfig(
            task=task, seed=seed, init_state=init_state, budget=budget, runs=runs,
            record=record_trace, frames=replace(DEFAULT_FRAMES, every=frame_every)
            if frame_every else FrameSettings(), memory=memory, perturb=tuple(perturb or ())),
            given=_bindings(with_)), services=services, display=display)
    except TetherError as exc:
        raise _fail(exc) from None
    finally:
        services.close()
    r = record.result
    verdict = "[bold green]SUCCESS[/]" if r.success else "[bold red]FAILURE[/]"
    out.print(f"{verdict}  task {record.task} (init state {record.init_state})", markup=True)
    if record.perturbations:
        out.print(f"  perturbed by {', '.join(record.perturbations)}: \"{record.instruction}\"")
    out.print(f"  tree {r.tree_status} ({'finished' if r.ended_by == 'tree' else 'budget spent'}),"
              f" {r.steps} steps, {r.sim_time:.2f} s simulated, {record.wall_seconds:.1f} s wall")
    for e in r.errors[-3:]:
        out.print(f"  error {e['code']} at step {e['step']} in '{e['node']}': {e['message']}")
    files = "result.json, tree.txt" + (", trace.jsonl" if record_trace else "")
    out.print(f"  run files: {record.run_dir}/  ({files})")
    if record.memory:
        m = record.memory
        out.print(f"  memory: {'merged into' if m['merged'] else 'stored as'} {m['partition']} "
                  f"{m['id']} in {m['store']}" + (f"; rule {m['rule']}" if m["rule"] else "")
                  + (f"; corrected {len(m['corrected'])} failure(s)" if m["corrected"] else ""))
        out.print(f"  diagnosis: {m['diagnosis']}")
    if record_trace:
        out.print(f"  replay it: tether view {record.run_dir}")
    raise typer.Exit(0 if r.success else 1)


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(help="Tree files to validate.")],
    task: Annotated[str | None, typer.Option(
        "--task", "-t", metavar="SUITE/TASK",
        help="Also check object names against this task's scene and bind params from its "
             "goal.")] = None,
    with_: WithOpt = None,
) -> None:
    """Validate tree files and print each compiled tree. Exit code 1 when any has errors.

    Without --task, object names are not checked and unbound parameters are shown as <name>.
    """
    from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file

    scene = None
    try:
        if task:
            from tether.scenes.catalogue import get_task
            from tether.scenes.libero_scene import LiberoScene

            scene = LiberoScene(get_task(task), init_state=0, seed=0)
        given = _bindings(with_)
    except TetherError as exc:
        raise _fail(exc) from None
    failed = False
    for path in files:
        try:
            params = dict(given)
            if scene is not None:
                params = {**goal_bindings(read_tree_file(path), scene.goal()), **params}
            compiled = compile_tree(path, params, resolve=scene.resolve if scene else None,
                                    placeholders=scene is None)
        except TetherError as exc:
            failed = True
            err.print(str(exc), markup=False)
            err.print(f"[red]✗ {path}[/]", markup=True)
            continue
        out.print(f"[green]✓ {path}[/] ({compiled.nodes} nodes)", markup=True)
        out.print(py_trees.display.unicode_tree(compiled.root), markup=False)
    if scene is not None:
        scene.close()
    raise typer.Exit(1 if failed else 0)


@app.command()
def tasks(suite: Annotated[str | None, typer.Argument(help="Only this suite.")] = None) -> None:
    """List LIBERO tasks: their address, index and instruction."""
    from tether.scenes.catalogue import SUITES, list_tasks

    try:
        rows = list_tasks([suite] if suite else SUITES)
    except TetherError as exc:
        raise _fail(exc) from None
    table = Table(Column("task", no_wrap=True, min_width=max(len(t.id) for t in rows)), "#",
                  "instruction")
    for t in rows:
        table.add_row(t.id, str(t.index), t.language)
    out.print(table)


@app.command()
def doctor() -> None:
    """Check the installation: LIBERO imports without a prompt and its assets match the manifest."""
    from tether.scenes.assets import verify_assets
    from tether.scenes.libero_setup import import_libero

    try:
        import_libero()
        report = verify_assets()
    except TetherError as exc:
        raise _fail(exc) from None
    out.print(f"LIBERO imports without a prompt; assets: {report.summary()}")


@app.command()
def view(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (runs/<stamp>-...).")],
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; anything but 127.0.0.1 lets other "
                                           "machines read the run.")] = "127.0.0.1",
    live: Annotated[bool, typer.Option(help="Follow a run in progress.")] = False,
) -> None:
    """Replay a run in the browser: the tree coloured by status, timeline, blackboard, frames."""
    from tether.replay.viewer.server import LOOPBACK, server

    try:
        srv = server(run_dir, host=host, port=port, live=live)
    except TetherError as exc:
        raise _fail(exc) from None
    if host != LOOPBACK:
        err.print(f"[yellow]warning:[/] serving on {host}: anyone who can reach it can read this "
                  "run", markup=True)
    out.print(f"tether view: http://{host}:{port}/  (Ctrl-C to stop)")
    srv.run()


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (runs/<stamp>-...).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")],
) -> None:
    """Write one self-contained HTML file that replays the run with no server."""
    from tether.replay.viewer.page import export_html

    try:
        size = export_html(run_dir, output)
    except TetherError as exc:
        raise _fail(exc) from None
    out.print(f"wrote {output} ({size / 1e6:.1f} MB); open it in a browser")


@app.command()
def render(
    tree: Annotated[Path, typer.Argument(help="Tree file (YAML).")],
    output: Annotated[Path, typer.Option("--output", "-o",
                                         help="tree.svg, tree.png, tree.pdf or tree.dot")],
    with_: WithOpt = None,
) -> None:
    """Draw a tree file with graphviz (unbound parameters are shown as <name>)."""
    from tether.trees.render import render_tree

    try:
        render_tree(tree, output, given=_bindings(with_))
    except TetherError as exc:
        raise _fail(exc) from None
    out.print(f"wrote {output}")


def main() -> None:
    if sys.platform == "linux":  # headless by default: MuJoCo renders camera frames through EGL
        os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
