"""An LLM diagnoser: the episode put to a chat backend, the reply checked strictly.

`LLMDiagnoser(backend)` is a `Diagnoser` (same call as `tether.memory.diagnosis.diagnose`). For a
failed episode it sends the backend (`tether.models.planners`: a chat-completions server, a local
Qwen-VL) a compact prompt: the outcome, the errors, the short-term event log as "At step k, ..."
lines (the last `max_events`), the parameters memory may change with their current values, and
the values already tried. It asks for one JSON object:

    {"cause": "<one sentence>", "remedy": {"<parameter>": <new value>}}

The reply is only parsed as JSON, never evaluated. A remedy may name only the given parameters,
each value of the current value's type and shape (an int for an int, a list of as many numbers
for a list of numbers, ...), neither the current value nor one already tried. Anything else (a
reply that is not that object, an unknown parameter, a wrong type, a tried value, the backend
failing or timing out) falls back to the rule-based diagnosis, whose cause then starts with
"(LLM diagnosis unusable: <reason>; rule-based:)". A succeeded episode is not sent.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tether.blackboard.events import Event
from tether.errors import TetherError
from tether.memory.diagnosis import Diagnoser, Diagnosis, diagnose
from tether.models.planners import ChatBackend, ChatMessage

SYSTEM = (
    "You diagnose why a robot manipulation episode failed, from its errors and event log, and "
    "propose new values for the parameters memory may change. Answer with one JSON object and "
    'nothing else: {"cause": "<one sentence>", "remedy": {"<parameter>": <new value>}}. Use only '
    "the parameters listed; keep each value's type and length; never propose a current or "
    "already tried value; give an empty remedy when no listed parameter would help.")
MAX_CAUSE = 500


class UnusableReply(ValueError):
    """Why an LLM reply cannot be used as a diagnosis."""


def _json(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "))


def build_prompt(*, errors: list[dict], ended_by: str, params: dict[str, Any],
                 tried: dict[str, list[Any]], events: Sequence[Event] = (),
                 max_events: int = 40) -> str:
    """The user message for a failed episode (see the module docstring)."""
    ended = "the step budget ran out" if ended_by == "budget" else "the tree finished"
    lines = [f"Outcome: failure ({ended} without achieving the task)."]
    lines.append("Errors (the first is usually the root cause):" if errors else "Errors: none.")
    lines += [f"- {e['code']} in '{e['node']}' at step {e['step']}: {e['message']}"
              for e in errors]
    if events:
        shown = list(events)[-max_events:]
        left = len(events) - len(shown)
        lines.append("Event log" + (f" (the last {len(shown)}; {left} earlier left out)"
                                    if left else "") + ":")
        lines += [e.render() for e in shown]
    if params:
        lines.append("Parameters memory may change (current values):")
        lines += [f"- {name}: {_json(value)}" for name, value in params.items()]
    else:
        lines.append("Parameters memory may change: none (the remedy must be empty).")
    done = {k: v for k, v in tried.items() if k in params and v}
    if done:
        lines.append("Already tried (and failed):")
        lines += [f"- {name}: " + ", ".join(_json(v) for v in values)
                  for name, values in done.items()]
    return "\n".join(lines)


def _reject_constant(name: str) -> Any:
    raise UnusableReply(f"the reply contains {name}, which is not a number")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _conform(value: Any, current: Any, where: str) -> Any:
    """`value` in `current`'s type and shape, or `UnusableReply`."""
    if isinstance(current, bool) or current is None or isinstance(current, str):
        if type(value) is not type(current):
            raise UnusableReply(f"{where} must be {_kind(current)}, got {_json(value)}")
        return value
    if isinstance(current, int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise UnusableReply(f"{where} must be an integer, got {_json(value)}")
        return value
    if isinstance(current, float):
        if not _number(value):
            raise UnusableReply(f"{where} must be a number, got {_json(value)}")
        return float(value)
    if isinstance(current, list | tuple):
        if not isinstance(value, list) or len(value) != len(current):
            raise UnusableReply(f"{where} must be a list of {len(current)}, got {_json(value)}")
        return [_conform(v, c, f"{where}[{i}]") for i, (v, c) in enumerate(zip(value, current,
                                                                               strict=True))]
    if isinstance(current, dict):
        if not isinstance(value, dict) or set(value) != set(current):
            raise UnusableReply(f"{where} must be an object with keys {sorted(current)}, "
                                f"got {_json(value)}")
        return {k: _conform(value[k], current[k], f"{where}.{k}") for k in current}
    raise UnusableReply(f"{where} has a current value of a kind the LLM may not change")


def _kind(current: Any) -> str:
    return {bool: "true or false", str: "a string"}.get(type(current), "null")


def _same(a: Any, b: Any) -> bool:
    if _number(a) and _number(b):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


def parse_reply(reply: str, params: dict[str, Any],
                tried: dict[str, list[Any]]) -> tuple[str, dict[str, Any]]:
    """(cause, remedy) from the LLM's reply, checked strictly; `UnusableReply` says why not."""
    text = reply.strip()
    fenced = FENCE.match(text)
    text = fenced.group(1).strip() if fenced else text
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        shown = reply if len(reply) <= 60 else reply[:57] + "..."
        raise UnusableReply(f"not JSON ({exc.msg}): {shown!r}") from None
    if not isinstance(data, dict) or set(data) != {"cause", "remedy"}:
        raise UnusableReply('expected an object with exactly "cause" and "remedy"')
    cause, remedy = data["cause"], data["remedy"]
    if not isinstance(cause, str) or not cause.strip():
        raise UnusableReply('"cause" must be a non-empty string')
    if not isinstance(remedy, dict):
        raise UnusableReply('"remedy" must be an object')
    out = {}
    for name, value in remedy.items():
        if name not in params:
            raise UnusableReply(f"unknown parameter '{name}' (memory may change: "
                                f"{', '.join(params) or 'none'})")
        value = _conform(value, params[name], name)
        if _same(value, params[name]):
            raise UnusableReply(f"{name}={_json(value)} is the value that just failed")
        if any(_same(value, t) for t in tried.get(name, [])):
            raise UnusableReply(f"{name}={_json(value)} was already tried")
        out[name] = value
    cause = " ".join(cause.split())
    return (cause if len(cause) <= MAX_CAUSE else cause[:MAX_CAUSE - 3] + "..."), out


@dataclass
class LLMDiagnoser:
    """A `Diagnoser` asking `backend`, `fallback` when the reply is unusable (module docstring)."""

    backend: ChatBackend
    fallback: Diagnoser = diagnose
    max_events: int = 40

    @property
    def name(self) -> str:
        return f"llm:{self.backend.name}"

    def __call__(self, *, success: bool, errors: list[dict], ended_by: str,
                 params: dict[str, Any], tried: dict[str, list[Any]],
                 events: Sequence[Event] = ()) -> Diagnosis:
        rules = self.fallback(success=success, errors=errors, ended_by=ended_by, params=params,
                              tried=tried, events=events)
        if success:
            return rules
        prompt = build_prompt(errors=errors, ended_by=ended_by, params=params, tried=tried,
                              events=events, max_events=self.max_events)
        try:
            reply = self.backend.complete([ChatMessage("system", SYSTEM),
                                           ChatMessage("user", prompt)])
            cause, remedy = parse_reply(reply, params, tried)
        except (TetherError, UnusableReply) as exc:
            why = f"the backend failed: {exc}" if isinstance(exc, TetherError) else str(exc)
            return Diagnosis(f"(LLM diagnosis unusable: {why}; rule-based:) {rules.cause}",
                             rules.error, rules.node, rules.remedy)
        return Diagnosis(cause, rules.error, rules.node, remedy)
