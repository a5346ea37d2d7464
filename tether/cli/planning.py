"""`tether plan` and `tether do`: thin verbs over `tether.planning.do`.

    tether plan "INSTRUCTION" --task SUITE/TASK -o tree.yaml [--backend memory|openai|transformers]
    tether do "INSTRUCTION" --task SUITE/TASK [--seed N] [--backend ...] [--verifier vlm]
        [--diagnoser llm]
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from tether.errors import TetherError

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

Instruction = Annotated[str, typer.Argument(help="What to do, in words.")]
Task = Annotated[str, typer.Option("--task", "-t", metavar="SUITE/TASK",
                                   help="The task whose scene to plan in.")]
Backend = Annotated[str, typer.Option(help="memory (offline), openai (a chat-completions server "
                                           "such as vllm serve) or transformers (a local "
                                           "checkpoint).")]
Model = Annotated[str, typer.Option(help="openai: the served model name; transformers: a "
                                         "checkpoint directory.")]
BaseUrl = Annotated[str, typer.Option(help="openai: the server's /v1 URL.")]
Timeout = Annotated[float, typer.Option(help="openai: seconds per request.")]
Attempts = Annotated[int, typer.Option(help="Replies the repair loop allows.")]
MaxTokens = Annotated[int, typer.Option(help="Most tokens a planner reply may have.")]
Memory = Annotated[str | None, typer.Option(metavar="PATH|none",
                                            help="Long-term store (memory planner and do).")]
Safety = Annotated[Path | None, typer.Option(help="Safety rules YAML (docs/planner.md).")]
Verifier = Annotated[str, typer.Option(
    metavar="sim|vlm", help="Who judges the expected effects (`verify`/`monitor` nodes with "
    "verifier auto): sim (the sim's predicates) or vlm (a VLM asked about the agentview image, "
    "behind --verifier-backend with --base-url/--model/--timeout).")]
VerifierBackend = Annotated[str | None, typer.Option(
    metavar="openai|transformers", help="The VLM verifier's chat backend (default: --backend "
    "when it is one).")]

DiagnoserOpt = Annotated[str, typer.Option(
    "--diagnoser", metavar="rules|llm", help="Who diagnoses a failed episode for memory: rules "
    "(by error code) or llm (an LLM behind --verifier-backend with --base-url/--model/--timeout;"
    " an unusable reply falls back to the rules).")]


def chat_services(verifier: str, diagnoser: str, backend: str, model: str, base_url: str,
                  timeout: float):
    """The run's services for `--verifier` and `--diagnoser` (also used by `tether run`)."""
    from tether.models.planners import BackendConfig
    from tether.session.services import ServicesConfig, open_services

    return open_services(ServicesConfig(verifier=verifier, diagnoser=diagnoser, backend=backend,
                                        chat=BackendConfig(model=model, base_url=base_url,
                                                           timeout=timeout)))


def _options(backend: str, model: str, base_url: str, timeout: float, attempts: int,
             max_tokens: int):
    from tether.models.planners import BackendConfig
    from tether.planning.planners import PlannerOptions

    return PlannerOptions(backend=backend, attempts=attempts,
                          config=BackendConfig(model=model, base_url=base_url, timeout=timeout,
                                               max_tokens=max_tokens))


def _safety(path: Path | None):
    from tether.planning.safety import SafetyConfig

    return SafetyConfig.load(path) if path else None


def plan(instruction: Instruction, task: Task,
         output: Annotated[Path, typer.Option("--output", "-o", help="The tree file to write.")],
         backend: Backend = "memory", model: Model = "",
         base_url: BaseUrl = "http://localhost:8000/v1", timeout: Timeout = 60.0,
         attempts: Attempts = 3, max_tokens: MaxTokens = 1024, memory: Memory = None,
         safety: Safety = None,
         init_state: Annotated[int, typer.Option(help="Scene init state to plan in.")] = 0) -> None:
    """Plan INSTRUCTION in a task's scene and write the tree (`tether check` shows it)."""
    from tether.planning.do import PlanConfig, plan_instruction

    try:
        result = plan_instruction(PlanConfig(
            instruction, task, output, init_state=init_state, memory=memory,
            planner=_options(backend, model, base_url, timeout, attempts, max_tokens),
            safety=_safety(safety)))
    except TetherError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
    out.print(f"planned by {result.planner}: " + "; ".join(s.goal for s in result.subtasks))
    out.print(f"wrote {output}; check it with: tether check {output} --task {task}")


def do(instruction: Instruction, task: Task, backend: Backend = "memory", model: Model = "",
       base_url: BaseUrl = "http://localhost:8000/v1", timeout: Timeout = 60.0,
       attempts: Attempts = 3, max_tokens: MaxTokens = 1024, memory: Memory = None,
       safety: Safety = None, verifier: Verifier = "sim",
       verifier_backend: VerifierBackend = None, diagnoser: DiagnoserOpt = "rules",
       seed: Annotated[int, typer.Option(help="Seed (init state seed % 50).")] = 0,
       budget: Annotated[int, typer.Option(help="Step budget of the episode.")] = 1500,
       runs: Annotated[Path, typer.Option(help="Folder for the run directory.")] = Path("runs"),
       ) -> None:
    """Plan INSTRUCTION for a task and run the planned tree for one episode."""
    from tether.behaviours.services import NO_SERVICES
    from tether.planning.do import DoConfig, do_instruction
    from tether.session.session import SessionConfig

    services = NO_SERVICES
    try:
        services = chat_services(verifier, diagnoser, verifier_backend or backend, model,
                                 base_url, timeout)
        record, planned = do_instruction(DoConfig(
            instruction, SessionConfig(task=task, seed=seed, runs=runs, budget=budget,
                                       memory=memory),
            planner=_options(backend, model, base_url, timeout, attempts, max_tokens),
            safety=_safety(safety)), services=services)
    except TetherError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
    finally:
        services.close()
    r = record.result
    verdict = "[bold green]SUCCESS[/]" if r.success else "[bold red]FAILURE[/]"
    out.print(f"{verdict}  \"{instruction}\" on {record.task} (planned by {planned.planner}"
              + (f", verified by {services.verifier.name}" if services.verifier else "")
              + (f", diagnosed by {services.diagnoser.name}" if services.diagnoser else "")
              + f"), {r.steps} steps", markup=True)
    for e in r.errors[-3:]:
        out.print(f"  error {e['code']} at step {e['step']} in '{e['node']}': {e['message']}")
    out.print(f"  run files: {record.run_dir}/ (plan.json, tree.txt, trace.jsonl)")
    raise typer.Exit(0 if r.success else 1)


def register(app: typer.Typer) -> None:
    """Add the planning verbs to the `tether` app."""
    app.command()(plan)
    app.command()(do)
