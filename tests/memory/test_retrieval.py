"""Retrieval advice: a success supplies its parameters, else the most confident rule whose value
has not failed here, else the default; the keys are written to the blackboard."""

from __future__ import annotations

import pytest

from tether.blackboard.episode import new_episode, storage
from tether.blackboard.references import MissingKey, render
from tether.memory.experience import FAILURES, RULES, SUCCESSES, Experience
from tether.memory.retrieval import advise, retrieve
from tether.memory.store import ExperienceStore, Hit


def hit(partition: str, params: dict, similarity: float = 0.9, support: int = 0,
        against: int = 0) -> Hit:
    return Hit(Experience(partition=partition, task="t", instruction="i", objects=[],
                          outcome="x", params=params, support=support, against=against),
               similarity)


def test_a_retrieved_success_supplies_its_value():
    s = hit(SUCCESSES, {"approach": [-0.1, 0, 0]})
    advice = advise({SUCCESSES: [s], RULES: [hit(RULES, {"approach": [0, 0.1, 0]})]},
                    {"approach": [0, 0, 0.1]})
    assert advice["approach"] == {"value": [-0.1, 0, 0], "source": f"success:{s.experience.id}"}


def test_the_most_confident_rule_whose_value_has_not_failed_here_is_followed():
    weak = hit(RULES, {"approach": [0.1, 0, 0]}, support=0, against=1)
    failed = hit(RULES, {"approach": [-0.1, 0, 0]}, support=3)
    fresh = hit(RULES, {"approach": [0, -0.1, 0]}, support=1)
    advice = advise({FAILURES: [hit(FAILURES, {"approach": [-0.1, 0, 0]})],
                     RULES: [weak, failed, fresh]}, {"approach": [0, 0, 0.1]})
    assert advice["approach"]["source"] == f"rule:{fresh.experience.id}"


def test_without_relevant_memory_the_default_is_used():
    assert advise({}, {"attempts": 3}) == {"attempts": {"value": 3, "source": "default"}}


def test_retrieve_writes_the_memory_keys(tmp_path):
    new_episode(task="t", instruction="put the bowl on the plate", params={},
                entities=["bowl", "plate"])
    store = ExperienceStore(tmp_path / "m.db", "hashing")
    store.add(Experience(partition=SUCCESSES, task="t", instruction="put the bowl on the plate",
                         objects=["bowl", "plate"], outcome="success", params={"attempts": 5}))
    query = render("${/task/instruction} Objects: ${/scene/entities}")
    retrieve(store, query, k=3, threshold=0.8, defaults={"attempts": 3})
    bb = storage()
    assert bb["/memory/params/attempts"] == 5
    assert bb["/memory/retrieved"]["query"] == "put the bowl on the plate Objects: bowl, plate"
    assert bb["/memory/retrieved"][SUCCESSES][0]["similarity"] > 0.99
    assert bb["/memory/advice"]["attempts"]["source"].startswith("success:")


def test_with_memory_off_retrieve_writes_the_defaults():
    new_episode(task="t", instruction="i", params={}, entities=[])
    retrieve(None, "q", k=3, threshold=0.8, defaults={"approach": (0, 0, 0.1)})
    assert storage()["/memory/params/approach"] == [0, 0, 0.1]
    assert storage()["/memory/retrieved"][RULES] == []


def test_a_template_naming_an_unwritten_key_raises_missing_key():
    new_episode(task="t", instruction="i", params={}, entities=[])
    with pytest.raises(MissingKey, match="/user/nothing"):
        render("${/user/nothing}")
