"""`tether.scenes.bddl`: LIBERO's task files read, checked with located errors, and written back."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.errors import TetherError
from tether.scenes.bddl import parse_problem, read_problem
from tether.scenes.catalogue import list_tasks, own_tasks

GOOD = Path("scenes/tasks/put_the_middle_bowl_on_the_plate.bddl").read_text()


def test_every_libero_and_tether_task_file_reads_and_round_trips():
    for task in [*list_tasks(), *own_tasks()]:
        problem = read_problem(task.bddl_file)
        again = parse_problem(problem.to_bddl())
        assert (again.goal, again.init, again.objects, again.fixtures) == (
            problem.goal, problem.init, problem.objects, problem.fixtures)
        assert [r.full_name for r in again.regions] == problem.region_names()


def test_a_goal_and_objects_read_as_libero_reads_them():
    problem = parse_problem(GOOD)
    assert problem.problem_class == "libero_tabletop_manipulation"
    assert problem.goal == [("on", "akita_black_bowl_2", "plate_1")]
    assert problem.objects["akita_black_bowl"] == [f"akita_black_bowl_{i}" for i in (1, 2, 3)]
    assert problem.category_of("plate_1") == "plate"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("(And (On akita_black_bowl_2 plate_1))", "(And (Onto akita_black_bowl_2 plate_1))",
         "unknown predicate 'onto' (did you mean 'on'?)"),
        ("(And (On akita_black_bowl_2 plate_1))", "(And (On akita_black_bowl_2 plate_2))",
         "'plate_2' is not a declared object, fixture or region (did you mean 'plate_1'?)"),
        ("plate_1 - plate", "plate_1 - plat", "unknown object category 'plat' (did you mean "
                                              "'plate'?)"),
        ("(problem LIBERO_Tabletop_Manipulation)", "(problem LIBERO_Tabletop_Manip)",
         "unknown problem class 'libero_tabletop_manip'"),
        ("  (:obj_of_interest", "  (:perturbations (glare 0.5))\n  (:obj_of_interest",
         "tether does not understand section ':perturbations' (did you mean "
         "':perturbation_config'?)"),
        ("(:target main_table)", "(:target main_table) (:height 3)", "unknown key ':height'"),
        ("(On plate_1 main_table_plate_region)", "(On plate_1 main_table_plate_regoin)",
         "did you mean 'main_table_plate_region'?"),
        ("(And (On akita_black_bowl_2 plate_1))\n  )", "(And (On akita_black_bowl_2 plate_1)\n  )",
         "is never closed"),
    ],
)
def test_what_tether_does_not_understand_is_a_located_error(tmp_path, old, new, message):
    assert old in GOOD
    path = tmp_path / "bad.bddl"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(TetherError) as err:
        read_problem(path)
    text = str(err.value)
    assert message in text
    assert text.startswith(f"{path}:") and text.split(":")[1].isdigit()


def test_a_missing_file_is_a_tether_error():
    with pytest.raises(TetherError, match="no BDDL file"):
        read_problem("nowhere.bddl")
