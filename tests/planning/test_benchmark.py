"""`benchmarks/planning.py --instructions-of SUITE`: another suite's phrasings of each task,
planned in the given tasks' scenes."""

from __future__ import annotations

import pytest

from tests.benchmark_scripts import load_benchmark

LAN = "libero_spatial_lan/4"


@pytest.fixture(scope="module")
def planning():
    return load_benchmark("planning")


def test_instructions_of_plans_the_other_suites_phrasings_in_the_given_scene(planning,
                                                                              monkeypatch):
    planned = []
    monkeypatch.setattr(planning, "plan_rows", lambda task, k, planner, then, texts: planned.append(
        (task.id, texts)) or [])
    assert planning.main([LAN, "--instructions-of", "libero_spatial"]) == 0
    assert planned == [(
        "libero_spatial_lan/pick_up_the_black_bowl_in_the_top_drawer_of_the_wooden_cabinet_and_"
        "place_it_on_the_plate",
        ["pick up the black bowl in the top drawer of the wooden cabinet and place it on the "
         "plate"])]


def test_instructions_of_a_suite_without_the_task_is_one_error(planning, capsys):
    assert planning.main([LAN, "--instructions-of", "libero_goal"]) == 2
    assert capsys.readouterr().err == (
        "error: --instructions-of: suite 'libero_goal' has no task 'pick_up_the_black_bowl_in_the_"
        "top_drawer_of_the_wooden_cabinet_and_place_it_on_the_plate'; `tether scenes list` lists "
        "them\n")


def test_a_goal_literal_holding_at_the_start_need_not_be_planned(planning):
    """libero_10/8's file also asks `turn_on(flat_stove_1)`, on from the start and never said:
    the plan is grounded without it; a literal that does not hold yet is still required."""
    from tether.planning.planners import PlannerOptions, make_planner, open_planner_store
    from tether.scenes.catalogue import get_task

    planner = make_planner(PlannerOptions(), open_planner_store("none"))
    said, short = planning.plan_rows(get_task("libero_10/8"), 0, planner, texts=[
        "put both moka pots on the stove", "put the moka pot on the right on the stove"])
    assert (said.ok_goal, said.ok_plan, said.why) == (True, True, "")
    assert not short.ok_goal and "turn_on" not in short.why
    assert "goal misses BDDL's on(moka_pot_1, flat_stove_1_cook_region)" in short.why
