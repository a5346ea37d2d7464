"""Friendly names for scene entities: "black bowl" -> `akita_black_bowl_1`.

Trees, plans and people name things the way the instruction does; the scene knows them by their
canonical BDDL names (`akita_black_bowl_1`, `plate_1`, `wooden_cabinet_1_top_region`). `resolve`
maps one to the other using only the list of canonical names, so it is a pure function that
works for any scene:

    resolve("black bowl", scene.entities())   # 'akita_black_bowl_1'
    resolve("bowl", ["akita_black_bowl_1", "akita_black_bowl_2"])   # TetherError: ambiguous

A name is split into tokens on spaces, '_' and '-', lower-cased, articles dropped. A canonical
name's tokens are its parts; its *base* is the name without the trailing `_N` instance number and
its *head* is the base's last token (the noun: `bowl`, `plate`, `region`). Rules, first that
decides wins:
1. the exact canonical name (also written with spaces: "akita black bowl 1");
2. candidates are the names containing every query token;
3. a candidate whose base is exactly the query ("plate" -> `plate_1`) wins;
4. otherwise candidates whose head is in the query (so "ramekin" means the ramekin, not
   `main_table_ramekin_region`), else all candidates;
5. one left resolves; several raise `TetherError` listing them; none raises with a did-you-mean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tether.errors import TetherError, did_you_mean

_ARTICLES = {"the", "a", "an"}


def _tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[\s_\-]+", name.strip().lower()) if t and t not in _ARTICLES]


def _base(entity: str) -> list[str]:
    """The entity's tokens without a trailing instance number."""
    tokens = _tokens(entity)
    return tokens[:-1] if len(tokens) > 1 and tokens[-1].isdigit() else tokens


def _pick(name: str, group: list[str]) -> str:
    if len(group) == 1:
        return group[0]
    raise TetherError(f"'{name}' is ambiguous: it could be {', '.join(sorted(group))}")


def resolve(name: str, entities: Iterable[str]) -> str:
    """The canonical entity `name` refers to; `TetherError` when unknown or ambiguous."""
    entities = list(dict.fromkeys(entities))
    if name in entities:
        return name
    query = _tokens(name)
    for entity in entities:
        if _tokens(entity) == query:
            return entity
    candidates = [e for e in entities if query and set(query) <= set(_tokens(e))]
    exact_base = [e for e in candidates if _base(e) == query]
    if exact_base:
        return _pick(name, exact_base)
    headed = [e for e in candidates if _base(e)[-1] in query]
    if headed or candidates:
        return _pick(name, headed or candidates)
    choices = entities + [" ".join(_base(e)) for e in entities] + [_base(e)[-1] for e in entities]
    raise TetherError(f"no entity '{name}' in this scene{did_you_mean(name, choices)}")
