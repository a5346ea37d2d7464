"""`tether.scenes.aliases.resolve`: friendly names to canonical entity names (pure, no LIBERO)."""

from __future__ import annotations

import pytest

from tether.errors import TetherError
from tether.scenes.aliases import resolve

# libero_spatial task 0's entities, as LiberoScene.entities() lists them
SPATIAL = [
    "akita_black_bowl_1", "akita_black_bowl_2", "cookies_1", "glazed_rim_porcelain_ramekin_1",
    "plate_1", "wooden_cabinet_1", "flat_stove_1", "main_table_plate_region",
    "main_table_next_to_plate_region", "main_table_between_plate_ramekin_region",
    "main_table_ramekin_region", "main_table_table_center", "wooden_cabinet_1_top_region",
    "wooden_cabinet_1_middle_region", "wooden_cabinet_1_top_side", "flat_stove_1_cook_region",
]
# libero_goal "put the bowl on the plate"
GOAL = [
    "akita_black_bowl_1", "cream_cheese_1", "wine_bottle_1", "plate_1", "wooden_cabinet_1",
    "flat_stove_1", "wine_rack_1", "main_table_plate_region", "main_table_akita_black_bowl_region",
    "main_table_cream_cheese_region", "wooden_cabinet_1_top_region", "wine_rack_1_top_region",
]


@pytest.mark.parametrize(
    ("name", "entity"),
    [
        ("black bowl", "akita_black_bowl_1"),
        ("bowl", "akita_black_bowl_1"),
        ("the black bowl", "akita_black_bowl_1"),
        ("plate", "plate_1"),
        ("Plate", "plate_1"),
        ("cream cheese", "cream_cheese_1"),
        ("cabinet", "wooden_cabinet_1"),
        ("stove", "flat_stove_1"),
        ("wine rack", "wine_rack_1"),
        ("cabinet top region", "wooden_cabinet_1_top_region"),
    ],
)
def test_friendly_names_resolve_to_the_one_matching_entity(name, entity):
    assert resolve(name, GOAL) == entity


def test_the_exact_canonical_name_always_wins():
    assert resolve("main_table_plate_region", GOAL) == "main_table_plate_region"
    assert resolve("akita black bowl 1", GOAL) == "akita_black_bowl_1"


def test_a_name_equal_to_an_entitys_base_beats_longer_names_containing_it():
    # 'plate' is also a token of main_table_plate_region
    assert resolve("plate", SPATIAL) == "plate_1"


def test_an_object_whose_noun_is_named_beats_regions_that_mention_it():
    assert resolve("ramekin", SPATIAL) == "glazed_rim_porcelain_ramekin_1"
    assert resolve("black bowl", GOAL) == "akita_black_bowl_1"  # not ..._black_bowl_region


def test_an_instance_number_picks_one_of_several():
    assert resolve("bowl 2", SPATIAL) == "akita_black_bowl_2"


@pytest.mark.parametrize("name", ["bowl", "black bowl", "akita bowl"])
def test_two_bowls_make_bowl_ambiguous_and_the_error_lists_both(name):
    with pytest.raises(TetherError, match="ambiguous") as err:
        resolve(name, SPATIAL)
    assert "akita_black_bowl_1" in str(err.value) and "akita_black_bowl_2" in str(err.value)


def test_several_equally_good_regions_are_ambiguous():
    with pytest.raises(TetherError, match="wine_rack_1_top_region"):
        resolve("top region", GOAL)


def test_an_unknown_name_says_did_you_mean():
    with pytest.raises(TetherError, match="did you mean 'plate'"):
        resolve("plat", GOAL)
    with pytest.raises(TetherError, match="no entity 'drawer'"):
        resolve("drawer", GOAL)
