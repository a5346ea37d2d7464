"""open_drawer.yaml: the articulated-object tree opens LIBERO's cabinet drawers, bottom included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.session.run import RunConfig, run
from tether.session.session import SessionConfig
from tether.trees.compiler import LIBRARY, compile_tree, goal_bindings, read_tree_file

TREE = LIBRARY / "open_drawer.yaml"


def test_open_drawer_binds_its_drawer_from_an_open_goal():
    tf = read_tree_file(TREE)
    goal = [("open", "wooden_cabinet_1_middle_region")]
    assert goal_bindings(tf, goal) == {"drawer": "wooden_cabinet_1_middle_region"}
    assert compile_tree(TREE, placeholders=True).nodes >= 1


@pytest.mark.slow
@pytest.mark.parametrize("task", [
    "libero_goal/open_the_middle_drawer_of_the_cabinet",
    # the handle 4.6 cm above the table: the hand must clear the table
    "tether/open_the_bottom_drawer_of_the_cabinet",
])
def test_open_drawer_opens_the_drawer_on_libero(task: str, tmp_path: Path):
    record = run(RunConfig(TREE, SessionConfig(task, seed=0, init_state=0, runs=tmp_path)))
    result = record.result
    assert result.success, result.errors
    assert result.tree_status == "SUCCESS"
