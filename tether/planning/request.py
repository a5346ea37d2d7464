"""What a planner is asked: the instruction, the scene as it may see it, memory and failure.

A `PlanRequest` carries everything a plan may depend on, so planners are functions of it: the
instruction; the scene's facts (`tether.scenes.referring.SceneFacts`: names, aliases, positions) and
its entities' geometry and joints (`parts`, which skills are chosen by); images (RGB arrays, for
VLMs); retrieved long-term memory (success exemplars, failure precedents, rules, as
`tether.memory.store.Hit`s' briefs); the short-term memory (the rendered event log of this episode);
the grounded readings of the instruction (`options`, best first: `tether.planning.grounding`);
and, when replanning, what failed (`failure`) and the plan that did.
`Planner` is the protocol every planner implements (`memory`, `llm`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from tether.planning.grounding import Reading
from tether.planning.plan import Plan
from tether.planning.skills import Parts
from tether.scenes.referring import SceneFacts
from tether.trees.values import Resolver


@dataclass
class PlanRequest:
    instruction: str
    facts: SceneFacts
    resolve: Resolver | None = None
    images: list[np.ndarray] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)  # retrieved experiences (briefs)
    events: str = ""  # the short-term event log, rendered
    failure: str = ""  # what went wrong, when replanning
    previous: Plan | None = None  # the plan that failed, when replanning
    # what skill selection knows of the entities (`tether.planning.skills.parts_of`)
    parts: Parts = field(default_factory=dict)
    options: list[Reading] = field(default_factory=list)  # grounded readings, best first


class Planner(Protocol):
    name: str

    def plan(self, request: PlanRequest) -> Plan:
        """A checked plan for the request; `PlanError`/`TetherError` when there is none."""
