"""Plans: what a planner emits, read from JSON and checked by the tree compiler.

A plan is a JSON object (docs/planner.md, "The plan format"; schema: `tether.planning.schema`):

    {"instruction": "put the bowl on the plate",
     "subtasks": [{"goal": "put the bowl on the plate",
                   "expect": [{"predicate": "on", "object": "black bowl", "target": "plate"}],
                   "steps": [{"subtree": "grasp", "with": {"object": "black bowl"}},
                             {"subtree": "place", "with": {"object": "black bowl",
                                                           "target": "plate"}}]}]}

Each step is one node of the tree language, exactly as a tree file writes it (any registered
node type, or a library subtree with `with:`); `expect` are the predicates that hold when the
sub-task is done (the verifier checks them). `read_plan` turns a model's reply into a `Plan`
(the JSON may sit in a ```json fence or between prose); `check_plan` compiles every step (and
every expected effect, as the body of a `check`) in memory with the real compiler against the
scene's names and returns its problems, located by plan path from a logical origin
(`subtasks[0].steps[1].move_to.tolerance: expected a number, got 'high'`). Nothing in a plan is
ever evaluated as code. Reading rejects what JSON allows but no plan may hold: `NaN`,
`Infinity` and numbers too large for a float, and objects and lists nested more than
`MAX_NESTING` deep.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tether.errors import MAX_NESTING, TetherError, data_problem, key_path
from tether.trees.compiler import compile_node
from tether.trees.source import TreeError, Where
from tether.trees.values import Resolver

PLAN_KEYS = ("instruction", "subtasks")
SUBTASK_KEYS = ("goal", "expect", "steps")


class PlanError(TetherError):
    """A plan that cannot be used; `problems` are the exact messages (one per line)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Subtask:
    goal: str
    steps: list[dict]
    expect: list[dict] = field(default_factory=list)


@dataclass
class Plan:
    instruction: str
    subtasks: list[Subtask]
    planner: str = ""  # who made it (not part of the JSON format)

    def grasping_with(self, params: dict[str, Any]) -> Plan:
        """The same plan with every library `grasp` step (at any depth) done by a learned policy:
        `vla_grasp` with `params` (`{"policy": NAME, "unstaged": N}`) added to its own `with`."""
        def swap(value: Any) -> Any:
            if isinstance(value, dict):
                if value.get("subtree") == "grasp":
                    return {**value, "subtree": "vla_grasp",
                            "with": {**value.get("with", {}), **params}}
                return {k: swap(v) for k, v in value.items()}
            return [swap(v) for v in value] if isinstance(value, list) else value

        return Plan(self.instruction, [Subtask(s.goal, swap(s.steps), s.expect)
                                       for s in self.subtasks], self.planner)

    def to_json(self) -> dict[str, Any]:
        return {"instruction": self.instruction,
                "subtasks": [{k: v for k, v in asdict(s).items() if v or k != "expect"}
                             for s in self.subtasks]}


def extract_json(text: str) -> Any:
    """The first JSON object in a model's reply; `PlanError` says where the JSON broke."""
    fenced = re.search(r"```(?:json)?\s*\n(.*?)```", text, re.S)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise PlanError(["the reply contains no JSON object (a plan is {\"subtasks\": [...]})"])
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        line = body[:start].count("\n") + exc.lineno
        raise PlanError([f"invalid JSON at line {line} column {exc.colno}: {exc.msg}"]) from None
    except RecursionError:  # json's reader recurses, guarded by the interpreter's own limit
        raise PlanError([f"the plan: nested more than {MAX_NESTING} levels deep"]) from None
    return value


def _shape(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["a plan is a JSON object {\"subtasks\": [...]}"]
    problems = [f"unknown key '{k}' (a plan has {', '.join(PLAN_KEYS)})" for k in data
                if k not in PLAN_KEYS]
    subtasks = data.get("subtasks")
    if not isinstance(subtasks, list) or not subtasks:
        return problems + ["'subtasks' must be a non-empty list of {goal, steps, expect}"]
    for i, s in enumerate(subtasks):
        where = f"subtasks[{i}]"
        if not isinstance(s, dict):
            problems.append(f"{where}: expected an object {{goal, steps, expect}}")
            continue
        problems += [f"{where}: unknown key '{k}' (a sub-task has {', '.join(SUBTASK_KEYS)})"
                     for k in s if k not in SUBTASK_KEYS]
        if not isinstance(s.get("goal"), str):
            problems.append(f"{where}.goal: expected a string saying what the sub-task achieves")
        if not isinstance(s.get("steps"), list) or not s["steps"]:
            problems.append(f"{where}.steps: expected a non-empty list of nodes")
        if not isinstance(s.get("expect", []), list) or not all(
                isinstance(e, dict) for e in s.get("expect", [])):
            problems.append(f"{where}.expect: expected a list of predicates "
                            "({\"predicate\": \"on\", \"object\": ..., \"target\": ...})")
    return problems


def read_plan(text: str | dict, *, instruction: str = "", planner: str = "") -> Plan:
    """A `Plan` from a reply (text) or parsed JSON; `PlanError` on malformed JSON or shape."""
    data = extract_json(text) if isinstance(text, str) else text
    if (problem := data_problem(data)) is not None:
        path, message = problem
        raise PlanError([f"{key_path(path) or 'the plan'}: {message}"])
    problems = _shape(data)
    if problems:
        raise PlanError(problems)
    return Plan(instruction=str(data.get("instruction") or instruction), planner=planner,
                subtasks=[Subtask(goal=s["goal"], steps=list(s["steps"]),
                                  expect=list(s.get("expect", []))) for s in data["subtasks"]])


def check_plan(plan: Plan, resolve: Resolver | None) -> list[str]:
    """Every problem of every sub-task, found by compiling its steps and expected effects
    against the scene's names (nothing is written)."""
    problems: list[str] = []
    for k, sub in enumerate(plan.subtasks):
        at = Where.logical("", f"subtasks[{k}]")
        nodes = [(step, at.of_key({}, "steps").of_item(sub.steps, i), None)
                 for i, step in enumerate(sub.steps)]
        nodes += [(effect, at.of_key({}, "expect").of_item(sub.expect, j), "check")
                  for j, effect in enumerate(sub.expect)]
        found: list[str] = []
        for value, where, kind in nodes:
            try:
                compile_node(value, where, resolve=resolve, kind=kind)
            except TreeError as exc:
                found += exc.problems
        problems += dict.fromkeys(found)
    return problems
