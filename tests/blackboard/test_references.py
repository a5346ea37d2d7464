"""Blackboard references (`blackboard/references.py`): one `${/key}` syntax for values and text."""

from __future__ import annotations

import pytest

from tether.blackboard.episode import new_episode, storage
from tether.blackboard.references import MissingKey, Ref, as_ref, deref, parse_text, render
from tether.errors import TetherError


@pytest.fixture(autouse=True)
def _episode():
    new_episode(task="demo", instruction="put the bowl on the plate", params={},
                entities=["akita_black_bowl_1", "plate_1"])


def test_text_is_parsed_into_literal_pieces_and_refs():
    assert parse_text("go to ${/user/place} now ${/task/name}") == (
        "go to ", Ref("/user/place"), " now ", Ref("/task/name"))
    assert parse_text("no reference, $5 and {param}") == ("no reference, $5 and {param}",)
    assert parse_text("") == ()


@pytest.mark.parametrize(("text", "bad"), [
    ("${user/place}", "${user/place}"),
    ("at ${/user/place", "${/user/place"),
    ("${/user/two words}", "${/user/two words}"),
    ("${/user/1st}", "${/user/1st}"),
    ("${}", "${}"),
])
def test_a_malformed_reference_is_an_error_naming_it(text, bad):
    with pytest.raises(TetherError) as caught:
        parse_text(text)
    assert str(caught.value) == (f"malformed blackboard reference '{bad}': write ${{/key}} with "
                                 "a key like /user/target")


def test_a_value_is_a_ref_only_when_it_is_exactly_one_reference():
    assert as_ref("${/memory/params/approach}") == Ref("/memory/params/approach")
    assert as_ref(Ref("/user/x")) == Ref("/user/x")
    assert as_ref("at ${/user/x}") is None
    assert as_ref("${/user/x}${/user/y}") is None
    assert as_ref(3) is None


def test_render_fills_in_values_and_joins_lists():
    storage()["/user/place"] = "plate_1"
    assert render("${/task/instruction}: ${/scene/entities} -> ${/user/place}") == (
        "put the bowl on the plate: akita_black_bowl_1, plate_1 -> plate_1")


def test_deref_reads_refs_inside_lists_and_mappings():
    storage()["/user/offset"] = [0.0, 0.0, 0.1]
    assert deref({"a": [Ref("/user/offset"), 2]}) == {"a": [[0.0, 0.0, 0.1], 2]}


def test_reading_a_key_nobody_wrote_is_one_missing_key_for_values_and_text():
    for read in (lambda: deref(Ref("/user/nobody")), lambda: render("at ${/user/nobody}")):
        with pytest.raises(MissingKey) as caught:
            read()
        assert str(caught.value) == "blackboard key '/user/nobody' has not been written"
        assert isinstance(caught.value, TetherError)
