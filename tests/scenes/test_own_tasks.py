"""tether's own tasks (`tether/NAME`): LIBERO-format BDDL plus a sidecar of phrasings, aliases."""

from __future__ import annotations

import pytest

from tether.errors import TetherError
from tether.scenes.bddl import read_problem
from tether.scenes.catalogue import get_task, own_tasks

REQUIRED_KINDS = {"look-alike targets", "clutter", "3-step chain", "stacking",
                  "spatial relation (between)", "spatial relation (next to)", "articulated object"}


def test_there_are_at_least_eight_tasks_covering_every_required_kind():
    tasks = own_tasks()
    assert len(tasks) >= 8
    assert REQUIRED_KINDS <= {t.kind for t in tasks}
    assert all(t.sampled and t.num_init_states == 50 for t in tasks)


def test_each_task_has_several_phrasings_and_its_own_instruction_first():
    for task in own_tasks():
        assert len(task.instructions) >= 3
        assert task.instructions[0] == task.language


def test_every_alias_names_an_entity_the_task_declares():
    for task in own_tasks():
        problem = read_problem(task.bddl_file)
        names = {*problem.object_names(), *problem.region_names(),
                 *(n for ns in problem.fixtures.values() for n in ns)}
        assert {c for _, c in task.aliases} <= names, task.id


def test_look_alike_targets_are_identical_objects_told_apart_by_position():
    problem = read_problem(get_task("tether/put_the_middle_bowl_on_the_plate").bddl_file)
    assert len(problem.objects["akita_black_bowl"]) == 3
    assert dict(get_task("tether/put_the_middle_bowl_on_the_plate").aliases)["middle bowl"] == \
        problem.goal[0][1]


def test_the_chain_has_three_goal_literals():
    assert len(read_problem(get_task("tether/chain_bowl_ramekin_cream_cheese").bddl_file).goal) == 3


def test_a_task_is_addressed_by_name_index_or_path():
    by_name = get_task("tether/stack_the_near_bowl_on_the_far_bowl")
    assert get_task(f"tether/{by_name.index}") == by_name
    by_path = get_task(str(by_name.bddl_file))
    assert by_path.id == "file/stack_the_near_bowl_on_the_far_bowl"
    assert by_path.language == by_name.language


def test_unknown_own_task_has_a_hint():
    with pytest.raises(TetherError, match="did you mean 'put_the_middle_bowl_on_the_plate'"):
        get_task("tether/put_the_midle_bowl_on_the_plate")


@pytest.mark.slow
def test_a_sampled_init_state_is_reproducible_and_differs_between_indices():
    from tether.scenes.libero_scene import LiberoScene

    task = get_task("tether/put_the_middle_bowl_on_the_plate")
    scene = LiberoScene(task, init_state=1, seed=0)
    try:
        first = scene.pose_of("middle bowl").pos
        scene.reset(init_state=1)
        again = scene.pose_of("middle bowl").pos
        scene.reset(init_state=2)
        other = scene.pose_of("middle bowl").pos
    finally:
        scene.close()
    assert (first == again).all()
    assert not (first == other).all()
