"""`tether plan` and `tether do`: plan an instruction in a task's scene; plan it and run it.

    plan = plan_instruction(PlanConfig("put the bowl on the plate", "libero_goal/8",
                                       Path("plan.yaml")))
    record, plan = do_instruction(DoConfig("put the bowl on the plate",
                                           SessionConfig(task="libero_goal/8",
                                                         budget=DO_BUDGET)))

The planner is chosen by name (`tether.planning.planners`). `plan` writes the planned tree with
the safety rules' recoveries (`tether.planning.compile`), so `tether check` shows it and a
person can edit it. `do` is one session (`tether.session.session`): it opens the scene the
episode runs in (perturbed as asked, so the planner sees the perturbed instruction and
layout) and its memory store once, plans there, keeps the tree as `RUNS/plans/...yaml`,
compiles the plan in memory and runs it with a `replanner` for its `replan` node (the same
planner, asked again with the failure and the scene as it is then). A successful episode's plan
is kept with its memory entry, which is what the memory planner retrieves next time.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.behaviours.services import NO_SERVICES, Services
from tether.memory.experience import SUCCESSES
from tether.planning.compile import compile_plan, write_plan_tree
from tether.planning.offline import PLAN_KEY
from tether.planning.plan import Plan
from tether.planning.planners import (
    PlannerOptions,
    make_planner,
    open_planner_store,
    replanner_for,
    request_for,
)
from tether.planning.safety import SafetyConfig
from tether.scenes.catalogue import get_task
from tether.scenes.perturbations import perturbed_instruction
from tether.session.session import Display, RunRecord, Session, SessionConfig
from tether.trees.source import display_path

if TYPE_CHECKING:
    from tether.scenes.scene_cache import SceneCache

DO_BUDGET = 1500  # `tether do`'s step budget (a planned tree adds checks and recoveries)


@dataclass
class PlanConfig:
    """`tether plan`: an instruction planned in a task's scene, written as a tree file."""

    instruction: str
    task: str
    output: Path
    init_state: int = 0
    seed: int = 0
    planner: PlannerOptions = field(default_factory=PlannerOptions)
    memory: str | Path | None = None  # the store the memory planner reads (None, none: none)
    safety: SafetyConfig | None = None


def plan_instruction(config: PlanConfig) -> Plan:
    """Plan in the task's scene (at `init_state`) and write the tree to `config.output`."""
    from tether.scenes.libero_scene import LiberoScene

    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(get_task(config.task), init_state=config.init_state,
                            seed=config.seed)
    store = None
    try:
        store = open_planner_store(config.memory)
        planner = make_planner(config.planner, store)
        plan = planner.plan(request_for(config.instruction, scene, config.planner))
        write_plan_tree(plan, config.output, config.safety)
    finally:
        if store is not None:
            store.close()
        scene.close()
    return plan


@dataclass
class DoConfig:
    """`tether do`: an instruction planned and run in one episode's scene."""

    instruction: str
    session: SessionConfig
    planner: PlannerOptions = field(default_factory=PlannerOptions)
    safety: SafetyConfig | None = None
    plan: Plan | None = None  # one made already for this scene: then only kept, compiled, run
    grasp: dict[str, Any] | None = None  # the plan's grasps by a policy: `vla_grasp`'s params


def do_instruction(config: DoConfig, *, services: Services = NO_SERVICES,
                   scenes: SceneCache | None = None,
                   observers: tuple[Display, ...] = ()) -> tuple[RunRecord, Plan]:
    """Plan and run one episode (see the module docstring); the run's `RunRecord` and the plan.

    `services` are the run's verifier and diagnoser (`tether.session.services`); `do` adds the
    replanner. The memory planner reads the session's store when `memory` was given (without
    it, the run still consolidates into `RUNS/memory.db`, and the planner reads no store).
    `scenes` lends the scene (`tether.session.session.Session`; `tether bench` workers) and
    `observers` watch the episode (`tether.session.run.run`)."""
    cfg = config.session
    plans = cfg.runs / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    slug = "-".join(config.instruction.lower().split())[:60].replace("/", "_")
    tree = plans / f"{slug}-s{cfg.seed}.yaml"
    session = Session(cfg, name=tree.stem, scenes=scenes, observers=observers)
    with session:
        scene = session.scene
        planner = make_planner(config.planner, None if cfg.memory is None else session.store)
        plan = config.plan
        if plan is None:
            instruction = perturbed_instruction(scene, config.instruction)
            plan = planner.plan(request_for(instruction, session.robot, config.planner))
        if config.grasp is not None:
            plan = plan.grasping_with(config.grasp)
        write_plan_tree(plan, tree, config.safety)
        compiled = compile_plan(plan, scene.resolve, config.safety, origin=display_path(tree))
        session.services = replace(services, replanner=replanner_for(
            planner, config.planner, config.safety, plan, keep=lambda: session.run_dir))
        record = session.run(compiled, tree=str(tree))
        (Path(record.run_dir) / "plan.json").write_text(
            json.dumps(plan.to_json(), indent=2) + "\n", encoding="utf-8")
        if record.memory and record.memory.get("partition") == SUCCESSES:
            session.store.modify(record.memory["id"],  # type: ignore[union-attr]
                                 lambda e: e.metadata.__setitem__(PLAN_KEY, plan.to_json()))
    return record, plan
