"""Skills: how a goal literal is achieved, as steps of the tree language.

The offline planner grounds an instruction into goal literals (`on(akita_black_bowl_1,
plate_1)`) and asks `SKILLS[predicate]` for the steps that achieve one. Skills name library
trees (`trees/library/*.yaml`) by `subtree:`, so what they do is readable and editable in the
written tree, and the safety rules (`tether.planning.safety`) wrap them like any planner's steps.

    on, in   grasp the object, place it on/in the target (library `grasp`, `place`)
    open     open a drawer by its handle (library `open_drawer`)
    close    push an open drawer shut by its handle (library `close_drawer`)
    turn_on  turn the stove's knob (library `turn_on`)

A predicate without a skill (turn_off, ...) is reported as such, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tether.errors import TetherError


@dataclass(frozen=True)
class Goal:
    """A grounded goal literal: predicate and canonical entity names."""

    predicate: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(self.args)})"

    def expect(self) -> dict:
        names = ("object", "target")
        return {"predicate": self.predicate, **dict(zip(names, self.args, strict=False))}


def _pick_place(goal: Goal) -> list[dict]:
    obj, target = goal.args
    return [{"subtree": "grasp", "with": {"object": obj}},
            {"subtree": "place", "with": {"object": obj, "target": target}}]


def _one_tree(tree: str, param: str) -> Callable[[Goal], list[dict]]:
    """A skill that is one library tree, its `param` bound to the goal's single argument."""
    return lambda goal: [{"subtree": tree, "with": {param: goal.args[0]}}]


SKILLS: dict[str, Callable[[Goal], list[dict]]] = {
    "on": _pick_place, "in": _pick_place, "open": _one_tree("open_drawer", "drawer"),
    "close": _one_tree("close_drawer", "drawer"), "turn_on": _one_tree("turn_on", "stove")}


def steps_for(goal: Goal) -> list[dict]:
    """The steps that achieve `goal`; `TetherError` when no skill does."""
    if goal.predicate not in SKILLS:
        raise TetherError(f"no skill achieves {goal} (skills: {', '.join(sorted(SKILLS))})")
    return SKILLS[goal.predicate](goal)
