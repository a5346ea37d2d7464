"""The one vocabulary of object names: how instructions, people and detectors call LIBERO's objects.

LIBERO names object categories for its asset files (`akita_black_bowl`,
`glazed_rim_porcelain_ramekin`); its instructions say "black bowl" and "ramekin". `NOUNS` holds
the categories whose noun is not their own words; every other category's noun is derived by
`noun`'s rule (underscores become spaces: `cream_cheese` -> "cream cheese"). Every part of tether
that names an object in words asks this module: referring expressions (`tether.scenes.referring`),
instructions the perturbations write (`tether.scenes.perturbations`), detector prompts
(`tether.models.perception`) and the prompts of collected demonstrations (`tether collect`).

    noun("akita_black_bowl")                 # 'black bowl'
    category_of("akita_black_bowl_1")        # 'akita_black_bowl'
    phrase("wooden_cabinet_1_top_region")    # 'cabinet top'
"""

from __future__ import annotations

import re

# Category -> the noun LIBERO's instructions use for it, where that is not the category's words.
NOUNS = {
    "akita_black_bowl": "black bowl",
    "glazed_rim_porcelain_ramekin": "ramekin",
    "porcelain_mug": "white mug",
    "white_yellow_mug": "yellow and white mug",
    "red_coffee_mug": "red mug",
    "chefmate_8_frypan": "frying pan",
    "flat_stove": "stove",
    "cookies": "cookie box",
    "wooden_cabinet": "cabinet",
    "white_cabinet": "cabinet",
    "black_book": "book",
    "desk_caddy": "caddy",
    "new_salad_dressing": "salad dressing",
    "macaroni_and_cheese": "macaroni box",
    # LIBERO-PRO's resized and recoloured categories (`tether.scenes.libero_pro`)
    "bigger_akita_black_bowl": "black bowl",
    "red_akita_black_bowl": "red bowl",
    "bigger_alphabet_soup": "alphabet soup",
    "bigger_milk": "milk",
    "white_bottle": "wine bottle",
    "wine_rack_stand": "wine rack",
    "libero_mug_yellow": "yellow mug",
    "libero_mug_green": "green mug",
    "white_porcelain_mug": "white mug",
    "yellow_cookies": "yellow cookie box",
    "yellow_desk_caddy": "yellow caddy",
}
# Words of instructions -> the word entity names use for the same object.
NAME_WORDS = {"dish": "ramekin", "cookie": "cookies", "pan": "frypan", "mugs": "mug"}
# A noun's paraphrases (the `paraphrase` perturbation picks among them).
PARAPHRASES = {
    "black bowl": ("dark dish", "black basin"),
    "bowl": ("dish", "basin", "porringer"),
    "plate": ("platter", "saucer", "dinner plate"),
    "ramekin": ("souffle cup", "custard pot"),
    "stove": ("cooktop", "hob"),
    "cabinet": ("cupboard", "dresser"),
    "drawer": ("compartment",),
    "mug": ("cup", "beaker"),
    "cream cheese": ("philadelphia", "cheese spread"),
    "wine bottle": ("bottle of merlot", "flask of wine"),
    "basket": ("hamper",),
    "ketchup": ("heinz",),
    "cookie box": ("biscuit tin", "box of oreos"),
    "moka pot": ("espresso maker", "bialetti"),
    "rack": ("stand",),
    "butter": ("margarine",),
    "alphabet soup": ("campbell's soup",),
    "tomato sauce": ("passata",),
    "book": ("volume",),
    "caddy": ("organiser",),
    "microwave": ("oven",),
}

# category, its last instance number, a region's own words
_INSTANCE = re.compile(r"^(.*)_\d+(?:_([a-z_]+))?$")


def noun(category: str) -> str:
    """The noun for an object category: its `NOUNS` entry, else its words."""
    return NOUNS.get(category, category.replace("_", " "))


def category_of(entity: str) -> str:
    """The category of a canonical entity name (a region's owner's): `plate_1` -> 'plate',
    `wooden_cabinet_1_top_region` -> 'wooden_cabinet', `chefmate_8_frypan_1` -> 'chefmate_8_frypan';
    a name without an instance number is its own category."""
    m = _INSTANCE.match(entity)
    return m.group(1) if m else entity


def phrase(entity: str) -> str:
    """The words for a canonical entity name (a detector's prompt): its category's noun
    (`akita_black_bowl_1` -> "black bowl"); a region is its owner's noun and its own words
    (`wooden_cabinet_1_top_region` -> "cabinet top")."""
    m = _INSTANCE.match(entity)
    words = noun(category_of(entity))
    rest = m.group(2) if m else None
    if rest:
        rest = re.sub(r"_?region$", "", rest).replace("_", " ").strip()
        words = f"{words} {rest}".strip()
    return words
