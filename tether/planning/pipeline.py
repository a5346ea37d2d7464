"""`tether plan` and `tether do`: plan an instruction for a task's scene, write it, run it.

    plan = plan_instruction("put the bowl on the plate", "libero_goal/8", "plan.yaml")
    record = do_instruction("put the bowl on the plate", "libero_goal/8")

The planner is chosen by name (`PLANNERS`): `memory` (offline: remembered plans, else the
instruction parser) or a chat backend of `tether.models.planners` (`openai`, `transformers`) behind
the repair loop. The plan is written as a tree file with the safety rules' recoveries
(`tether.planning.compile`), so `tether check` shows it and a person can edit it. `do` runs that
tree with a `replanner` for its `replan` node (the same planner, asked again with the failure
and the scene as it is then); a successful episode's plan is kept with its memory entry, which
is what the memory planner retrieves next time.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import py_trees

from tether.memory.experience import SUCCESSES
from tether.memory.store import ExperienceStore
from tether.models.planners import BackendConfig, get_backend
from tether.scenes.catalogue import get_task
from tether.errors import TetherError, did_you_mean
from tether.scenes.referring import SceneFacts
from tether.planning.compile import compile_plan, write_plan_tree
from tether.planning.llm import LLMPlanner
from tether.planning.offline import PLAN_KEY, MemoryPlanner
from tether.planning.plan import Plan
from tether.planning.request import Planner, PlanRequest
from tether.planning.safety import SafetyConfig


@dataclass
class PlannerOptions:
    backend: str = "memory"
    config: BackendConfig = field(default_factory=BackendConfig)
    attempts: int = 3  # replies the repair loop allows
    memory: str | Path | None = None  # the store the memory planner reads (None: none)
    images: bool = True  # send the agentview image to VLM backends


def _memory(options: PlannerOptions) -> Planner:
    store = ExperienceStore(options.memory) if options.memory and str(options.memory) != "none" \
        else None
    return MemoryPlanner(store)


PLANNERS: dict[str, Callable[[PlannerOptions], Planner]] = {"memory": _memory}
VERIFIERS = ("sim", "vlm")  # `--verifier`: who judges `verify`/`monitor` nodes set to `auto`


def verifier_services(choice: str, backend: str, config: BackendConfig) -> dict[str, Any]:
    """The run's `verifier` service for `--verifier`: none for `sim` (the nodes evaluate the
    sim's predicates), a `VLMVerifier` asking a VLM behind the chat backend `backend` for `vlm`."""
    from tether.behaviours.verifier import VLMVerifier
    from tether.models.vlm_judge import VLMJudge

    if choice not in VERIFIERS:
        raise TetherError(f"unknown verifier '{choice}'{did_you_mean(choice, VERIFIERS)}; "
                          f"verifiers: {', '.join(VERIFIERS)}")
    if choice == "sim":
        return {}
    if backend in PLANNERS:
        raise TetherError(f"--verifier vlm needs a chat backend (openai, transformers) to ask; "
                          f"'{backend}' is not one (give --verifier-backend)")
    return {"verifier": VLMVerifier(VLMJudge(get_backend(backend, config)))}


def close_services(services: dict[str, Any]) -> None:
    for service in services.values():
        if hasattr(service, "close"):
            service.close()


def make_planner(options: PlannerOptions) -> Planner:
    if options.backend in PLANNERS:
        return PLANNERS[options.backend](options)
    return LLMPlanner(get_backend(options.backend, options.config), attempts=options.attempts)


def request_for(instruction: str, robot: Any, options: PlannerOptions, **more: Any) -> PlanRequest:
    images = []
    if options.images and options.backend not in PLANNERS:
        frame = robot.render("agentview", (256, 256))
        images = [] if frame is None else [frame]
    return PlanRequest(instruction, SceneFacts.of(robot), resolve=robot.resolve, images=images,
                       **more)


def plan_instruction(instruction: str, task: str, output: Path | str, *,
                     options: PlannerOptions | None = None, safety: SafetyConfig | None = None,
                     init_state: int = 0, seed: int = 0) -> Plan:
    """Plan `instruction` in the task's scene (at `init_state`) and write the tree to `output`."""
    from tether.scenes.libero_scene import LiberoScene

    options = options or PlannerOptions()
    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(get_task(task), init_state=init_state, seed=seed)
    try:
        plan = make_planner(options).plan(request_for(instruction, scene, options))
        write_plan_tree(plan, output, safety)
    finally:
        scene.close()
    return plan


def replanner_for(planner: Planner, options: PlannerOptions, workdir: Path,
                  safety: SafetyConfig | None, first: Plan) -> Callable[[dict], Any]:
    """The `replanner` service of the `replan` node: plan again from the scene as it is."""
    state = {"previous": first, "n": 0}

    def replan(context: dict[str, Any]) -> py_trees.behaviour.Behaviour:
        robot = context["robot"]
        errors = context.get("errors") or []
        failure = "; ".join(f"{e['code']} in '{e['node']}': {e['message']}" for e in errors[-3:])
        request = request_for(context["instruction"], robot, options, events=context["events"],
                              failure=failure or "the plan did not finish",
                              previous=state["previous"])
        plan = planner.plan(request)
        state["previous"], state["n"] = plan, state["n"] + 1
        no_replan = SafetyConfig(**{**(safety or SafetyConfig()).__dict__})
        no_replan.replan.enabled = False  # the replan node itself bounds the attempts
        return compile_plan(plan, workdir / f"replan{state['n']}.yaml", robot.resolve,
                            no_replan).root

    return replan


def do_instruction(instruction: str, task: str, *, options: PlannerOptions | None = None,
                   safety: SafetyConfig | None = None, seed: int = 0,
                   init_state: int | None = None, runs: Path | str = "runs", budget: int = 1500,
                   memory: str | None = None, record: bool = True, plan: Plan | None = None,
                   services: dict[str, Any] | None = None, **run_kwargs: Any):
    """Plan, then run the planned tree for one episode (`tether.session.run.run`); returns its
    `RunRecord` and the plan. The tree file is kept as `RUNS/plans/...yaml`. `plan`: one made
    already in this task's scene at this init state (it is then only written and run);
    `services`: more for the run's nodes (a `verifier`, see `verifier_services`)."""
    from tether.session.run import run

    options = options or PlannerOptions(memory=memory)
    index = seed % 50 if init_state is None else init_state
    plans = Path(runs) / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    slug = "-".join(instruction.lower().split())[:60].replace("/", "_")
    tree = plans / f"{slug}-s{seed}.yaml"
    if plan is None:
        plan = plan_instruction(instruction, task, tree, options=options, safety=safety,
                                init_state=index, seed=seed)
    else:
        write_plan_tree(plan, tree, safety)
    planner = make_planner(options)
    services = {**(services or {}),
                "replanner": replanner_for(planner, options, plans, safety, plan)}
    result = run(tree, task, seed=seed, init_state=index, runs=runs, budget=budget,
                 memory=memory, record=record, services=services, **run_kwargs)
    (Path(result.run_dir) / "plan.json").write_text(json.dumps(plan.to_json(), indent=2) + "\n",
                                                    encoding="utf-8")
    if result.memory and result.memory.get("partition") == SUCCESSES:
        with ExperienceStore(result.memory["store"]) as store:
            store.modify(result.memory["id"],
                         lambda e: e.metadata.__setitem__(PLAN_KEY, plan.to_json()))
    return result, plan
