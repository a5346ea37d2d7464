"""Diagnosis: why an episode failed, and which parameter change might fix it.

The default `diagnose` is rule-based (Nav2 style: by error code). It reads the episode's first
error (the root cause; later errors are usually consequences), names the cause in words, and
proposes a `remedy`: new values for the parameters the tree let memory choose (the retrieve
node's `defaults`), never for anything else. A remedy skips values already `tried` (and failed)
for this task, so repeated failures walk through the alternatives.

    first error                    remedy, by parameter
    STUCK, UNREACHABLE             a 3-vector named *approach*: the next untried direction of
                                   `approach_directions` (same length); an int *steps: x1.5
    EMPTY_GRASP, CONDITION_FAILED  an int *attempts: +1
    TIMEOUT, BUDGET_EXHAUSTED      an int *steps or *budget: x1.5
    anything else, or none         none (the cause is reported as is)

A `Diagnoser` is any callable with `diagnose`'s signature (keyword arguments, `events` the
episode's short-term log); `tether.memory.llm_diagnosis.LLMDiagnoser` asks an LLM through the
planner's chat backend and falls back to this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tether.blackboard.episode import (
    BUDGET_EXHAUSTED,
    CONDITION_FAILED,
    EMPTY_GRASP,
    STUCK,
    TIMEOUT,
    UNREACHABLE,
)

CAUSES = {
    STUCK: "the motion was blocked",
    UNREACHABLE: "the motion could not reach its target",
    EMPTY_GRASP: "the grasp closed on nothing",
    CONDITION_FAILED: "a guarded condition stopped holding (the object was lost)",
    TIMEOUT: "a step budget ran out",
    BUDGET_EXHAUSTED: "the episode's budget ran out",
}


@dataclass
class Diagnosis:
    """The cause of an outcome in words, the root error, and a proposed parameter change."""

    cause: str
    error: str | None = None
    node: str | None = None
    remedy: dict[str, Any] = field(default_factory=dict)


Diagnoser = Callable[..., Diagnosis]


def approach_directions(length: float) -> list[list[float]]:
    """Approach offsets of `length` m: from above, then from the four sides."""
    r = round(float(length), 6)
    return [[0.0, 0.0, r], [-r, 0.0, 0.0], [r, 0.0, 0.0], [0.0, -r, 0.0], [0.0, r, 0.0]]


def _tried(value: Any, tried: list[Any]) -> bool:
    return any(np.allclose(np.asarray(value, float), np.asarray(t, float)) for t in tried
               if np.shape(t) == np.shape(value))


def _remedy(code: str, params: dict[str, Any], tried: dict[str, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in params.items():
        is_vec = isinstance(value, list | tuple) and len(value) == 3
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if code in (STUCK, UNREACHABLE) and is_vec and "approach" in name:
            seen = [value, *tried.get(name, [])]
            fresh = [d for d in approach_directions(float(np.linalg.norm(value)) or 0.1)
                     if not _tried(d, seen)]
            if fresh:
                out[name] = fresh[0]
        elif code in (STUCK, UNREACHABLE, TIMEOUT, BUDGET_EXHAUSTED) and is_int and (
                name.endswith("steps") or name.endswith("budget")):
            out[name] = int(value * 1.5) + 1
        elif code in (EMPTY_GRASP, CONDITION_FAILED) and is_int and name.endswith("attempts"):
            out[name] = value + 1
    return out


def diagnose(*, success: bool, errors: list[dict], ended_by: str, params: dict[str, Any],
             tried: dict[str, list[Any]], events: Sequence[Any] = ()) -> Diagnosis:
    """Rule-based diagnosis of one episode (see the module docstring; `events` are unused)."""
    if success:
        return Diagnosis("the task succeeded")
    if not errors:
        cause = ("the episode's budget ran out" if ended_by == "budget"
                 else "the tree finished without achieving the task")
        code = BUDGET_EXHAUSTED if ended_by == "budget" else None
        return Diagnosis(cause, code, None, _remedy(code, params, tried) if code else {})
    first = errors[0]
    code, node = first["code"], first["node"]
    cause = f"{CAUSES.get(code, code)} in '{node}' at step {first['step']}: {first['message']}"
    return Diagnosis(cause, code, node, _remedy(code, params, tried))
