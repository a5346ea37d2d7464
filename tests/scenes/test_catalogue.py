"""`tether.scenes.catalogue`: LIBERO's four suites addressed as SUITE/TASK_NAME or SUITE/INDEX."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes.catalogue import SUITES, get_task, list_tasks, suite_tasks


def test_the_catalogue_has_ten_tasks_in_each_of_the_four_suites():
    tasks = list_tasks()
    assert len(tasks) == 40
    assert [t.suite for t in tasks[::10]] == list(SUITES)
    assert all(t.bddl_file.is_file() and t.init_states_file.is_file() for t in tasks)
    assert len({t.id for t in tasks}) == 40


def test_a_task_resolves_by_name_and_by_index_to_the_same_entry():
    by_name = get_task("libero_goal/put_the_bowl_on_the_plate")
    assert by_name == get_task("libero_goal/8")
    assert by_name.index == 8 and by_name.suite == "libero_goal"
    assert by_name.language == "put the bowl on the plate"
    assert by_name.id == "libero_goal/put_the_bowl_on_the_plate"
    assert by_name.bddl_file.name == "put_the_bowl_on_the_plate.bddl"


def test_a_name_may_be_written_with_spaces_or_another_case():
    assert get_task("libero_goal/Put the bowl on the plate").index == 8


def test_libero_10_names_keep_their_scene_prefix():
    names = [t.name for t in suite_tasks("libero_10")]
    assert all(n.split("_")[0] in {"LIVING", "KITCHEN", "STUDY"} for n in names)


def test_init_states_load_with_torch_weights_only_false():
    states = get_task("libero_goal/8").init_states()
    assert isinstance(states, np.ndarray) and states.shape == (50, 79)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("libero_gol/1", "unknown suite 'libero_gol' (did you mean 'libero_goal'?)"),
        ("libero_goal/put_the_bowl_on_plate", "did you mean 'put_the_bowl_on_the_plate'"),
        ("libero_goal/10", "tasks 0..9, not 10"),
        ("put_the_bowl_on_the_plate", "not SUITE/TASK_NAME, SUITE/INDEX"),
        ("libero_goal/", "not SUITE/TASK_NAME, SUITE/INDEX"),
    ],
)
def test_unknown_suites_and_tasks_raise_tether_errors_with_a_hint(spec, message):
    with pytest.raises(TetherError) as err:
        get_task(spec)
    assert message in str(err.value)
