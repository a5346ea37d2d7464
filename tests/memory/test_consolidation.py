"""Consolidation: store or merge, evidence on followed advice, failure models, and SOMA stage 2
correction of older failures when a later success used other parameters."""

from __future__ import annotations

import numpy as np
import pytest

from tether.memory.consolidation import EpisodeRecord, consolidate
from tether.memory.experience import FAILURES, RULES, SUCCESSES
from tether.memory.store import ExperienceStore
from tether.models.embedders import HashingEmbedder

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


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, items):
        self.texts += list(items)
        return super().embed(items)


def test_an_episode_whose_key_is_new_or_already_stored_is_consolidated_without_embedding(
        tmp_path):
    embedder = CountingEmbedder()
    store = ExperienceStore(tmp_path / "m.db", embedder)
    first = consolidate(store, episode(True, [0, 0, 0.1], run="a"))
    again = consolidate(store, episode(True, [0, 0, 0.1], run="b"))
    failed = consolidate(store, episode(False, [0, 0, 0.2], run="c"))
    assert embedder.texts == []
    assert again.merged and again.id == first.id and store.get(first.id).count == 2
    assert failed.rule is not None and not failed.merged
    pending = store.conn.execute("SELECT COUNT(*) FROM experiences WHERE length(vector) = 0")
    assert pending.fetchone()[0] == 3  # the success, the failure and its rule
    hits = store.search("put the cheese on the plate Objects: cheese, plate", k=5)
    assert embedder.texts[:3] == ["put the cheese on the plate Objects: cheese, plate"] * 3
    assert [h.experience.id for h in hits[SUCCESSES]] == [first.id]
    assert [h.experience.id for h in hits[FAILURES]] == [failed.id]
    assert [h.experience.id for h in hits[RULES]] == [failed.rule]


def test_a_near_duplicate_with_another_key_is_merged_by_embedding_similarity(tmp_path):
    embedder = CountingEmbedder()
    store = ExperienceStore(tmp_path / "m.db", embedder)
    first = consolidate(store, episode(False, [0, 0, 0.1], run="a"))
    reworded = episode(False, [0, 0, 0.1], run="b")
    reworded.instruction = "put the cheese on the plate please"
    key = "put the cheese on the plate please Objects: cheese, plate"
    similarity = float(np.dot(*HashingEmbedder().embed([key, store.get(first.id).key])))
    assert 0.8 < similarity < 0.97
    kept_apart = consolidate(store, reworded, merge_threshold=0.97)
    assert not kept_apart.merged and embedder.texts[0] == key
    reworded.run_id = "c"
    merged = consolidate(store, reworded, merge_threshold=0.8)
    assert merged.merged and merged.id == kept_apart.id  # the identical key is the most similar
    assert store.get(kept_apart.id).metadata["runs"] == ["b", "c"]
    reworded.instruction, reworded.run_id = "put the cheese on the plate, then stop", "d"
    assert consolidate(store, reworded, merge_threshold=0.8).id == first.id  # 0.86 beats 0.83
    assert store.get(first.id).metadata["runs"] == ["a", "d"]
