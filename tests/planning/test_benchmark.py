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
