"""Experiences: what long-term memory keeps about an episode, and rules distilled from them.

An `Experience` lives in one of three partitions (SOMA's dual memory plus Harness VLA's global
rules):

    successes   an episode that achieved its task: the parameters that worked and its trace
    failures    an episode that did not, with a diagnosis and its error codes
    rules       a "success rule" or "failure model": a parameter change proposed for a situation,
                with the evidence for and against it (`support`, `against`, `confidence`)

Every experience is retrieved by the embedding of its `key`: the instruction and the scene's
objects, rendered the same way as the retrieve node's default query (`key_text`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from typing import Any

SUCCESSES, FAILURES, RULES = "successes", "failures", "rules"
PARTITIONS = (SUCCESSES, FAILURES, RULES)


def key_text(instruction: str, objects: list[str]) -> str:
    """The text an experience is found by: `<instruction> Objects: a, b, c`."""
    return f"{instruction} Objects: {', '.join(objects)}"


def new_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass
class Experience:
    """One entry of the long-term store (see the module docstring for the partitions)."""

    partition: str
    task: str
    instruction: str
    objects: list[str]
    outcome: str  # "success" or "failure" (a rule: "rule")
    diagnosis: str = ""
    error_codes: list[str] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)  # the command/event trace of the episode
    params: dict[str, Any] = field(default_factory=dict)  # parameters used (that worked)
    metadata: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""
    support: int = 0  # episodes that went well following this entry
    against: int = 0  # episodes that went badly following it
    count: int = 1  # episodes merged into this entry (near-duplicates)
    id: str = field(default_factory=new_id)
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)

    @property
    def key(self) -> str:
        return key_text(self.instruction, self.objects)

    @property
    def confidence(self) -> float:
        """Laplace-smoothed share of supporting evidence: 0.5 with none, toward 1 or 0 with more."""
        return (self.support + 1) / (self.support + self.against + 2)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Experience:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def brief(self) -> dict[str, Any]:
        """What a retrieval hit carries onto the blackboard (no trace)."""
        return {"id": self.id, "partition": self.partition, "task": self.task,
                "instruction": self.instruction, "outcome": self.outcome,
                "diagnosis": self.diagnosis, "error_codes": list(self.error_codes),
                "params": dict(self.params), "confidence": round(self.confidence, 3),
                "count": self.count}
