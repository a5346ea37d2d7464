"""`tether plan` and `tether do`: thin verbs over `tether.planning.do`.

    tether plan "INSTRUCTION" --task SUITE/TASK -o tree.yaml [--backend memory|openai|transformers]
    tether do "INSTRUCTION" --task SUITE/TASK [--seed N] [--backend ...] [--verifier vlm]
        [--diagnoser llm] [--policy NAME=SPEC]... [--policies FILE] [--device cpu|cuda|mps]

The chat backends take `--model`, `--base-url`, `--api-key` (default: $OPENAI_API_KEY) and
`--timeout`; `do` exits like `tether run` (0 success, 1 the task failed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tether.cli.options import (
    ApiKey,
    BaseUrl,
    DeviceOpt,
    DiagnoserOpt,
    Model,
    PerceptionOpt,
    PoliciesOpt,
    PolicyOpt,
    Timeout,
    UntilGoalOpt,
    Verifier,
    VerifierBackend,
    chat_config,
    out,
    policies_from,
    services_for,
)

if TYPE_CHECKING:
    from tether.models.planners import BackendConfig
    from tether.planning.planners import PlannerOptions
    from tether.planning.safety import SafetyConfig

Instruction = Annotated[str, typer.Argument(help="What to do, in words.")]
Task = Annotated[str, typer.Option("--task", "-t", metavar="SUITE/TASK",
                                   help="The task whose scene to plan in.")]
Backend = Annotated[str, typer.Option(help="memory (offline), openai (a chat-completions server "
                                           "such as vllm serve) or transformers (a local "
                                           "checkpoint).")]
Attempts = Annotated[int, typer.Option(help="Replies the repair loop allows.")]
MaxTokens = Annotated[int, typer.Option(help="Most tokens a planner reply may have.")]
Memory = Annotated[str | None, typer.Option(metavar="PATH|none",
                                            help="Long-term store (memory planner and do).")]
Safety = Annotated[Path | None, typer.Option(help="Safety rules YAML (docs/planner.md).")]


def _options(backend: str, chat: BackendConfig, attempts: int) -> PlannerOptions:
    from tether.planning.planners import PlannerOptions

    return PlannerOptions(backend=backend, attempts=attempts, config=chat)


def _safety(path: Path | None) -> SafetyConfig | None:
    from tether.planning.safety import SafetyConfig

    return SafetyConfig.load(path) if path else None


def plan(instruction: Instruction, task: Task,
         output: Annotated[Path, typer.Option("--output", "-o", help="The tree file to write.")],
         backend: Backend = "memory", model: Model = "",
         base_url: BaseUrl = "http://localhost:8000/v1", api_key: ApiKey = None,
         timeout: Timeout = 60.0, attempts: Attempts = 3, max_tokens: MaxTokens = 1024,
         memory: Memory = None, safety: Safety = None,
         init_state: Annotated[int, typer.Option(help="Scene init state to plan in.")] = 0) -> None:
    """Plan INSTRUCTION in a task's scene and write the tree (`tether check` shows it)."""
    from tether.planning.do import PlanConfig, plan_instruction

    chat = chat_config(model, base_url, api_key, timeout, max_tokens)
    result = plan_instruction(PlanConfig(
        instruction, task, output, init_state=init_state, memory=memory,
        planner=_options(backend, chat, attempts), safety=_safety(safety)))
    out.print(f"planned by {result.planner}: " + "; ".join(s.goal for s in result.subtasks))
    out.print(f"wrote {output}; check it with: tether check {output} --task {task}")


def do(instruction: Instruction, task: Task, backend: Backend = "memory", model: Model = "",
       base_url: BaseUrl = "http://localhost:8000/v1", api_key: ApiKey = None,
       timeout: Timeout = 60.0, attempts: Attempts = 3, max_tokens: MaxTokens = 1024,
       memory: Memory = None, safety: Safety = None, verifier: Verifier = "sim",
       verifier_backend: VerifierBackend = None, diagnoser: DiagnoserOpt = "rules",
       seed: Annotated[int, typer.Option(help="Seed (init state seed % 50).")] = 0,
       budget: Annotated[int, typer.Option(help="Step budget of the episode.")] = 1500,
       runs: Annotated[Path, typer.Option(help="Folder for the run directory.")] = Path("runs"),
       policy: PolicyOpt = None, policies: PoliciesOpt = None, device: DeviceOpt = None,
       perception: PerceptionOpt = "privileged", until_goal: UntilGoalOpt = False,
       ) -> None:
    """Plan INSTRUCTION for a task and run the planned tree for one episode."""
    from tether.planning.do import DoConfig, do_instruction
    from tether.session.session import SessionConfig

    named = policies_from(policy, policies, device)
    chat = chat_config(model, base_url, api_key, timeout, max_tokens)
    services = services_for(verifier, diagnoser, verifier_backend or backend, chat)
    try:
        record, planned = do_instruction(DoConfig(
            instruction, SessionConfig(task=task, seed=seed, runs=runs, budget=budget,
                                       memory=memory, policies=named, perception=perception,
                                       until_goal=until_goal),
            planner=_options(backend, chat, attempts), safety=_safety(safety)),
            services=services)
    finally:
        services.close()
    r = record.result
    verdict = "[bold green]SUCCESS[/]" if r.success else "[bold red]FAILURE[/]"
    out.print(f"{verdict}  \"{instruction}\" on {record.task} (planned by {planned.planner}"
              + (f", verified by {services.verifier.name}" if services.verifier else "")
              + (f", diagnosed by {services.diagnoser.name}" if services.diagnoser else "")
              + f", {record.perception} perception), {r.steps} steps", markup=True)
    for e in r.errors[-3:]:
        out.print(f"  error {e['code']} at step {e['step']} in '{e['node']}': {e['message']}")
    out.print(f"  run files: {record.run_dir}/ (plan.json, tree.txt, trace.jsonl)")
    raise typer.Exit(0 if r.success else 1)


def register(app: typer.Typer) -> None:
    """Add the planning verbs to the `tether` app."""
    app.command()(plan)
    app.command()(do)
