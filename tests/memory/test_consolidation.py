"""Consolidation: store or merge, evidence on followed advice, failure models, and SOMA stage 2
correction of older failures when a later success used other parameters."""

from __future__ import annotations

import pytest

from tether.memory.consolidation import EpisodeRecord, consolidate
from tether.memory.experience import FAILURES, RULES, SUCCESSES
from tether.memory.store import ExperienceStore

STUCK = {"code": "STUCK", "node": "reach grasp point", "message": "no progress", "step": 55}


def episode(success: bool, approach: list, source: str = "default", task: str = "t",
            run: str = "r") -> EpisodeRecord:
    return EpisodeRecord(task=task, instruction="put the cheese on the plate",
                         objects=["cheese", "plate"], success=success, steps=60,
                         ended_by="tree", errors=[] if success else [STUCK], events=[],
                         params={"approach": approach},
                         advice={"approach": {"value": approach, "source": source}}, run_id=run)


@pytest.fixture
def store(tmp_path):
    return ExperienceStore(tmp_path / "m.db", "hashing")


def test_a_repeated_failure_merges_into_one_entry(store):
    first = consolidate(store, episode(False, [0, 0, 0.1], run="a"))
    again = consolidate(store, episode(False, [0, 0, 0.1], run="b"))
    assert again.merged and again.id == first.id
    assert store.get(first.id).count == 2
    assert store.get(first.id).metadata["runs"] == ["a", "b"]
    assert store.counts()[RULES] == 1 and store.get(first.rule).count == 2


def test_following_a_rule_that_fails_lowers_its_confidence(store):
    rule = consolidate(store, episode(False, [0, 0, 0.1])).rule
    assert store.get(rule).confidence == 0.5
    consolidate(store, episode(False, [-0.1, 0, 0], source=f"rule:{rule}"))
    assert store.get(rule).confidence == pytest.approx(1 / 3)


def test_a_later_success_with_another_strategy_corrects_older_failures_of_the_task(store):
    failed = consolidate(store, episode(False, [0, 0, 0.1]))
    other_task = consolidate(store, episode(False, [0, 0, 0.1], task="other"))
    won = consolidate(store, episode(True, [-0.1, 0, 0], source=f"rule:{failed.rule}"))
    assert won.partition == SUCCESSES and won.corrected == [failed.id]
    corrected = store.get(failed.id)
    assert corrected.metadata["strategy_that_worked"] == {"approach": [-0.1, 0, 0]}
    assert "succeeded where approach=[0, 0, 0.1] failed" in corrected.diagnosis
    assert "corrected_by" not in store.get(other_task.id).metadata
    assert store.get(failed.rule).support == 1
    assert store.counts() == {SUCCESSES: 1, FAILURES: 2, RULES: 2}
