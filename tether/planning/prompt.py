"""Planning prompts, built from what the system knows (nothing about nodes is written by hand).

`system_prompt()` states the plan format and the vocabulary: every node type of the registry
with its description and parameters (`tether.trees.nodes`), every library tree with its parameters,
every predicate, and the hard constraints that are always included (OmniAct: a constraint lost
from context is the commonest failure). `user_prompt(request)` gives the instruction, the scene's
entities (canonical names, the names people use, aliases, positions), retrieved long-term memory
(success exemplars, failure precedents, rules), the short-term event log and, when replanning,
what failed, and the grounded readings of the instruction (`tether.planning.grounding`'s top-k
with scores) that the plan must pick or compose from. `repair_prompt(problems)` sends the
compiler's exact messages back.
"""

from __future__ import annotations

import json

from tether.planning.plan import Plan
from tether.planning.request import PlanRequest
from tether.scenes.predicates import PREDICATES
from tether.scenes.referring import is_region
from tether.trees.compiler import LIBRARY, read_tree_file
from tether.trees.nodes import NODE_TYPES

CONSTRAINTS = (
    "Use only the node types, library trees and predicates listed here; never invent one.",
    "Name only entities of the scene (canonical names, or the names/aliases listed with them).",
    "Parameters have the listed types: numbers are JSON numbers, never strings.",
    "Each sub-task's `expect` lists the goal predicates that hold when it is done.",
    "Prefer library trees (grasp, place, open_drawer, ...) over raw motions; they verify "
    "themselves and recover.",
    "Answer with one JSON object and nothing else.",
)
EXAMPLE = {"instruction": "put the black bowl on the plate", "subtasks": [{
    "goal": "put the black bowl on the plate",
    "expect": [{"predicate": "on", "object": "akita_black_bowl_1", "target": "plate_1"}],
    "steps": [{"subtree": "grasp", "with": {"object": "akita_black_bowl_1"}},
              {"subtree": "place", "with": {"object": "akita_black_bowl_1",
                                            "target": "plate_1"}}]}]}


def _vocabulary() -> str:
    lines = ["Node types (a step is {TYPE: BODY}; leaves take a mapping of parameters):"]
    for name, nt in NODE_TYPES.items():
        params = ", ".join(f"{k}: {s.type.name}" + ("" if s.required else f" = {s.default!r}")
                           for k, s in nt.params.items())
        extra = " + predicate: NAME and its arguments" if nt.predicate else ""
        body = {"composite": "list of steps", "decorator": "{child: STEP, ...}"}.get(nt.kind, "")
        lines.append(f"- {name} ({nt.kind}{'; ' + body if body else ''}): {nt.doc}"
                     + (f" Parameters: {params}{extra}." if params or extra else ""))
    lines.append("\nLibrary trees (a step {\"subtree\": NAME, \"with\": {PARAM: VALUE}}):")
    for path in sorted(LIBRARY.glob("*.yaml")):
        tf = read_tree_file(path)
        params = ", ".join(f"{p.name}: {p.type.name}" + ("" if p.required else
                                                          f" = {p.default!r}")
                           for p in tf.params.values())
        lines.append(f"- {tf.name}({params}): {' '.join(tf.doc.split())}")
    lines.append("\nPredicates (for check, guard and expect):")
    for p in PREDICATES.values():
        lines.append(f"- {p.name}({', '.join(a.name for a in p.params)}): {p.doc}")
    return "\n".join(lines)


def system_prompt() -> str:
    return (
        "You are the task planner of a robot arm with a two-finger gripper over a tabletop. "
        "You turn an instruction into a plan: a JSON object {\"instruction\": TEXT, "
        "\"subtasks\": [{\"goal\": TEXT, \"expect\": [PREDICATE...], \"steps\": [STEP...]}]}. "
        "Steps run in order; each step is one node of tether's tree language. The executive "
        "adds grasp checks, retries, budgets and replanning itself.\n\n"
        + _vocabulary() + "\n\nHard constraints:\n"
        + "\n".join(f"- {c}" for c in CONSTRAINTS)
        + "\n\nExample:\n" + json.dumps(EXAMPLE))


def _entity_line(name: str, request: PlanRequest) -> str:
    facts = request.facts
    called = [" ".join(n) for n in facts.names(name)[1:]]
    aliases = [a for a, c in facts.aliases.items() if c == name]
    kind = "region" if is_region(name) else "fixture" if name in facts.fixtures else "object"
    pos = facts.positions.get(name)
    where = f" at [{', '.join(f'{v:.2f}' for v in pos)}]" if pos is not None else ""
    also = ", ".join(dict.fromkeys([*called, *aliases]))
    return f"- {name} ({kind}{'; also: ' + also if also else ''}){where}"


def user_prompt(request: PlanRequest) -> str:
    parts = [f"Instruction: {request.instruction}", "Scene entities:",
             *(_entity_line(e, request) for e in request.facts.entities)]
    if request.facts.robot_position is not None:
        parts.append("The gripper is at [" + ", ".join(
            f"{v:.2f}" for v in request.facts.robot_position) + "] (the robot's side).")
    if request.options:
        parts.append("Grounded readings of the instruction in this scene (best first, with "
                     "scores). Pick one, or compose goals from them, as your sub-tasks' "
                     "`expect`; do not invent other goals:")
        parts += [f"- {', '.join(map(str, r.goals))}: \"{r.sentence}\" ({r.score:.2f})"
                  for r in request.options]
    if request.memory:
        parts.append("Long-term memory (learn from these; avoid what failed):")
        parts += [f"- {m.get('partition', '')}: \"{m.get('instruction', '')}\" -> "
                  f"{m.get('outcome', '')}"
                  + (f"; diagnosis: {m['diagnosis']}" if m.get("diagnosis") else "")
                  + (f"; params that worked: {m['params']}" if m.get("params") else "")
                  for m in request.memory]
    if request.events:
        parts += ["What happened so far in this episode:", request.events]
    if request.failure:
        parts.append(f"The previous plan failed: {request.failure}. Plan again from the scene "
                     "as it is now.")
    if request.previous is not None:
        parts.append("The previous plan: " + json.dumps(request.previous.to_json()))
    parts.append("Answer with the plan JSON only.")
    return "\n".join(parts)


def repair_prompt(problems: list[str]) -> str:
    return ("Your plan cannot be used:\n" + "\n".join(f"- {p}" for p in problems)
            + "\nFix exactly these problems and answer with the whole corrected plan JSON only.")


__all__ = ["Plan", "repair_prompt", "system_prompt", "user_prompt"]
