"""The learning measurement: on the shelf scene the default top-down approach fails (the shelf
blocks the descent); with memory the tree succeeds from the second episode on (>= 4 of 5), and
with memory off it keeps failing. Real MiniLM embeddings, one store per test."""

from __future__ import annotations

import pytest

from blackboard.experience import FAILURES, RULES, SUCCESSES
from blackboard.store import ExperienceStore
from scenes.obstacles import SHELF_INSTRUCTION, SHELF_TASK, shelf_scene
from trees.compiler import LIBRARY
from trees.memory import practice

TREE = LIBRARY / "recall_pick_place.yaml"


def episodes(store, n: int = 5, **scene_kwargs) -> list:
    return [practice(TREE, shelf_scene(seed, **scene_kwargs), store, task=SHELF_TASK,
                     instruction=SHELF_INSTRUCTION, budget=600, run_id=f"ep{seed}")
            for seed in range(n)]


@pytest.mark.xdist_group("minilm")
def test_memory_turns_a_failing_grasp_into_success_within_five_episodes(tmp_path, minilm):
    store = ExperienceStore(tmp_path / "memory.db", minilm)
    runs = episodes(store)
    successes = [r.success for r, _ in runs]
    assert successes[0] is False and sum(successes) >= 4
    first, second = runs[0][1], runs[1][1]
    assert first.partition == FAILURES and first.rule is not None
    assert second.partition == SUCCESSES and second.evidence == [first.rule]
    assert second.corrected == [first.id]  # SOMA stage 2: the old failure now says what worked
    assert "succeeded where" in store.get(first.id).diagnosis
    assert store.get(first.rule).support == 1
    assert store.counts() == {SUCCESSES: 1, FAILURES: 1, RULES: 1}  # later runs merged
    assert store.get(second.id).count == 4


def test_with_memory_off_the_task_keeps_failing():
    runs = episodes(None)
    assert [r.success for r, _ in runs] == [False] * 5
    assert all(r.errors[0]["code"] == "STUCK" for r, _ in runs)


@pytest.mark.xdist_group("minilm")
def test_a_failed_rule_is_not_repeated_and_the_next_direction_is_tried(tmp_path, minilm):
    store = ExperienceStore(tmp_path / "memory.db", minilm)
    runs = episodes(store, sides_blocked=("-x",))
    # above: the shelf; -x: the wall; +x: the straight path there crosses the shelf; -y works
    assert [r.success for r, _ in runs] == [False, False, False, True, True]
    approaches = [e.params["approach"] for e in store.all(FAILURES)]
    assert approaches == [[0.0, 0.0, 0.1], [-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]]
    assert store.get(runs[3][1].id).params == {"approach": [0.0, -0.1, 0.0]}
