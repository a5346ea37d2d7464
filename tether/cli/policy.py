"""The policy verbs of the `tether` command: collect demonstrations, train, serve.

    tether collect TASK... --episodes N --out DIR       scripted-expert grasps as a LeRobotDataset
    tether train DATASET --out DIR [--steps N]          a small ACT from scratch (CPU), model card
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
    tasks: Annotated[list[str], typer.Argument(metavar="TASK...", help="LIBERO pick tasks "
                                               "(SUITE/TASK_NAME or SUITE/INDEX); episodes cycle "
                                               "through them.")],
    episodes: Annotated[int, typer.Option(min=1, help="Successful episodes to record.")] = 40,
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="New dataset folder.")] = Path(
        "data/grasp"),
    cameras: Annotated[list[str] | None, typer.Option(
        "--camera", help="wrist (LIBERO's image2) and/or agentview (image); repeatable. "
                         "Default: wrist.")] = None,
    size: Annotated[int, typer.Option(min=16, help="Image height and width (px).")] = 64,
    first_init_state: Annotated[int, typer.Option(help="Init state of the first episode of "
                                                       "each task.")] = 0,
    seed: Annotated[int, typer.Option(help="Seed of the staging offsets.")] = 0,
) -> None:
    """Record scripted-expert grasps from a jittered pre-grasp pose as a LeRobotDataset."""
    from dataclasses import replace

    from tether.datasets.collect import CAMERAS
    from tether.datasets.collect import collect as run_collect

    names = cameras or ["wrist"]
    bad = [c for c in names if c not in CAMERAS]
    if bad:
        raise TetherError(f"unknown camera '{bad[0]}'; choose from {', '.join(CAMERAS)}")
    specs = [replace(CAMERAS[c], size=(size, size)) for c in names]
    from tqdm import tqdm

    bar = tqdm(total=episodes, desc="episodes", unit="ep")

    def progress(done: int, attempts: int) -> None:
        bar.n = done
        bar.set_postfix(attempts=attempts)
        bar.refresh()

    try:
        report = run_collect(tasks, episodes=episodes, root=out_dir, cameras=specs,
                             first_init_state=first_init_state, seed=seed, progress=progress)
    finally:
        bar.close()
    out.print(f"recorded {report.episodes} episodes ({report.frames} frames, "
              f"{report.attempts} attempts) in {report.seconds:.0f} s to {report.root}")


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
    seed: Annotated[int, typer.Option(help="Torch seed.")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="Torch CPU threads.")] = 2,
) -> None:
    """Train a small ACT (no pretrained backbone) on CPU; save it with a model card."""
    from tqdm import tqdm

    from tether.models.train import TrainConfig
    from tether.models.train import train as run_train

    command = command_line(ctx)
    config = TrainConfig(dataset=dataset, out=out_dir, steps=steps, batch_size=batch_size, lr=lr,
                         chunk_size=chunk_size, n_action_steps=chunk_size, seed=seed,
                         threads=threads, command=command)
    bar = tqdm(total=steps, desc="training", unit="step")

    def progress(step: int, loss: float) -> None:
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}")

    try:
        report = run_train(config, progress=progress)
    finally:
        bar.close()
    out.print(f"trained {report.steps} steps in {report.seconds / 60:.1f} min; final loss "
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


def register(app: typer.Typer) -> None:
    """Add the policy verbs to the `tether` app."""
    app.command()(collect)
    app.command()(train)
    app.command("serve-policy")(serve_policy)
