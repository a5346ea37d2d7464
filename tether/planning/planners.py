"""Choosing a planner by name, and what it is asked from a scene.

`--backend` names the planner: `memory` (offline: remembered plans from a long-term store, else
grounding by ranking; `tether.planning.offline`) is registered in `PLANNERS`; any other name
is a chat backend of `tether.models.planners` (`openai`, `transformers`) behind the repair loop
(`tether.planning.llm`).

    planner = make_planner(PlannerOptions(backend="memory"), store)
    plan = planner.plan(request_for(instruction, scene, options))

`request_for` is what the planner sees of a scene (its facts and, for a chat backend, the
agentview image); `replanner_for` makes the `replan` node's service: the same planner asked
again from the scene as it is then, its plan compiled in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import py_trees

from tether.behaviours.services import Replanner
from tether.memory.store import ExperienceStore
from tether.models.planners import BackendConfig, get_backend
from tether.planning.compile import compile_plan, write_plan_tree
from tether.planning.grounding import GroundingConfig
from tether.planning.llm import LLMPlanner
from tether.planning.offline import MemoryPlanner
from tether.planning.plan import Plan
from tether.planning.request import Planner, PlanRequest
from tether.planning.safety import SafetyConfig
from tether.planning.skills import parts_of
from tether.registry import Registry
from tether.scenes.referring import SceneFacts

NO_MEMORY = "none"


@dataclass
class PlannerOptions:
    backend: str = "memory"
    config: BackendConfig = field(default_factory=BackendConfig)
    attempts: int = 3  # replies the repair loop allows
    images: bool = True  # send the agentview image to VLM backends


PlannerFactory = Callable[[PlannerOptions, ExperienceStore | None], Planner]
PLANNERS: Registry[PlannerFactory] = Registry("planner")


@PLANNERS.register("memory")
def memory_planner(options: PlannerOptions, store: ExperienceStore | None) -> Planner:
    """The offline planner, reading remembered plans from `store` (None: grounding only)."""
    return MemoryPlanner(store)


def llm_planner(options: PlannerOptions, store: ExperienceStore | None) -> Planner:
    """The chat backend `options.backend` behind the repair loop."""
    return LLMPlanner(get_backend(options.backend, options.config), attempts=options.attempts,
                      grounding=GroundingConfig())


def make_planner(options: PlannerOptions, store: ExperienceStore | None = None) -> Planner:
    """The planner `options.backend` names; `store` is the long-term memory it may read."""
    return PLANNERS.get(options.backend, llm_planner)(options, store)


def open_planner_store(spec: str | Path | None) -> ExperienceStore | None:
    """The store `--memory PATH|none` names for planning (None or `none`: no store)."""
    return None if spec is None or str(spec) == NO_MEMORY else ExperienceStore(spec)


def request_for(instruction: str, robot: Any, options: PlannerOptions, *, at_start: bool = False,
                **more: Any) -> PlanRequest:
    images = []
    if options.images and options.backend not in PLANNERS:
        frame = robot.render("agentview", (256, 256))
        images = [] if frame is None else [frame]
    return PlanRequest(instruction, SceneFacts.of(robot, at_start=at_start),
                       resolve=robot.resolve, images=images,
                       parts=parts_of(robot), **more)


def replanner_for(planner: Planner, options: PlannerOptions, safety: SafetyConfig | None,
                  first: Plan, keep: Callable[[], Path] | None = None) -> Replanner:
    """The `replanner` service of the `replan` node: plan again (the instruction grounded in the
    scene it was given in, `SceneFacts.of(at_start=True)`), and compile the plan in memory
    (without a `replan` of its own). With `keep`, the N-th replanned tree is also written as
    `keep()/replanN.yaml` for a person to read."""
    state = {"previous": first, "n": 0}

    def replan(context: dict[str, Any]) -> py_trees.behaviour.Behaviour:
        robot = context["robot"]
        errors = context.get("errors") or []
        failure = "; ".join(f"{e['code']} in '{e['node']}': {e['message']}" for e in errors[-3:])
        request = request_for(context["instruction"], robot, options, at_start=True,
                              events=context["events"],
                              failure=failure or "the plan did not finish",
                              previous=state["previous"])
        plan = planner.plan(request)
        state["previous"], state["n"] = plan, state["n"] + 1
        no_replan = SafetyConfig(**{**(safety or SafetyConfig()).__dict__})
        no_replan.replan.enabled = False  # the replan node itself bounds the attempts
        origin = f"replan {state['n']}"
        if keep is not None:
            path = write_plan_tree(plan, keep() / f"replan{state['n']}.yaml", no_replan)
            origin = str(path)
        return compile_plan(plan, robot.resolve, no_replan, origin=origin).root

    return replan
