"""Safety rules: how the plan compiler wraps what a plan says in tether's recovery structure.

A plan says what to do; the rules add what to do when it goes wrong, so every planned tree has
the same checked recoveries whoever planned it. Rules are registered by name (`RULES`) and
configured by `SafetyConfig` (a dataclass, loadable from YAML with `SafetyConfig.load`): each rule
can be switched off or tuned. Applied per step, innermost first, then per sub-task and per plan:

    grasp   `subtree: grasp` -> retry `attempts` x [grasp, verify: held or (release and fail)]
            (held: both fingers touch the object, or the lifted hand has it within the carry
            rule's `reach`, as a mug hanging by its handle from the fingertips; an empty grasp
            is re-localised and re-staged by retrying from the approach pose, which tracks the
            object where it now is)
    vla     `vla` -> retry `attempts` x [re-stage above the object (or lift), vla]
    carry   `move_to` carrying an object -> monitor every `every` steps that the object stays
            within `reach` of the gripper (a slipped object preempts the carry: PREEMPTED)
    stuck   any acting step -> selector [step, (error_is STUCK, lift `lift` m, step again)]
    unseen  any acting step -> selector [step, (error_is OBJECT_NOT_FOUND, localize from the
            start pose, step again)]: under camera perception, an object not seen is looked
            for again from where the arm is out of the camera's way, never guessed
    budget  each sub-task -> timeout `steps` [steps..., verify expected effects, remember
            (an event boundary)]; `verify` with `verifier: auto`: the sim's predicates, or
            the run's VLM verifier when it has one (`tether do --verifier vlm`)
    done    each sub-task -> selector [check its expected effects, the sub-task]: a sub-task
            whose effects already hold is skipped (after a replan, the finished ones)
    replan  the plan -> selector [sub-tasks, replan `attempts`]

A rule whose node type is not registered (e.g. `vla` before the VLA leaf exists) never matches.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from tether.errors import TetherError, did_you_mean
from tether.trees.nodes import NODE_TYPES, SUBTREE

Node = dict[str, Any]


@dataclass
class GraspRule:
    enabled: bool = True
    attempts: int = 2


@dataclass
class VlaRule:
    enabled: bool = True
    attempts: int = 2
    restage: float = 0.08  # height above the object of the re-staging pose (m)


@dataclass
class CarryRule:
    enabled: bool = True
    every: int = 5  # control steps between checks
    reach: float = 0.03  # farthest the carried object's bounding box may be from the gripper (m)


@dataclass
class StuckRule:
    enabled: bool = True
    lift: float = 0.05


@dataclass
class UnseenRule:
    enabled: bool = True


@dataclass
class BudgetRule:
    enabled: bool = True
    steps: int = 700  # control steps per sub-task


@dataclass
class DoneRule:
    enabled: bool = True


@dataclass
class ReplanRule:
    enabled: bool = True
    attempts: int = 1


@dataclass
class SafetyConfig:
    """Which rules apply and their settings (docs/planner.md, "Safety rules")."""

    grasp: GraspRule = field(default_factory=GraspRule)
    vla: VlaRule = field(default_factory=VlaRule)
    carry: CarryRule = field(default_factory=CarryRule)
    stuck: StuckRule = field(default_factory=StuckRule)
    unseen: UnseenRule = field(default_factory=UnseenRule)
    budget: BudgetRule = field(default_factory=BudgetRule)
    done: DoneRule = field(default_factory=DoneRule)
    replan: ReplanRule = field(default_factory=ReplanRule)

    @classmethod
    def load(cls, path: Path | str) -> SafetyConfig:
        """Settings from a YAML file `{rule: {enabled: bool, setting: value}}`."""
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        config = cls()
        for name, values in data.items():
            if name not in RULE_NAMES:
                raise TetherError(f"{path}: unknown safety rule '{name}'"
                                  + did_you_mean(name, RULE_NAMES))
            rule = getattr(config, name)
            known = {f.name for f in fields(rule)}
            for key, value in (values or {}).items():
                if key not in known:
                    raise TetherError(f"{path}: {name}: unknown setting '{key}'"
                                      + did_you_mean(key, known))
                setattr(rule, key, value)
        return config


RULE_NAMES = tuple(f.name for f in fields(SafetyConfig))


def node_type(node: Node) -> str:
    return next((k for k in node if k in NODE_TYPES or k == SUBTREE), "")


def _grasp(node: Node, cfg: SafetyConfig) -> Node:
    if node.get(SUBTREE) != "grasp" or not cfg.grasp.enabled:
        return node
    obj = node.get("with", {}).get("object")
    held = {"check": {"predicate": "within_reach", "object": obj, "target": "gripper",
                      "distance": cfg.carry.reach, "error": "EMPTY_GRASP"}}
    return {"retry": {"name": f"verified grasp of {obj}", "n": cfg.grasp.attempts, "child": {
        "sequence": [node, {"selector": {"name": "verify grasp", "children": [
            {"check": {"predicate": "grasped", "object": obj}}, held,
            {"name": "empty grasp: let go and re-stage",
             "force_failure": {"release": 0.08}}]}}]}}}


def _vla(node: Node, cfg: SafetyConfig) -> Node:
    if node_type(node) != "vla" or "vla" not in NODE_TYPES or not cfg.vla.enabled:
        return node
    body = node["vla"]
    obj = body.get("object") if isinstance(body, dict) else None
    restage = ({"name": f"re-stage above {obj}",
                "move_to": {"object": obj, "at": "grasp", "offset": [0, 0, cfg.vla.restage]}}
               if isinstance(obj, str) else
               {"name": "re-stage", "move_to": {"target": {"relative": [0, 0, cfg.vla.restage]}}})
    return {"retry": {"name": "re-staged vla", "n": cfg.vla.attempts,
                      "child": {"sequence": [restage, node]}}}


def _carried(node: Node) -> Any:
    body = node.get("move_to")
    if not isinstance(body, dict):
        return None
    target = body.get("target")
    return body.get("carrying") or (target.get("carrying") if isinstance(target, dict) else None)


def _carry(node: Node, cfg: SafetyConfig) -> Node:
    obj = _carried(node)
    if not cfg.carry.enabled or not isinstance(obj, str) or "monitor" not in NODE_TYPES:
        return node
    return {"monitor": {"name": f"{obj} stays in the gripper", "predicate": "within_reach",
                        "object": obj, "target": "gripper", "distance": cfg.carry.reach,
                        "every": cfg.carry.every, "verifier": "sim", "child": node}}


NO_MOTION = {"check", "verify", "set", "retrieve", "remember", "error_is", "wait", "replan"}


def _stuck(node: Node, cfg: SafetyConfig) -> Node:
    if not cfg.stuck.enabled or node_type(node) in NO_MOTION:
        return node
    again = copy.deepcopy(node)
    return {"selector": {"name": "lift and resume when stuck", "children": [node, {"sequence": [
        {"error_is": "STUCK"},
        {"name": "lift", "move_to": {"target": {"relative": [0, 0, cfg.stuck.lift]},
                                     "max_steps": 60}},
        again]}]}}


def _unseen(node: Node, cfg: SafetyConfig) -> Node:
    if not cfg.unseen.enabled or node_type(node) in NO_MOTION:
        return node
    again = copy.deepcopy(node)
    return {"selector": {"name": "look again when not seen", "children": [node, {"sequence": [
        {"error_is": "OBJECT_NOT_FOUND"}, {"localize": {"vantage": "start"}}, again]}]}}


STEP_RULES: dict[str, Callable[[Node, SafetyConfig], Node]] = {  # applied innermost first
    "vla": _vla, "grasp": _grasp, "carry": _carry, "stuck": _stuck, "unseen": _unseen}
RULES = (*STEP_RULES, "budget", "done", "replan")


def wrap_step(node: Node, cfg: SafetyConfig) -> Node:
    for rule in STEP_RULES.values():
        node = rule(node, cfg)
    return node


def wrap_subtask(index: int, goal: str, steps: list[Node], expect: list[dict],
                 cfg: SafetyConfig) -> Node:
    children = [wrap_step(s, cfg) for s in steps]
    children += [{"verify": {**e, "error": "CONDITION_FAILED"}} for e in expect]
    body: Node = {"sequence": {"name": f"sub-task {index + 1}: {goal}", "children": children}}
    if cfg.budget.enabled:
        children.append({"remember": {"note": f"sub-task {index + 1} done: {goal}",
                                      "boundary": True}})
        body = {"timeout": {"name": f"budget {cfg.budget.steps} steps",
                            "steps": cfg.budget.steps, "child": body}}
    if not cfg.done.enabled or not expect:
        return body
    done = [{"check": dict(e)} for e in expect]
    return {"selector": {"name": f"sub-task {index + 1} done already, or do it", "children": [
        {"sequence": {"name": f"sub-task {index + 1} done already", "children": done}}, body]}}


def wrap_plan(name: str, subtasks: list[Node], cfg: SafetyConfig) -> Node:
    root: Node = {"sequence": {"name": name, "children": subtasks}}
    if not cfg.replan.enabled or "replan" not in NODE_TYPES:
        return root
    return {"selector": {"name": "plan, else replan", "children": [
        root, {"replan": {"attempts": cfg.replan.attempts}}]}}
