"""One vocabulary of object names (`tether.scenes.vocabulary`): referring expressions, the
instructions perturbations write, detector prompts and collected prompts call an object alike."""

from __future__ import annotations

import pytest

from tether.datasets.collect import instruction_for
from tether.scenes.bddl import Problem
from tether.scenes.perturbations.edits import noun as instruction_noun
from tether.scenes.referring import SceneFacts, words
from tether.scenes.vocabulary import NOUNS, category_of, noun, phrase


def problem_with(category: str) -> Problem:
    return Problem("libero_tabletop_manipulation", "", [], {"main_table": ["main_table"]},
                   {category: [f"{category}_1"]}, [], [], [])


def called(entity: str) -> list[str]:
    """The words referring expressions know `entity` by beyond its own name."""
    return [" ".join(n) for n in SceneFacts([entity]).names(entity)[1:]]


@pytest.mark.parametrize("category", sorted(NOUNS))
def test_every_user_calls_a_category_by_its_noun(category):
    name = f"{category}_1"
    assert instruction_noun(problem_with(category), name) == noun(category)
    assert phrase(name) == noun(category)
    assert instruction_for(name) == f"pick up the {noun(category)}"
    assert called(name) == [" ".join(words(noun(category)))]


def test_the_nouns_users_agreed_on_before():
    assert [noun(c) for c in ("akita_black_bowl", "glazed_rim_porcelain_ramekin",
                              "porcelain_mug", "flat_stove", "cookies", "new_salad_dressing")] \
        == ["black bowl", "ramekin", "white mug", "stove", "cookie box", "salad dressing"]
    assert instruction_for("akita_black_bowl_1") == "pick up the black bowl"


def test_a_category_without_an_entry_is_its_own_words():
    assert noun("cream_cheese") == "cream cheese" and phrase("plate_1") == "plate"
    assert called("plate_1") == [] and called("cream_cheese_1") == []


def test_a_book_and_a_caddy_are_what_libero_says_not_black_book_or_desk_caddy():
    """Perturbed instructions said "black book" and "desk caddy"; LIBERO's instructions (and
    referring expressions) say "the book" and "the caddy"."""
    assert instruction_noun(problem_with("black_book"), "black_book_1") == "book"
    assert instruction_noun(problem_with("desk_caddy"), "desk_caddy_1") == "caddy"


def test_a_wine_rack_is_its_own_words_wine_rack_not_rack():
    """Referring expressions called it "rack"; LIBERO says both, and "rack" alone still finds it
    through the category's own words."""
    assert noun("wine_rack") == "wine rack" and called("wine_rack_1") == []


def test_a_ramekin_to_collect_is_a_ramekin_not_a_glazed_rim_porcelain_ramekin():
    """`tether collect` stripped only "akita" from a category; it now says the noun."""
    assert instruction_for("glazed_rim_porcelain_ramekin_1") == "pick up the ramekin"


def test_a_category_with_a_number_in_its_name_keeps_it():
    """The detector prompt of `chefmate_8_frypan_1` was "chefmate frypan 1"."""
    assert category_of("chefmate_8_frypan_1") == "chefmate_8_frypan"
    assert phrase("chefmate_8_frypan_1") == "frying pan"
    assert called("chefmate_8_frypan_1") == ["frying frypan"]


def test_phrases_are_the_words_instructions_use():
    assert phrase("akita_black_bowl_1") == "black bowl"
    assert phrase("glazed_rim_porcelain_ramekin_1") == "ramekin"
    assert phrase("new_salad_dressing_1") == "salad dressing"
    assert phrase("wooden_cabinet_1_top_region") == "cabinet top"
    assert category_of("main_table_ramekin_region") == "main_table_ramekin_region"
