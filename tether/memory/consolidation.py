"""Consolidation: after every episode, write what it taught into the long-term store.

`consolidate(store, episode)` runs five steps (SOMA's two stages plus Harness VLA's rules):

1. **Diagnose** the episode (`tether.memory.diagnosis`, rule-based by default; any `Diagnoser`).
2. **Store or merge** it: into `successes` or `failures`, unless a near-duplicate is there (same
   task, outcome, error codes and parameters, key similarity >= `merge_threshold`): then that
   entry's `count` grows and it records this run instead.
3. **Evidence**: every entry whose advice the episode followed (`/memory/advice` sources) gets
   `support` +1 when the episode succeeded, `against` +1 when it failed; a rule's confidence is
   (support + 1) / (support + against + 2).
4. **Rules**: a failure whose diagnosis proposes a remedy adds a rule (or strengthens the same
   rule for the same task): "when <cause>, use <parameters>".
5. **Correction** (SOMA stage 2): after a success, older failures of the same task that used
   different parameters get their diagnosis rewritten to say what worked instead, and are
   marked `corrected_by`; they stop being the last word on that task.

Steps 2 to 5 are one transaction (`ExperienceStore.transaction`): two runs consolidating into
one store at once take turns, so the second finds and merges what the first stored, and a run
killed half-way leaves none of its writes. The diagnosis (maybe a language model's) is done
before it, so the store is not locked while it runs.

Similarity is only computed where a decision depends on it. The candidates of steps 2 and 5 are
read by task from SQLite (step 2: same partition, error codes and parameters; step 5: failures
with other parameters, not yet corrected); an entry whose key text is the episode's own has
similarity 1, and only a candidate with another key text (another phrasing, other objects) makes
consolidation embed the episode's key (`EpisodeKey`) and compare it with the candidate's stored
vector. So an episode of a task seen before with the same instruction and objects, or of a new
task, is stored without loading the embedder; its row is pending (`tether.memory.store`) and is
embedded before the next search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tether.blackboard.events import Event
from tether.errors import TetherError
from tether.memory.diagnosis import Diagnoser, diagnose
from tether.memory.experience import FAILURES, RULES, SUCCESSES, Experience
from tether.memory.store import ExperienceStore

MAX_TRACE = 2000


@dataclass
class EpisodeRecord:
    """What the executive hands to consolidation at the end of an episode."""

    task: str
    instruction: str
    objects: list[str]
    success: bool
    steps: int
    ended_by: str
    errors: list[dict]
    events: list[Event]
    params: dict[str, Any]  # what memory chose (/memory/params)
    advice: dict[str, dict[str, Any]]  # /memory/advice: where each came from
    bindings: dict[str, Any] = field(default_factory=dict)  # the tree's own params
    run_id: str = ""


@dataclass
class ConsolidationReport:
    id: str  # the experience this episode became (or was merged into)
    partition: str
    merged: bool
    diagnosis: str
    evidence: list[str] = field(default_factory=list)  # ids whose support/against changed
    rule: str | None = None
    corrected: list[str] = field(default_factory=list)


def _describe(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "the defaults"


class EpisodeKey:
    """The episode's key text and, once a comparison needed it, its embedding."""

    def __init__(self, store: ExperienceStore, text: str):
        self.store, self.text = store, text
        self.vector: np.ndarray | None = None

    def similarities(self, others: list[Experience]) -> list[float]:
        """Cosine similarity of this key to each experience's key: 1 for the same text, else
        the embeddings' (the key is embedded on first need)."""
        sims = [1.0 if e.key == self.text else None for e in others]
        differ = [e.id for e, s in zip(others, sims, strict=True) if s is None]
        if differ:
            if self.vector is None:
                self.vector = self.store.embed([self.text])[0]
            found = iter(self.store.vectors(differ) @ self.vector)
            sims = [float(next(found)) if s is None else s for s in sims]
        return sims


def _most_similar(key: EpisodeKey, candidates: list[Experience],
                  threshold: float) -> list[Experience]:
    """`candidates` with similarity >= `threshold`, most similar first (oldest first on ties)."""
    sims = key.similarities(candidates)
    ranked = sorted(range(len(candidates)), key=lambda i: -sims[i])
    return [candidates[i] for i in ranked if sims[i] >= threshold]


def consolidate(store: ExperienceStore, episode: EpisodeRecord, *,
                merge_threshold: float = 0.97, correct_threshold: float = 0.9,
                diagnoser: Diagnoser = diagnose) -> ConsolidationReport:
    """Write `episode` into `store` (see the module docstring)."""
    tried: dict[str, list[Any]] = {}
    for old in store.all(FAILURES, task=episode.task):
        for name, value in old.params.items():
            tried.setdefault(name, []).append(value)
    d = diagnoser(success=episode.success, errors=episode.errors, ended_by=episode.ended_by,
                  params=episode.params, tried=tried, events=episode.events)
    partition = SUCCESSES if episode.success else FAILURES
    exp = Experience(
        partition=partition, task=episode.task, instruction=episode.instruction,
        objects=list(episode.objects), outcome="success" if episode.success else "failure",
        diagnosis=d.cause, error_codes=list(dict.fromkeys(e["code"] for e in episode.errors)),
        trace=[e.to_dict() for e in episode.events[-MAX_TRACE:]], params=dict(episode.params),
        metadata={"steps": episode.steps, "ended_by": episode.ended_by,
                  "bindings": {k: str(v) for k, v in episode.bindings.items()},
                  "advice": episode.advice, "runs": [episode.run_id]},
        run_id=episode.run_id)
    key = EpisodeKey(store, exp.key)
    with store.transaction():
        report = _store_or_merge(store, exp, key, merge_threshold, d.cause)
        for source in sorted({a["source"] for a in episode.advice.values()} - {"default"}):
            _, id = source.split(":", 1)
            try:
                store.modify(id, lambda e: _evidence(e, episode.success))
            except TetherError:  # deleted since it was retrieved
                continue
            report.evidence.append(id)
        if d.remedy:
            report.rule = _add_rule(store, episode, d, key)
        if episode.success:
            report.corrected = _correct(store, exp, key, correct_threshold)
    return report


def _store_or_merge(store: ExperienceStore, exp: Experience, key: EpisodeKey, threshold: float,
                    cause: str) -> ConsolidationReport:
    same = [old for old in store.all(exp.partition, task=exp.task)
            if old.error_codes == exp.error_codes and old.params == exp.params]
    for old in _most_similar(key, same, threshold)[:1]:
        def merge(e: Experience) -> None:
            e.count += 1
            e.metadata.setdefault("runs", []).append(exp.run_id)

        store.modify(old.id, merge)
        return ConsolidationReport(old.id, exp.partition, True, cause)
    store.add(exp, key.vector)
    return ConsolidationReport(exp.id, exp.partition, False, cause)


def _evidence(e: Experience, success: bool) -> None:
    if success:
        e.support += 1
    else:
        e.against += 1


def _add_rule(store: ExperienceStore, episode: EpisodeRecord, d, key: EpisodeKey) -> str:
    for old in store.all(RULES, task=episode.task):
        if old.params == d.remedy and old.error_codes == [d.error]:
            store.modify(old.id, lambda e: setattr(e, "count", e.count + 1))
            return old.id
    text = (f"Failure model: when {d.cause} with {_describe(episode.params)}, "
            f"use {_describe(d.remedy)}.")
    rule = Experience(partition=RULES, task=episode.task, instruction=episode.instruction,
                      objects=list(episode.objects), outcome="rule", diagnosis=text,
                      error_codes=[d.error] if d.error else [], params=dict(d.remedy),
                      metadata={"from_params": dict(episode.params), "node": d.node,
                                "runs": [episode.run_id]}, run_id=episode.run_id)
    store.add(rule, key.vector)  # the rule's key is the episode's
    return rule.id


def _correct(store: ExperienceStore, success: Experience, key: EpisodeKey,
             threshold: float) -> list[str]:
    failed = [old for old in store.all(FAILURES, task=success.task)
              if old.params != success.params and not old.metadata.get("corrected_by")]
    corrected = []
    for old in _most_similar(key, failed, threshold):
        note = (f" Corrected by run {success.run_id or success.id}: "
                f"{_describe(success.params)} succeeded where {_describe(old.params)} failed.")

        def rewrite(e: Experience, note: str = note) -> None:
            e.diagnosis += note
            e.metadata["corrected_by"] = success.id
            e.metadata["strategy_that_worked"] = dict(success.params)

        store.modify(old.id, rewrite)
        corrected.append(old.id)
    return corrected
