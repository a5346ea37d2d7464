"""A task's reference solution: the library trees the planner's skill rule picks for its goal.

It is built from the task's BDDL goal and its scene: each goal literal is achieved by the
library tree the planner's own rule picks (`tether.planning.skills.skill_for`, from the geometry
and joints of the literal's entities in the scene at init state 0, never their names), its
parameters bound from the literal (`from_goal`), and a goal of several literals is those trees
in sequence, in the goal's order except that `turn_on`/`turn_off` literals come first (a stove's
knob is beside its cook region: the hand pushing it, 20 cm long, would sweep what stands there),
`close` literals last (a drawer or door must stay open while something is put in it), and `in(X,
R)` is preceded by `open(R)` when R moves on a joint and the task does not start with it open.
What is moved out of a drawer's way before it opens (`tether.planning.skills.clearings`: an
object a later literal takes, standing where the opened drawer comes) and where each object is
set down (side by side when several share a target, toward a drawer's front) are the planner's
rules too (`tether.planning.skills.placements`). An object
that starts in a drawer comes over its target up to `CROSS` m higher than `place`'s carry height
(`cross`), clearing the drawer's walls. Trees acting on a joint read its axis from the model
themselves (`at: joint`), so a turned cabinet needs no parameters. A literal no tree achieves
is listed in `Reference.missing`. Used by `benchmarks/reference_success.py` and `tether collect
--tree reference`.

    ref = reference_for("libero_goal/3")      # the scene at init state 0 is read for its parts
    yaml.safe_dump(ref.document())            # a tree file `tether run` takes
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.errors import TetherError
from tether.planning.skills import Goal, Parts, clearings, owner, parts_of, placements, skill_for
from tether.scenes.bddl import read_problem
from tether.scenes.catalogue import get_task
from tether.scenes.joints import SLIDE
from tether.scenes.libero_scene import _TETHER_PREDICATE
from tether.trees.compiler import LIBRARY, read_tree_file

FIRST = ("turn_on", "turn_off")  # predicates achieved before all others
LAST = ("close",)  # predicates achieved after all others
CROSS = 0.15  # an object lifted out of a drawer comes over its target up to this much higher (m)


@dataclass(frozen=True)
class Reference:
    task: str
    goal: tuple[tuple[str, ...], ...]  # in the order the steps achieve it
    trees: tuple[str, ...]
    missing: tuple[str, ...]  # predicates without a tree
    spots: tuple[dict[str, float], ...] = ()  # per step: where its object goes (`placements`)
    in_drawer: tuple[bool, ...] = ()  # per step: whether its object starts in a drawer
    before: tuple[tuple[dict, ...], ...] = ()  # per step: the steps that clear its way first

    def subtrees(self) -> list[str]:
        """The library trees the reference runs, in order, those that clear a way included."""
        before = self.before or ((),) * len(self.trees)
        return [step["subtree"] for first, tree in zip(before, self.trees, strict=False)
                for step in (*first, {"subtree": tree})]

    def document(self) -> dict:
        """The reference tree: one library subtree per goal literal, in sequence."""
        steps: list[dict] = []
        spots = self.spots or ({},) * len(self.goal)
        in_drawer = self.in_drawer or (False,) * len(self.goal)
        before = self.before or ((),) * len(self.goal)
        for literal, name, spot, from_drawer, first in zip(self.goal, self.trees, spots,
                                                           in_drawer, before, strict=True):
            steps += first
            params = read_tree_file(LIBRARY / f"{name}.yaml").params.values()
            bound = {p.name: literal[p.from_goal] for p in params
                     if p.from_goal is not None and p.from_goal < len(literal)} | spot
            if name == "pick_place" and from_drawer:
                bound["cross"] = CROSS
            steps.append({"subtree": name, "name": f"{literal[0]}({', '.join(literal[1:])})",
                          "with": bound})
        return {"tree": "reference", "doc": f"reference solution of {self.task}",
                "root": {"sequence": {"name": "reference solution", "children": steps}}}


def goal_of(problem, parts: Parts) -> tuple[tuple[str, ...], ...]:
    """The goal literals of a task's parsed BDDL `problem`, with tether's predicate names, in
    the order the reference achieves them: knobs first, `close` literals last, and `in(X, R)`
    preceded by `open(R)` when R moves on a joint (`parts`: a drawer) and the task does not start
    with it open."""
    goal = [(_TETHER_PREDICATE.get(lit[0], lit[0]), *lit[1:]) for lit in problem.goal]
    opened = {lit[1] for lit in problem.init if lit[0] == "open"}
    steps: list[tuple[str, ...]] = []
    for lit in goal:
        if lit[0] == "in" and _moves(parts, lit[2]) \
                and not opened & {lit[2], owner(lit[2], parts)} \
                and ("open", lit[2]) not in goal:
            steps.append(("open", lit[2]))
        steps.append(lit)
    return tuple(sorted(steps, key=lambda g: (g[0] in LAST) - (g[0] in FIRST)))


def _moves(parts: Parts, region: str) -> bool:
    """Whether `region` moves on a joint of its own (a drawer's region)."""
    return region in parts and parts[region].joint is not None


def _drawer(parts: Parts, region: str) -> bool:
    """Whether `region` moves on a slide (a drawer's region)."""
    return region in parts and parts[region].joint == SLIDE


def scene_parts(task: str) -> dict:
    """The `Part` of every entity of `task` at its init state 0 (`tether.planning.skills`)."""
    import contextlib
    import io

    from tether.scenes.libero_scene import LiberoScene

    with contextlib.redirect_stdout(io.StringIO()):
        scene = LiberoScene(task, 0)
    try:
        return parts_of(scene)
    finally:
        scene.close()


def reference_for(task: str, parts: Parts | None = None) -> Reference:
    """`task`'s reference solution; `parts` are its scene's (`scene_parts`, read when not
    given)."""
    problem = read_problem(get_task(task).bddl_file)
    parts = scene_parts(task) if parts is None else parts
    goal = goal_of(problem, parts)
    trees, missing = [], []
    for g in goal:
        try:
            trees.append(skill_for(Goal(g[0], tuple(g[1:])), parts))
        except TetherError:
            missing.append(g[0])
    goals = [Goal(g[0], tuple(g[1:])) for g in goal]
    spots = tuple(placements(goals, parts))
    before = tuple(tuple(steps) for steps in clearings(goals, parts))
    in_drawer = tuple(any(lit[0].lower() == "in" and lit[1] == g[1] and _drawer(parts, lit[2])
                          for lit in problem.init) for g in goal)
    missing = tuple(dict.fromkeys(missing))
    return Reference(get_task(task).id, goal, () if missing else tuple(trees), missing, spots,
                     in_drawer, before)
