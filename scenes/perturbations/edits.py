"""Edits of a BDDL `Problem` shared by the scene-stage perturbations.

- `main_object(problem, name)`: the object a perturbation acts on by default: the first movable
  object of the goal, else of `obj_of_interest`, else the first object;
- `add_object(problem, category, xy)`: a new instance of `category` standing in a new 2 cm table
  region centred at `xy` (table frame, as LIBERO's regions are);
- `free_spot(problem, rng, ...)`: a table position at least `clearance` from every object's
  initial region and every spot taken already;
- `noun(problem, name)`: how an instruction names an entity ("black bowl", "top drawer"; object
  nouns from `tether.scenes.vocabulary`).
"""

from __future__ import annotations

import numpy as np

from tether.errors import TetherError
from tether.scenes.bddl import Problem, Region
from tether.scenes.vocabulary import noun as category_noun

# Where new objects may stand, in table-frame metres (LIBERO's reachable tabletop).
TABLE_X, TABLE_Y = (-0.25, 0.2), (-0.3, 0.3)


def main_object(problem: Problem, name: str = "") -> str:
    """`name` if given (it must be an object), else the task's main movable object."""
    objects = problem.object_names()
    if name:
        if name not in objects:
            raise TetherError(f"'{name}' is not a movable object of this task; its objects: "
                              f"{', '.join(objects)}")
        return name
    for candidates in ([a for lit in problem.goal for a in lit[1:]], problem.obj_of_interest,
                       objects):
        for c in candidates:
            if c in objects:
                return c
    raise TetherError("this task has no movable object")


def workspace(problem: Problem) -> str:
    """The table the task's table regions stand on (`main_table`, `kitchen_table`, ...)."""
    for category, names in problem.fixtures.items():
        if category in ("table", "floor") or category.endswith("_table"):
            return names[0]
    raise TetherError("this task has no table fixture to put objects on")


def region_centre(problem: Problem, region_name: str) -> np.ndarray | None:
    for r in problem.regions:
        if r.full_name == region_name and r.ranges:
            x0, y0, x1, y1 = r.ranges[0]
            return np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    return None


def initial_spot(problem: Problem, name: str) -> np.ndarray | None:
    """The centre of the table region `name` starts in, if its `:init` says so."""
    for lit in problem.init:
        if lit[0] == "on" and lit[1] == name:
            return region_centre(problem, lit[2])
    return None


def taken_spots(problem: Problem) -> list[np.ndarray]:
    spots = []
    for lit in problem.init:
        if lit[0] == "on" and len(lit) == 3:
            centre = region_centre(problem, lit[2])
            if centre is not None:
                spots.append(centre)
    return spots


def free_spot(problem: Problem, rng: np.random.Generator, clearance: float = 0.12,
              near: np.ndarray | None = None, within: float = 0.3) -> np.ndarray:
    """A table position `clearance` away from every object's start (near `near`, if given)."""
    taken = taken_spots(problem)
    for _ in range(500):
        if near is None:
            xy = np.array([rng.uniform(*TABLE_X), rng.uniform(*TABLE_Y)])
        else:
            angle, radius = rng.uniform(0, 2 * np.pi), rng.uniform(clearance, within)
            xy = near + radius * np.array([np.cos(angle), np.sin(angle)])
            if not (TABLE_X[0] <= xy[0] <= TABLE_X[1] and TABLE_Y[0] <= xy[1] <= TABLE_Y[1]):
                continue
        if all(np.linalg.norm(xy - t) >= clearance for t in taken):
            return np.round(xy, 3)
    raise TetherError("no free spot left on the table for another object")


def add_object(problem: Problem, category: str, xy: np.ndarray) -> str:
    """Add an instance of `category` standing at `xy`; returns its name. Edits `problem`."""
    from tether.scenes.bddl import libero_vocabulary

    if category not in libero_vocabulary()[1]:
        from tether.errors import did_you_mean

        raise TetherError(f"unknown object category '{category}'"
                          f"{did_you_mean(category, libero_vocabulary()[1])}")
    taken = set(problem.object_names())
    k = 1
    while f"{category}_{k}" in taken:
        k += 1
    name = f"{category}_{k}"
    table = workspace(problem)
    region = Region(name=f"{name}_init_region", target=table,
                    ranges=[(xy[0] - 0.01, xy[1] - 0.01, xy[0] + 0.01, xy[1] + 0.01)])
    problem.regions.append(region)
    problem.objects.setdefault(category, []).append(name)
    problem.init.append(("on", name, region.full_name))
    return name


def noun(problem: Problem, name: str) -> str:
    """How an instruction names an object, fixture or region."""
    category = problem.category_of(name)
    if category is not None:
        return category_noun(category)
    for r in problem.regions:
        if r.full_name == name:
            words = r.name.removesuffix("_region").replace("_", " ")
            owner = problem.category_of(r.target)
            if owner in ("table", "floor") or (owner or "").endswith("_table"):
                return f"{words} area"
            return f"{words} of the {noun(problem, r.target)}"
    return name.replace("_", " ")
