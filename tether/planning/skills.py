"""Skills: how a goal literal is achieved, chosen by one rule from the scene's geometry.

The offline planner grounds an instruction into goal literals (`on(akita_black_bowl_1,
plate_1)`) and asks `steps_for(goal, parts)` for the steps that achieve one; the reference
solution (`benchmarks/reference_success.py`) asks `skill_for` the same. Skills name library trees
(`trees/library/*.yaml`) by `subtree:`, so what they do is readable and editable in the written
tree, and the safety rules (`tether.planning.safety`) wrap them like any planner's steps.

`skill_for` chooses by what the scene says of the goal's entities (`Part`: bounding box,
the joint that moves it, headroom above it; privileged, `parts_of`), never by a name:

    on        pick_place (grasp + place), or push when the object is too flat to grasp (lower
              than FLAT and wider than the open fingers, GRIP, every way) and the target's
              surface is level with what the object rests on (within STEP of its bottom): a push
              drags along the table, it lifts nothing onto a raised target (a stove's burner)
    in        pick_place into a region a slide moves (a drawer, opened first), or lay_in when
              the object stands taller than the drawer is deep and fits it lying along x (it
              closes under the cabinet); slide_in when the region lies under a roof lower than
              the object plus the hand (HAND), insert when the region is narrower than the
              object is long, else pick_place
    open      open_drawer for a part on a slide joint
    close     close_drawer for a slide, close_door for a hinge
    turn_on   turn_on, turn_off: turn_off (a knob pushed round the way its joint turns)

A goal no skill achieves (an unknown predicate, a door to open, a part without a joint) is a
`TetherError` naming it, never guessed.

Where a placed object goes in its target is one rule too, over the goals together
(`placements`, `place`'s `spot_x`/`spot_y`): objects put on or in one target stand side by side
along x, the first nearest the robot, each up to `SPREAD` m from the target's middle; on a
surface its middle stays `INSET` inside the target's edge, in a container its narrower side
stays inside the walls (with `MARGIN` for the fingers). On a target whose middle lies farther
than `EDGE_REACH` from the arm's base (`Part.reach`), whose far side the arm may not reach, they
stand as near its edge toward the base as that allows, side by side across (a stove at the
table's far edge: its burner's near strip). An object put in a drawer goes
`DRAWER_FRONT` m toward the drawer's front (its slide's opening direction): the cabinet above
overhangs the drawer's back. An object laid in a drawer (`lay_in`, tipped `TILT` about world y,
its lower end toward +x) comes down with that end at the drawer's far side along x, so that,
falling over from it, it lies inside. An object with a thin top (`Part.thin_top`: a carton's
gable of panels) put in a container is lowered until it rests on the container's floor before
it is let go (`place`'s `depth`: the container's height), not let go near its rim: dropped, a
fingertip caught under the gable as the hand rose, and lifted it out again.

What stands in a drawer's way is moved first, one rule too (`clearings`): before a goal opens a
part on a slide, each object a later goal takes (by a grasp: every `on`/`in` but a push) whose
footprint comes within `CLEAR` of the box the sliding body passes through (`Part.swept`) and
whose bottom is lower than that body's is taken and set down by `make_way`, along the part's
opening until it is `CLEAR` past that box: the opened drawer would stand over it (the hand could
no longer come down to it) or push it. Before a `slide_in` into a region of a fixture whose
door turns on a hinge (the region's owner: the entity whose name and `_` begin the region's,
BDDL's naming), `swing_open` swings that door further open when it stands open less than its
`share` (three quarters): part way open, its leaf can stand in the room the level hand needs in
front of the opening.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tether.errors import TetherError
from tether.scenes.grasps import EDGE_REACH
from tether.scenes.joints import HINGE, SLIDE
from tether.scenes.placing import INSET, MARGIN
from tether.scenes.robot import Robot

FLAT = 0.03  # an object lower than this (m) ...
GRIP = 0.08  # ... and wider than the open fingers every way (m) is pushed, not grasped
HAND = 0.10  # how far the hand reaches above its fingertips (m): headroom a grasp needs
STEP = 0.01  # a target's surface this close to a flat object's bottom is level with it (m)
SPREAD = 0.05  # objects sharing a target are set down up to this far from its middle (m)
DRAWER_FRONT = 0.03  # an object put in a drawer goes this far toward its front from its middle (m)
CLEAR = 0.03  # an object this near where a drawer comes is in its way, and is set this far past (m)
DROP = 0.01  # it is carried to this high above where it stood, then lowered until it rests (m)
BACK = 0.15  # then the hand goes this high over its top where it stood, as a grasp lifts it (m)
TILT = math.pi / 4  # how far `lay_in` tips an object before it sets it down (rad)


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


Box = tuple[tuple[float, float, float], tuple[float, float, float]]  # low, high corners (world)


@dataclass(frozen=True)
class Part:
    """What skill selection knows of an entity: its bounding box's size (m, x y z), the kind of
    joint that moves it (`slide`, `hinge` or None), the world direction it moves to open (for a
    joint), the free height above its middle (m; inf when open above), the world height of its
    bottom and the height at which something set on it rests (`Robot.surface`; both default to
    0: standing on one floor), its box's middle (world), for a part on a slide the box the
    sliding body passes through as it opens fully (`Robot.swept`), how far down from its
    top it is made of thin parts only (`Robot.thin_top`: a carton's gable), and how far its
    middle lies from the arm's base horizontally (`Robot.reach`) and the horizontal unit
    direction from it toward the base (both 0 for a robot without an arm model)."""

    size: tuple[float, float, float]
    joint: str | None = None
    opening: tuple[float, float, float] | None = None
    headroom: float = math.inf
    bottom: float = 0.0
    surface: float = 0.0
    middle: tuple[float, float, float] = (0.0, 0.0, 0.0)
    swept: Box | None = None
    thin_top: float = 0.0
    reach: float = 0.0
    toward_base: tuple[float, float] = (0.0, 0.0)


Parts = Mapping[str, Part]


def parts_of(robot: Robot, names: list[str] | None = None) -> dict[str, Part]:
    """The `Part` of each entity (default: all of the scene's), read from `robot` now."""
    parts = {}
    for name in robot.entities() if names is None else names:
        try:
            low, high = robot.extent_of(name)
        except TetherError:  # a body without geometry
            continue
        try:
            joint = robot.joint_of(name)
            kind, opening = joint.kind, _floats(joint.opening())
        except TetherError:
            kind, opening = None, None
        swept = tuple(_floats(c) for c in robot.swept(name)) if kind == SLIDE else None
        middle = (low + high) / 2
        parts[name] = Part(_floats(high - low), kind, opening, robot.headroom(name),
                           float(low[2]), robot.surface(name), _floats(middle), swept,
                           robot.thin_top(name), robot.reach(middle), _toward_base(robot, middle))
    return parts


def _toward_base(robot: Robot, point: np.ndarray) -> tuple[float, float]:
    """The horizontal unit direction from `point` toward the arm's base: `Robot.reach`'s
    downhill slope, by central differences 1 cm wide (0, 0 where reach is flat: no arm model)."""
    step = 0.01
    slope = [(robot.reach(point - step * axis) - robot.reach(point + step * axis)) / (2 * step)
             for axis in np.eye(3)[:2]]
    return float(slope[0]), float(slope[1])


def _floats(values) -> tuple[float, float, float]:
    return tuple(float(v) for v in values)  # type: ignore[return-value]


def _flat(part: Part) -> bool:
    return part.size[2] < FLAT and min(part.size[:2]) > GRIP


def _on(goal: Goal, parts: Parts) -> str:
    obj, target = parts[goal.args[0]], parts[goal.args[1]]
    return "push" if _flat(obj) and abs(target.surface - obj.bottom) <= STEP else "pick_place"


def _in(goal: Goal, parts: Parts) -> str:
    obj, region = parts[goal.args[0]], parts[goal.args[1]]
    if region.joint == SLIDE:
        return "lay_in" if region.size[2] < obj.size[2] <= region.size[0] \
            and min(obj.size[:2]) < region.size[2] else "pick_place"
    if region.headroom < obj.size[2] + HAND:
        return "slide_in"
    if min(region.size[:2]) < max(obj.size[:2]):
        return "insert"
    return "pick_place"


def _joint(goal: Goal, parts: Parts, trees: dict[str, str]) -> str | None:
    return trees.get(parts[goal.args[0]].joint or "")


RULES: dict[str, Callable[[Goal, Parts], str | None]] = {
    "on": _on,
    "in": _in,
    "open": lambda goal, parts: _joint(goal, parts, {SLIDE: "open_drawer"}),
    "close": lambda goal, parts: _joint(goal, parts, {SLIDE: "close_drawer",
                                                      HINGE: "close_door"}),
    "turn_on": lambda goal, parts: "turn_on",
    "turn_off": lambda goal, parts: "turn_off",
}


def skill_for(goal: Goal, parts: Parts) -> str:
    """The library tree that achieves `goal` in a scene whose entities are `parts`;
    `TetherError` when none does."""
    rule = RULES.get(goal.predicate)
    missing = [a for a in goal.args if a not in parts]
    if rule is None or missing:
        why = f"nothing is known of {', '.join(missing)}" if rule and missing else \
            f"skills: {', '.join(sorted(RULES))}"
        raise TetherError(f"no skill achieves {goal} ({why})")
    tree = rule(goal, parts)
    if tree is None:
        raise TetherError(f"no skill achieves {goal} (its part moves on no joint a skill works: "
                          f"{parts[goal.args[0]].joint or 'none'})")
    return tree


def placements(goals: Sequence[Goal], parts: Parts) -> list[dict[str, float]]:
    """Per goal, where `pick_place` sets its object down in its target (`spot_x`, `spot_y`; empty
    for the target's middle or a goal another skill achieves) and, for a thin-topped object in a
    container, how deep (`depth`): see the module docstring."""
    skills = [skill_for(g, parts) if g.predicate in ("on", "in")
              and all(a in parts for a in g.args) else None for g in goals]
    placed = [skill in ("pick_place", "lay_in") for skill in skills]
    shared = Counter(g.args[1] for g, p in zip(goals, placed, strict=True) if p)
    done: Counter[str] = Counter()
    spots: list[dict[str, float]] = []
    for goal, skill, is_placed in zip(goals, skills, placed, strict=True):
        spot: dict[str, float] = {}
        if is_placed:
            obj, target = parts[goal.args[0]], parts[goal.args[1]]
            if goal.predicate == "in" and target.joint == SLIDE:
                spot = {f"spot_{axis}": _rounded(DRAWER_FRONT * v)
                        for axis, v in zip("xy", target.opening or (), strict=False)
                        if round(v, 6)}
                if skill == "lay_in":
                    spot["spot_x"] = _rounded((target.size[0] - _tipped(obj)) / 2)
            elif (k := shared[goal.args[1]]) > 1:
                across = 0  # objects sharing a target stand side by side along x ...
                if target.reach > EDGE_REACH:  # ... but on a far one at its near side, across
                    near = int(abs(target.toward_base[1]) > abs(target.toward_base[0]))
                    side = math.copysign(_room(goal, obj, target, near),
                                         target.toward_base[near])
                    spot[f"spot_{'xy'[near]}"] = round(side, 6)
                    across = 1 - near
                i = done[goal.args[1]]
                done[goal.args[1]] += 1
                spread = min(SPREAD, _room(goal, obj, target, across)) * (2 * i / (k - 1) - 1)
                spot[f"spot_{'xy'[across]}"] = round(spread, 6)
            if goal.predicate == "in" and target.joint is None and obj.thin_top > 0:
                spot["depth"] = -round(target.size[2], 6)  # down to the floor: until it rests
        spots.append(spot)
    return spots


def _room(goal: Goal, obj: Part, target: Part, axis: int) -> float:
    """How far from the target's middle along world `axis` (0: x, 1: y) the object's middle may
    go: `INSET` inside a surface's edge, or its narrower side inside a container's walls."""
    half = target.size[axis] / 2
    room = half - min(obj.size[:2]) / 2 - MARGIN if goal.predicate == "in" else half - INSET
    return max(room, 0.0)


def _tipped(obj: Part) -> float:
    """How long along x `obj` is, tipped `TILT` about y (its height and narrower side)."""
    return obj.size[2] * math.sin(TILT) + min(obj.size[:2]) * math.cos(TILT)


def clearings(goals: Sequence[Goal], parts: Parts) -> list[list[dict]]:
    """Per goal, the steps to take before it (see the module docstring): before a slide is
    opened, `make_way` for each object a later goal takes that stands in its way; before a
    `slide_in`, `swing_open` for its region's hinged door."""
    before: list[list[dict]] = []
    for i, goal in enumerate(goals):
        part = parts.get(goal.args[0]) if goal.predicate == "open" else None
        moved: dict[str, dict] = {}
        for later in goals[i + 1:] if part is not None and part.swept is not None else ():
            takes = later.predicate in ("on", "in") and all(a in parts for a in later.args) \
                and skill_for(later, parts) != "push"
            if takes and _in_way(obj := parts[later.args[0]], part):
                moved[later.args[0]] = {"subtree": "make_way", "with": {
                    "object": later.args[0], "part": goal.args[0], **_aside(obj, part)}}
        steps = list(moved.values())
        if goal.predicate == "in" and all(a in parts for a in goal.args) \
                and skill_for(goal, parts) == "slide_in" \
                and (door := owner(goal.args[1], parts)) is not None \
                and parts[door].joint == HINGE:
            steps.append({"subtree": "swing_open", "with": {"door": door}})
        before.append(steps)
    return before


def owner(region: str, parts: Parts) -> str | None:
    """The entity region `region` belongs to (BDDL's naming): the longest whose name and `_`
    begin its name; None for none."""
    names = [n for n in parts if region.startswith(n + "_")]
    return max(names, key=len) if names else None


def _in_way(obj: Part, part: Part) -> bool:
    """Whether `obj` stands where the sliding `part` comes as it opens: its footprint within
    `CLEAR` of the sweep's and its bottom lower than the sliding body's (under it or in front of
    it, not in it)."""
    (low, high), half = part.swept, [v / 2 for v in obj.size]
    return obj.bottom < low[2] and all(
        obj.middle[a] + half[a] > low[a] - CLEAR and obj.middle[a] - half[a] < high[a] + CLEAR
        for a in (0, 1))


def _aside(obj: Part, part: Part) -> dict[str, list[float]]:
    """`make_way`'s `spot` and `back`, from `part`'s middle: where `obj`'s bottom middle goes,
    moved along the part's opening until its footprint is `CLEAR` past the sweep's far side,
    `DROP` above where it stood; where the hand goes after, `BACK` over where `obj` stood."""
    way = part.opening or (0.0, 0.0, 0.0)
    low, high = part.swept

    def along(middle, size) -> tuple[float, float]:  # a box's near and far ends along the way
        centre = sum(m * w for m, w in zip(middle[:2], way, strict=False))
        half = sum(abs(w) * d / 2 for w, d in zip(way[:2], size, strict=False))
        return centre - half, centre + half

    sweep = along([(a + b) / 2 for a, b in zip(low, high, strict=True)],
                  [b - a for a, b in zip(low, high, strict=True)])
    shift = sweep[1] + CLEAR - along(obj.middle, obj.size)[0]
    here = [obj.middle[a] - part.middle[a] for a in (0, 1)]
    top = obj.bottom + obj.size[2]
    spot = [here[0] + shift * way[0], here[1] + shift * way[1], obj.bottom + DROP - part.middle[2]]
    return {"spot": [_rounded(v) for v in spot],
            "back": [_rounded(v) for v in (*here, top + BACK - part.middle[2])]}


def _rounded(value: float) -> float:
    return round(value, 6) + 0.0  # no -0.0


def steps_for(goal: Goal, parts: Parts, spot: Mapping[str, float] | None = None) -> list[dict]:
    """The steps that achieve `goal`: the chosen library tree, its params bound from the goal
    (`from_goal`; pick_place as its two halves, grasp and place, the place at `spot`, one of
    `placements`); `TetherError` when no skill does."""
    from tether.trees.compiler import LIBRARY, read_tree_file

    tree = skill_for(goal, parts)
    if tree == "pick_place":
        obj, target = goal.args
        return [{"subtree": "grasp", "with": {"object": obj}},
                {"subtree": "place", "with": {"object": obj, "target": target, **(spot or {})}}]
    literal = (goal.predicate, *goal.args)
    params = read_tree_file(LIBRARY / f"{tree}.yaml").params.values()
    return [{"subtree": tree, "with": {**{p.name: literal[p.from_goal] for p in params
                                          if p.from_goal and p.from_goal < len(literal)},
                                       **(spot or {})}}]
