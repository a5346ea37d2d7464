"""The grasps whose way down stalled this episode, per object: the short-term memory that keeps
a retry from repeating the same grasp motion.

A leaf descending onto a grasp point that stalls (`move_to` failing with STUCK or UNREACHABLE)
`record`s a `tether.scenes.grasps.Stall` under `/grasps/stalled/<object>`; whatever picks the
next grasp of that object reads them (`of`) and passes over the candidates they match twice
(`tether.scenes.grasps.clear_grasp`, `turned_grasp`, `STALLS`). The episode's fresh blackboard
(`tether.blackboard.episode.new_episode`) starts with none.
"""

from __future__ import annotations

from tether.blackboard.episode import storage
from tether.scenes.grasps import Stall

PREFIX = "/grasps/stalled/"


def record(name: str, stall: Stall) -> None:
    """Remember that the grasp `stall` of object `name` stalled on its way down."""
    storage().setdefault(PREFIX + name, []).append(stall)


def of(name: str) -> tuple[Stall, ...]:
    """The stalled grasps of object `name` this episode, oldest first."""
    return tuple(storage().get(PREFIX + name, ()))
