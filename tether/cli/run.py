"""`tether run`: one episode of a tree file on a task, over `tether.session.run`.

    tether run TREE --task SUITE/TASK [--seed N] [--with KEY=VALUE]... [-p KIND[:k=v]]...
        [--policy NAME=SPEC]... [--policies FILE] [--device cpu|cuda|mps]   (policies to name)
        [--record-dataset DIR]                      (append the episode to a LeRobotDataset)
        [--verifier vlm --base-url URL --model NAME [--api-key KEY]]   (a VLM judges verify)
        [--diagnoser llm --base-url URL --model NAME [--api-key KEY]]  (an LLM diagnoses)

Exit code 0 when the task succeeded (its own goal test), 1 when it did not; 2 for a user error
and 130 when interrupted (both from the error boundary in `tether.cli.main`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import py_trees
import typer

from tether.cli.options import (
    ApiKey,
    BaseUrl,
    DeviceOpt,
    DiagnoserOpt,
    Model,
    PerceptionOpt,
    PerturbOpt,
    PoliciesOpt,
    PolicyOpt,
    RecordDatasetOpt,
    TaskOpt,
    Timeout,
    UntilGoalOpt,
    Verifier,
    VerifierBackend,
    WithOpt,
    bindings,
    chat_config,
    out,
    policies_from,
    services_for,
)

ENDED = {"tree": "finished", "budget": "budget spent", "goal": "stopped: the goal holds"}


def run(
    tree: Annotated[Path, typer.Argument(
        help="Tree file (YAML), e.g. trees/library/pick_place.yaml")],
    task: TaskOpt,
    seed: Annotated[int, typer.Option(help="Seed; also picks the init state (seed % 50) unless "
                                           "--init-state is given.")] = 0,
    init_state: Annotated[int | None, typer.Option(
        help="Which of the task's 50 init states.")] = None,
    with_: WithOpt = None,
    budget: Annotated[int | None, typer.Option(
        min=1, help="Step budget of the episode (default: the task's step cap, e.g. 300 for "
                    "libero_goal and its LIBERO-PRO sets; 1000 for tasks without one).")] = None,
    runs: Annotated[Path, typer.Option(
        help="Folder that receives the run directory.")] = Path("runs"),
    live: Annotated[bool | None, typer.Option(
        "--live/--lines", help="Redraw the tree each tick, or print a line per running leaf "
                               "(default: live on a terminal).")] = None,
    record_trace: Annotated[bool, typer.Option(
        "--record/--no-record", help="Write the run's trace (trace.jsonl, frames/) for "
                                     "`tether view`.")] = True,
    frame_every: Annotated[int, typer.Option(
        min=0, help="Save camera frames (agentview and wrist, 128 px) at every event and at "
                    "most N ticks apart; 0: no frames.")] = 20,
    memory: Annotated[str | None, typer.Option(
        metavar="PATH|fresh|none", help="Long-term memory store: a file (created when missing), "
        "'fresh' (a new store in the run directory) or 'none' (memory off). Default: "
        "RUNS/memory.db.")] = None,
    perturb: PerturbOpt = None,
    policy: PolicyOpt = None,
    policies: PoliciesOpt = None,
    device: DeviceOpt = None,
    record_dataset: RecordDatasetOpt = None,
    perception: PerceptionOpt = "privileged",
    until_goal: UntilGoalOpt = False,
    verifier: Verifier = "sim",
    verifier_backend: VerifierBackend = "openai",
    model: Model = "",
    base_url: BaseUrl = "http://localhost:8000/v1",
    api_key: ApiKey = None,
    timeout: Timeout = 60.0,
    diagnoser: DiagnoserOpt = "rules",
) -> None:
    """Run one episode of TREE on a LIBERO task and report the result.

    Exit code 0 when the task succeeded (its own goal test), 1 when it did not.
    """
    from dataclasses import replace

    from tether.cli.progress import LiveTree, TipLines
    from tether.datasets.rollouts import Rollout, append_episode, check_target
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig
    from tether.session.run import run as run_tree
    from tether.session.session import DEFAULT_FRAMES, SessionConfig

    use_live = out.is_terminal if live is None else live
    named = policies_from(policy, policies, device)
    rollout = Rollout() if record_dataset else None
    if record_dataset:
        check_target(record_dataset)

    def display(root: py_trees.behaviour.Behaviour, robot):
        return LiveTree(root, robot, out) if use_live else TipLines(robot, out)

    services = services_for(verifier, diagnoser, verifier_backend or "",
                            chat_config(model, base_url, api_key, timeout))
    try:
        record = run_tree(RunConfig(tree, SessionConfig(
            task=task, seed=seed, init_state=init_state, budget=budget, runs=runs,
            record=record_trace, frames=replace(DEFAULT_FRAMES, every=frame_every)
            if frame_every else FrameSettings(), memory=memory, perturb=tuple(perturb or ()),
            policies=named, perception=perception, until_goal=until_goal),
            given=bindings(with_)), services=services, display=display,
            observers=(rollout.start,) if rollout else ())
    finally:
        services.close()
    r = record.result
    if rollout and record_dataset:
        append_episode(record_dataset, rollout.frames, r.success)
    verdict = "[bold green]SUCCESS[/]" if r.success else "[bold red]FAILURE[/]"
    seen_by = "" if record.perception == "privileged" else f", {record.perception} perception"
    out.print(f"{verdict}  task {record.task} (init state {record.init_state}{seen_by})",
              markup=True)
    if record.perturbations:
        out.print(f"  perturbed by {', '.join(record.perturbations)}: \"{record.instruction}\"")
    out.print(f"  tree {r.tree_status} ({ENDED[r.ended_by]}),"
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
    if rollout:
        out.print(f"  dataset: {len(rollout.frames)} frames appended to {record_dataset}")
    raise typer.Exit(0 if r.success else 1)


def register(app: typer.Typer) -> None:
    """Add `run` to the tether app."""
    app.command()(run)
