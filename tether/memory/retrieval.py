"""Retrieval: find the experiences relevant to this episode and turn them into advice.

`retrieve` takes a query (the retrieve node renders its template with
`tether.blackboard.references`), searches each partition of the store for its top `k` entries at
or above a similarity `threshold`, and writes:

    /memory/retrieved        {query, successes: [...], failures: [...], rules: [...]}: each hit
                             is `Experience.brief()` plus its `similarity`, best first
    /memory/advice           {NAME: {value, source}} for every parameter memory may choose
    /memory/params/NAME      the chosen value of each parameter (trees read ${/memory/params/NAME})

`advise` chooses each parameter (the tree names them, with their defaults) in this order:
1. the most similar retrieved **success** that recorded the parameter supplies its value
   (source `success:ID`): do again what worked here;
2. else the most confident retrieved **rule** proposing a value for it (source `rule:ID`), among
   rules with confidence >= `MIN_CONFIDENCE` whose value is not already among the retrieved
   **failures'** values for it: follow a failure model, but never repeat what failed here;
3. else the tree's default (source `default`).
"""

from __future__ import annotations

from typing import Any

from tether.blackboard.episode import storage
from tether.memory.experience import FAILURES, PARTITIONS, RULES, SUCCESSES, key_text
from tether.memory.store import ExperienceStore, Hit

RETRIEVED_KEY, ADVICE_KEY, PARAMS_PREFIX = "/memory/retrieved", "/memory/advice", "/memory/params/"
DEFAULT_QUERY = key_text("${/task/instruction}", ["${/scene/entities}"])
MIN_CONFIDENCE = 0.3


def _plain(value: Any) -> Any:
    """Tuples as lists (recursively), so a value compares equal to its JSON round trip."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _same(a: Any, b: Any) -> bool:
    """Parameter values compare equal (lists and tuples alike, floats to 1e-9)."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) < 1e-9
    return a == b


def advise(hits: dict[str, list[Hit]], defaults: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Choose a value and its source for every parameter in `defaults` (see the docstring)."""
    advice: dict[str, dict[str, Any]] = {}
    for name, default in defaults.items():
        success = next((h for h in hits.get(SUCCESSES, []) if name in h.experience.params), None)
        if success is not None:
            advice[name] = {"value": success.experience.params[name],
                            "source": f"success:{success.experience.id}"}
            continue
        failed = [h.experience.params[name] for h in hits.get(FAILURES, [])
                  if name in h.experience.params]
        rules = sorted((h for h in hits.get(RULES, []) if name in h.experience.params
                        and h.experience.confidence >= MIN_CONFIDENCE
                        and not any(_same(h.experience.params[name], f) for f in failed)),
                       key=lambda h: (-h.experience.confidence, -h.similarity))
        if rules:
            advice[name] = {"value": rules[0].experience.params[name],
                            "source": f"rule:{rules[0].experience.id}"}
        else:
            advice[name] = {"value": default, "source": "default"}
    return advice


def retrieve(store: ExperienceStore | None, query: str, *, k: int, threshold: float,
             defaults: dict[str, Any]) -> dict[str, Any]:
    """Search the store (None: memory disabled) and write the retrieval keys; returns the hits."""
    hits = store.search(query, k=k, threshold=threshold) if store is not None else {}
    bb = storage()
    bb[RETRIEVED_KEY] = {"query": query, **{
        p: [{**h.experience.brief(), "similarity": round(h.similarity, 4)}
            for h in hits.get(p, [])] for p in PARTITIONS}}
    advice = advise(hits, {name: _plain(v) for name, v in defaults.items()})
    bb[ADVICE_KEY] = advice
    for name, chosen in advice.items():
        bb[PARAMS_PREFIX + name] = chosen["value"]
    return bb[RETRIEVED_KEY]


def memory_params() -> dict[str, Any]:
    """The parameters memory chose in this episode (from /memory/params/...)."""
    return {k[len(PARAMS_PREFIX):]: v for k, v in storage().items() if k.startswith(PARAMS_PREFIX)}
