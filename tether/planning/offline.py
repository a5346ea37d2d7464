"""The `memory` planner: tether's offline default (no model server, no weights).

1. **Ground** by ranking (`tether.planning.grounding`): the goals the skills can achieve in this
   scene, rendered as sentences, ranked against the instruction with MiniLM and lexical
   evidence. Below the threshold or margin, the instruction parser
   (`tether.planning.instructions`, grounded by `tether.scenes.referring.ground`) is tried; where
   it cannot read the instruction either, a `TetherError` lists the closest readings. The goals
   are turned into steps by `tether.planning.skills`.
2. **Remember**: with a long-term store, the nearest successful episode that carries a plan
   (`metadata.plan`, written by `tether do`) is retrieved by the embedding of instruction +
   objects. Its entities are re-grounded into this scene: each old entity goes to the new
   entity the embedder finds closest by name, preferring entities the instruction mentions.
   When the grounding found the same goals, the remembered plan is used (its parameters are
   the ones that worked); when the goals differ the grounding wins (the store only looked
   alike); when the grounding could not decide the remembered plan is used on its own.

`plan()` returns a `Plan` whose `planner` says which path made it (`memory:<id>`, `parser`,
`grounding`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.memory.experience import SUCCESSES, key_text
from tether.memory.store import ExperienceStore
from tether.planning.grounding import GroundingConfig, rank
from tether.planning.instructions import Literal, parse
from tether.planning.plan import Plan, Subtask, read_plan
from tether.planning.request import PlanRequest
from tether.planning.skills import Goal, Parts, clearings, placements, steps_for
from tether.scenes.referring import SceneFacts, ground, is_region, words

PLAN_KEY = "plan"  # where a successful episode's plan is kept in its metadata


def _container(entity: str) -> bool:
    return is_region(entity) and "table" not in entity


def _receptacle(entity: str) -> bool:
    """A region things go into (LIBERO's names): a basket's or caddy's `contain` region, a
    microwave's `heating` region, a cabinet's drawer."""
    return bool(re.search(r"_(contain|heating)_region$|cabinet_\d+_(top|middle|bottom)_region$",
                          entity))


def ground_goals(literals: list[Literal], facts: SceneFacts) -> list[Goal]:
    """Grounded goals of parsed literals; `TetherError` naming the phrase that did not ground."""
    goals: list[Goal] = []
    for lit in literals:
        if lit.target is None:
            goals.append(Goal(lit.predicate, (ground(lit.object, facts, role="articulated"),)))
            continue
        if lit.object.startswith("both "):
            objects = _all_of(lit.object[5:], facts)
        else:
            taken = {g.args[0] for g in goals}
            objects = [ground(lit.object, facts, exclude=taken)]
        for obj in objects:
            if lit.predicate == "to":  # into a receptacle, else onto the target
                target = ground(lit.target, facts, role="in", exclude={obj})
                if _receptacle(target):
                    goals.append(Goal("in", (obj, target)))
                    continue
                target = ground(lit.target, facts, role="on", exclude={obj})
                goals.append(Goal("on", (obj, target)))
                continue
            role = "location" if lit.location else lit.predicate
            target = ground(lit.target, facts, role=role, exclude={obj})
            predicate = "in" if lit.predicate == "in" and _container(target) else "on"
            goals.append(Goal(predicate, (obj, target)))
    return goals


def _all_of(phrase: str, facts: SceneFacts) -> list[str]:
    from tether.scenes.referring import candidates

    found = candidates(phrase, facts, regions=False)
    if len(found) < 2:
        raise TetherError(f"'both {phrase}' needs two objects; found {', '.join(found) or 'none'}")
    return sorted(found)


def plan_goals(instruction: str, goals: list[Goal], parts: Parts,
               planner: str = "parser") -> Plan:
    """A plan with one sub-task per goal: the steps of the skill the scene's `parts` call for
    (`tether.planning.skills`), after any that clear its way, the goal as its expected effect."""
    return Plan(instruction=instruction, planner=planner, subtasks=[
        Subtask(goal=str(g), steps=first + steps_for(g, parts, spot), expect=[g.expect()])
        for g, spot, first in zip(goals, placements(goals, parts), clearings(goals, parts),
                                  strict=True)])


def _entities_in(value: Any, known: set[str]) -> list[str]:
    if isinstance(value, str):
        return [value] if value in known else []
    if isinstance(value, dict):
        return [e for v in value.values() for e in _entities_in(v, known)]
    if isinstance(value, list):
        return [e for v in value for e in _entities_in(v, known)]
    return []


def _replace(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, dict):
        return {k: _replace(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, mapping) for v in value]
    return value


@dataclass
class MemoryPlanner:
    """See the module docstring. `threshold`: least cosine similarity of a remembered plan;
    `grounding`: the ranker's threshold and margin."""

    store: ExperienceStore | None = None
    threshold: float = 0.8
    name: str = "memory"
    grounding: GroundingConfig = field(default_factory=GroundingConfig)

    def plan(self, request: PlanRequest) -> Plan:
        parsed: list[Goal] | None = None
        reason = ""
        path = "grounding"
        try:  # grounding by ranking, else the phrase parser where it reads the instruction
            parsed = rank(request.instruction, request.facts, self.grounding).decide()
        except TetherError as exc:
            reason, path = str(exc), "parser"
            try:
                parsed = ground_goals(parse(request.instruction), request.facts)
            except TetherError:
                pass
        remembered = self.remember(request, parsed)
        if remembered is not None:
            return remembered
        if parsed is None:
            raise TetherError(f"the memory planner cannot plan '{request.instruction}': {reason}"
                              + ("" if self.store is None else "; no remembered plan is close"))
        return plan_goals(request.instruction, parsed, request.parts, path)

    def remember(self, request: PlanRequest, parsed: list[Goal] | None) -> Plan | None:
        if self.store is None or len(self.store) == 0:
            return None
        objects = [e for e in request.facts.entities if not is_region(e)]
        hits = self.store.search(key_text(request.instruction, objects), k=3,
                                 partitions=(SUCCESSES,), threshold=self.threshold)[SUCCESSES]
        for hit in hits:
            stored = hit.experience.metadata.get(PLAN_KEY)
            if not stored:
                continue
            data = json.loads(stored) if isinstance(stored, str) else stored
            mapping = self.regrounding(data, hit.experience.objects, request)
            if mapping is None:
                continue
            plan = read_plan(_replace(data, mapping), instruction=request.instruction,
                             planner=f"memory:{hit.experience.id}")
            plan.instruction = request.instruction
            goals = [Goal(e["predicate"], tuple(v for k, v in e.items() if k != "predicate"))
                     for s in plan.subtasks for e in s.expect]
            if parsed is not None and set(goals) != set(parsed):
                continue
            return plan
        return None

    def regrounding(self, data: dict, old_objects: list[str],
                    request: PlanRequest) -> dict[str, str] | None:
        """Old entity -> entity of this scene, or None when one has no counterpart."""
        facts = request.facts
        old = list(dict.fromkeys(_entities_in(data, set(old_objects))))
        if not old:
            return {}
        mentioned = set(words(request.instruction))
        pool = facts.entities
        texts = [" ".join(words(e.replace("_", " "))) for e in [*old, *pool]]
        vectors = self.store.embed(texts)  # type: ignore[union-attr]
        sims = vectors[:len(old)] @ vectors[len(old):].T
        mapping: dict[str, str] = {}
        for i, entity in enumerate(old):
            bonus = np.array([0.5 if set(words(e.replace("_", " "))) & mentioned else 0.0
                              for e in pool])
            kind = np.array([0.0 if is_region(e) == is_region(entity) else -9.0 for e in pool])
            taken = np.array([-9.0 if e in mapping.values() else 0.01 if e == entity else 0.0
                              for e in pool])  # the same name wins a tie of look-alikes
            score = sims[i] + bonus + kind + taken
            best = int(np.argmax(score))
            if score[best] < 0.5:
                return None
            mapping[entity] = pool[best]
        return mapping
