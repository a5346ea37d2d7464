"""The policy verbs of the `tether` command: collect demonstrations, train, serve.

    tether collect TASK... --episodes N --out DIR       scripted-expert grasps as a LeRobotDataset
    tether collect TASK... --tree TREE --out DIR        whole-task demonstrations (resumable)
    tether merge-demos OUT PART...                      demonstrations recorded in parts, as one
    tether train DATASET --out DIR [--steps N] [--resume]  a small ACT from scratch (CPU), card
    tether serve-policy POLICY [--port N] [--device D]   a policy over openpi's websocket protocol

Each parses arguments and calls the library function in `models/` that tests call too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.cli.options import (
    DeviceOpt,
    PoliciesOpt,
    PolicyOpt,
    command_line,
    out,
    policies_from,
)
from tether.errors import TetherError


def collect(
    tasks: Annotated[list[str], typer.Argument(metavar="TASK...", help="LIBERO tasks "
                                               "(SUITE/TASK_NAME or SUITE/INDEX; with --tree also "
                                               "a whole SUITE); episodes cycle through them.")],
    tree: Annotated[str | None, typer.Option(
        help="Record whole-task demonstrations instead: this tree (a library name such as "
             "pick_place, a file, or reference: each task's reference solution, the library "
             "trees the planner picks for its goal) run from the start pose, successful "
             "episodes only; rerunning resumes.")] = None,
    episodes: Annotated[int | None, typer.Option(
        min=1, help="Successful staged grasps to record (default 40; not with --tree).")] = None,
    init_states: Annotated[int | None, typer.Option(
        min=1, help="With --tree: init states per task, from --first-init-state (default 40)."
    )] = None,
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder (new; with "
                                                             "--tree also one to resume).")] = Path(
        "data/grasp"),
    cameras: Annotated[list[str] | None, typer.Option(
        "--camera", help="wrist (LIBERO's image2) and/or agentview (image); repeatable. "
                         "Default: wrist; with --tree both.")] = None,
    size: Annotated[int, typer.Option(min=16, help="Image height and width (px).")] = 64,
    draft: Annotated[bool, typer.Option(
        help="Draw the images as drafts (no multisampling, no reflections: about 3x cheaper on "
             "a CPU); a policy trained on them is fed drafts too.")] = False,
    first_init_state: Annotated[int, typer.Option(help="Init state of the first episode of "
                                                       "each task.")] = 0,
    language: Annotated[str | None, typer.Option(
        help="With --tree: the embedder whose embedding of the instruction is recorded as "
             "observation.environment_state (default minilm), or none.")] = None,
    budget: Annotated[int | None, typer.Option(
        min=1, help="With --tree: step budget per episode (default: the task's step cap).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the staging offsets / the episodes.")] = 0,
) -> None:
    """Record demonstrations as a LeRobotDataset: scripted-expert grasps from a jittered
    pre-grasp pose, or (--tree) whole tasks from the start pose through an expert tree."""
    from dataclasses import replace

    from tether.datasets.collect import CAMERAS

    names = cameras or (["agentview", "wrist"] if tree else ["wrist"])
    bad = [c for c in names if c not in CAMERAS]
    if bad:
        raise TetherError(f"unknown camera '{bad[0]}'; choose from {', '.join(CAMERAS)}")
    specs = [replace(CAMERAS[c], size=(size, size), draft=draft) for c in names]
    if tree is not None:
        if episodes is not None:
            raise TetherError("--episodes counts staged grasps; with --tree give --init-states "
                              "(every init state is attempted once, the successes kept)")
        language = language or "minilm"
        collect_demos(tasks, tree, out_dir, specs, init_states or 40, first_init_state,
                      None if language == "none" else language, budget, seed)
        return
    given = [f"--{name}" for name, value in (("init-states", init_states),
                                            ("language", language), ("budget", budget))
             if value is not None]
    if given:
        raise TetherError(f"{given[0]} applies to whole-task demonstrations; give --tree TREE "
                          "too")
    from tether.datasets.collect import collect as run_collect

    total = episodes or 40
    from tqdm import tqdm

    bar = tqdm(total=total, desc="episodes", unit="ep")

    def progress(done: int, attempts: int) -> None:
        bar.n = done
        bar.set_postfix(attempts=attempts)
        bar.refresh()

    try:
        report = run_collect(tasks, episodes=total, root=out_dir, cameras=specs,
                             first_init_state=first_init_state, seed=seed, progress=progress)
    finally:
        bar.close()
    out.print(f"recorded {report.episodes} episodes ({report.frames} frames, "
              f"{report.attempts} attempts) in {report.seconds:.0f} s to {report.root}")


def collect_demos(tasks: list[str], tree: str, root: Path, cameras: list, init_states: int,
                  first_init_state: int, language: str | None, budget: int | None,
                  seed: int) -> None:
    """`tether collect --tree`: whole-task demonstrations, one line per attempt."""
    from tether.datasets.demos import DemoConfig, tree_file
    from tether.datasets.demos import collect_demos as run_demos

    config = DemoConfig(tasks=tasks, root=root, tree=tree_file(tree),
                        init_states=init_states, first_init_state=first_init_state,
                        cameras=tuple(cameras), language=language, budget=budget, seed=seed)

    def progress(attempt, done: int, total: int) -> None:
        outcome = f"kept as episode {attempt.episode}" if attempt.success else "failed, dropped"
        out.print(f"[{done}/{total}] {attempt.task} #{attempt.init_state}: {attempt.steps} "
                  f"steps, {attempt.seconds:.0f} s, {outcome}")

    report = run_demos(config, progress=progress)
    kept = sum(a.success for a in report.attempts)
    out.print(f"{kept} of {len(report.attempts)} attempts kept ({report.skipped} made before "
              f"were skipped) in {report.seconds:.0f} s; {report.root} holds "
              f"{report.episodes} episodes, {report.frames} frames")


def train(
    ctx: typer.Context,
    dataset: Annotated[Path, typer.Argument(help="A LeRobotDataset folder (from `tether "
                                                 "collect`).")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Checkpoint folder to write.")],
    steps: Annotated[int, typer.Option(min=1, help="Optimisation steps.")] = 2000,
    batch_size: Annotated[int, typer.Option(min=1, help="Batch size.")] = 32,
    lr: Annotated[float, typer.Option(help="Learning rate (backbone too: it is trained from "
                                           "scratch).")] = 1e-4,
    chunk_size: Annotated[int, typer.Option(min=1, help="Actions predicted per chunk.")] = 10,
    n_action_steps: Annotated[int | None, typer.Option(
        min=1, help="Actions of each chunk run before the policy is called again, when "
                    "deployed (lerobot's n_action_steps; default: the chunk size). Not trained: "
                    "it may change on --resume.")] = None,
    seed: Annotated[int, typer.Option(help="Torch seed.")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="Torch CPU threads.")] = 2,
    save_every: Annotated[int, typer.Option(min=1, help="Steps between saves of the checkpoint "
                                                        "and the training state.")] = 100,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out from its last save "
                                              "(up to --steps in all).")] = False,
    backbone: Annotated[Path | None, typer.Option(
        help="A checkpoint (from `tether train`) whose vision backbone the new policy takes, "
             "frozen: each frame's features are computed once and only the rest trains, a "
             "fraction of a step's cost.")] = None,
) -> None:
    """Train a small ACT (no pretrained backbone) on CPU; save it with a model card. A dataset
    recorded with a language feature trains a language-conditioned policy."""
    from tqdm import tqdm

    from tether.models.train import TrainConfig
    from tether.models.train import train as run_train

    command = command_line(ctx)
    config = TrainConfig(dataset=dataset, out=out_dir, steps=steps, batch_size=batch_size, lr=lr,
                         chunk_size=chunk_size, n_action_steps=n_action_steps or chunk_size,
                         seed=seed, threads=threads, save_every=save_every, resume=resume,
                         backbone=backbone, command=command)
    bar = tqdm(total=steps, desc="training", unit="step")

    def progress(step: int, loss: float) -> None:
        bar.update(step - bar.n)
        bar.set_postfix(loss=f"{loss:.3f}")

    try:
        report = run_train(config, progress=progress)
    finally:
        bar.close()
    out.print(f"trained to step {report.steps} (from {report.resumed_from}) in "
              f"{report.seconds / 60:.1f} min in all; last loss "
              f"{report.loss[-1][1]:.3f}; {report.size_mb:.1f} MB in {report.out} (model card: "
              "README.md)")


def serve_policy(
    policy_spec: Annotated[str, typer.Argument(
        metavar="POLICY", help="What to serve: a SPEC (a lerobot checkpoint folder, an openpi "
        "server ws://HOST:PORT, a hub id) or a name from --policy/--policies.")],
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    policy: PolicyOpt = None,
    policies: PoliciesOpt = None,
    device: DeviceOpt = None,
) -> None:
    """Serve a policy over openpi's websocket protocol (what openpi clients and tether's
    `openpi` policies talk to)."""
    from tether.models.policies import spec_entry
    from tether.models.policy import PolicyConfig
    from tether.models.serve import PolicyServer

    named = policies_from(policy, policies, device)
    entry = named.get(policy_spec) or spec_entry(policy_spec, device=device,
                                                 where="serve-policy: ")
    if not isinstance(entry, PolicyConfig) or not entry.servable:
        raise TetherError(f"serve-policy: {policy_spec} reads the simulator; only a learned "
                          "policy (lerobot, openpi) can be served")
    server = PolicyServer(entry.build(None), host=host, port=port,  # type: ignore[arg-type]
                          metadata={"policy": policy_spec, "server": "tether serve-policy"})
    out.print(f"serving {policy_spec} on ws://{host}:{port} (health: "
              f"http://{host}:{port}/healthz)")
    server.serve_forever()


def merge_demos(
    out_dir: Annotated[Path, typer.Argument(metavar="OUT", help="The merged dataset (a new "
                                                                "folder).")],
    parts: Annotated[list[Path], typer.Argument(metavar="PART...", help="Datasets recorded by "
                                                "`tether collect --tree` with one recipe.")],
) -> None:
    """Merge whole-task demonstrations recorded in parts (e.g. two `tether collect --tree`
    processes from --first-init-state 0 and 20) into one dataset that trains and resumes."""
    from tether.datasets.demos import merge_demos as run_merge

    episodes = run_merge(out_dir, parts)
    out.print(f"{out_dir} holds the {episodes} episodes of {len(parts)} parts")


def register(app: typer.Typer) -> None:
    """Add the policy verbs to the `tether` app."""
    app.command()(collect)
    app.command("merge-demos")(merge_demos)
    app.command()(train)
    app.command("serve-policy")(serve_policy)
