"""The structured reading of an instruction: clauses, modifiers, where things are named."""

from __future__ import annotations

from tether.planning.clauses import Clauses

IT = frozenset({"it"})


def test_words_fall_in_clauses_split_at_and_then_and_punctuation():
    c = Clauses.of("pick up the bowl on the cookie box and place it on the plate", IT)
    assert c.said == ["pick", "bowl", "on", "cookies", "box", "place", "it", "on", "plate"]
    assert c.clause == [0, 0, 0, 0, 0, 1, 1, 1, 1]


def test_the_and_of_between_does_not_split_a_clause():
    c = Clauses.of("put the ramekin between the plate and the bowl; then close it", IT)
    assert c.said == ["put", "ramekin", "between", "plate", "bowl", "close", "it"]
    assert c.clause == [0, 0, 0, 0, 0, 2, 2]


def test_a_verb_after_an_article_is_a_modifier():
    c = Clauses.of("push the open drawer shut, then open the box")
    assert c.verb_clauses("open") == {2}  # ", then": clause 1 is empty
    assert c.verb_clauses("close") == {0}  # "shut" is said as "close"
    assert c.evidence_words({"open", "drawer", "box"}, {"open"}) == ["drawer", "open", "box"]


def test_names_are_found_whole_before_head_nouns():
    c = Clauses.of("put the yellow and white mug on the plate")
    assert c.whole([["white", "mug"]]) == [3]  # where the name ends
    assert c.mentions([["porcelain", "mug"]]) == [3]  # no whole name: where its head noun is
    assert c.mentions([["plate"]]) == [5]
