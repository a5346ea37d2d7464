"""The bottom layer (`tether/errors.py`): the error family and the checks every file reader
shares (finite numbers, nesting depth)."""

from __future__ import annotations

import pytest

from tether.errors import MAX_NESTING, TetherError, TickError, data_problem, key_path


def test_a_tick_error_is_one_line_with_the_node_and_its_origin():
    cause = TetherError("blackboard key '/user/nobody' has not been written")
    error = TickError("pick/holding", "trees/x.yaml:7", cause)
    assert str(error) == ("trees/x.yaml:7: in 'pick/holding': blackboard key '/user/nobody' has "
                          "not been written")
    assert str(TickError("wait", None, ValueError("bad"))) == "in 'wait': ValueError: bad"


@pytest.mark.parametrize(("data", "problem"), [
    ({"a": [1, 2.5, "x"]}, None),
    (float("nan"), ((), "must be a finite number, got nan")),
    ({"a": [1, float("inf")]}, (("a", 1), "must be a finite number, got inf")),
    ({"b": {"c": -float("inf")}}, (("b", "c"), "must be a finite number, got -inf")),
])
def test_data_problem_finds_a_number_that_is_not_finite(data, problem):
    assert data_problem(data) == problem


def test_data_problem_finds_nesting_deeper_than_the_limit_without_recursing():
    def nested(depth):
        data: list = []
        for _ in range(depth - 1):
            data = [data]
        return data

    assert data_problem(nested(MAX_NESTING)) is None
    path, message = data_problem(nested(MAX_NESTING + 1))
    assert (path, message) == ((0,) * MAX_NESTING, "nested more than 150 levels deep")
    assert data_problem(nested(100_000))[1] == "nested more than 150 levels deep"


def test_key_path_reads_like_the_file():
    assert key_path(["subtasks", 0, "steps", 2, "move_to"]) == "subtasks[0].steps[2].move_to"
    assert key_path([1, "a"]) == "[1].a"
    assert key_path([]) == ""
    assert key_path(["root", *["invert"] * 20, "wait"]) == (
        "root.invert.invert.invert.invert.invert.invert.invert…invert.wait")
