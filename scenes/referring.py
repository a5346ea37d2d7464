"""Referring expressions: which entity "the black bowl between the plate and the ramekin" means.

`SceneFacts` is what a planner may know about a scene: entity names, aliases, which entities are
fixtures, and positions (privileged perception in simulation; a detector on a real robot). It is
built from any `Robot` (`SceneFacts.of(robot)`) or by hand in tests. `ground(phrase, facts)`
returns the canonical entity a noun phrase refers to, or raises `TetherError` saying why not:

1. an alias of the task (tasks.yaml) wins when it is the whole phrase or ends its head noun
   phrase ("the small porcelain dish in the clutter"), longest first;
2. otherwise every entity is scored against the phrase's words: its canonical name's words and
   its noun ("white mug" for `porcelain_mug_1`, `tether.scenes.vocabulary`); the entity's head noun
   must be in the phrase; more matched words win, fewer unmatched words break ties;
3. several look-alikes left (two black bowls) are told apart by the phrase's modifiers and
   relations, over positions: near/front/closest (to the robot), far/back, left, right,
   middle/centre; `between A and B`, `next to A`, `on A`, `in A`, `from/at the table center`.

Roles refine the result: the target of `in` (and of `on` when it is a fixture such as the stove)
is the entity's own region (`basket_1_contain_region`, `flat_stove_1_cook_region`), chosen by the
phrase's remaining words ("back compartment" -> `..._back_contain_region`); `on` a fixture with
a surface region means the surface ("on the cabinet" -> `wooden_cabinet_1_top_side`, not the
top drawer). A location phrase
("next to the plate", "to the front of the stove") grounds to regions only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tether.errors import TetherError, did_you_mean
from tether.scenes.vocabulary import NAME_WORDS, category_of, noun

if TYPE_CHECKING:
    from tether.scenes.robot import Robot

STOPWORDS = {"the", "a", "an", "of", "to", "it", "its", "that", "is", "one", "s", "and", "with",
             "from", "at", "which", "up", "small", "little"}
# words of instructions -> the words entity names use
SYNONYMS = {"compartment": "contain", "beside": "next", "by": "next", "centre": "center",
            "lowest": "bottom", "upper": "top", "highest": "top",
            "closer": "near", "closest": "near", "nearest": "near", "nearer": "near",
            "farther": "far", "farthest": "far", "further": "far", "furthest": "far",
            "wine": "wine", "cup": "mug", "shut": "close", "switch": "turn", **NAME_WORDS}
REGION_HEADS = {"region", "side"}
PREFERRED_REGIONS = ("contain", "cook", "top", "heating")
LOCATION_WORDS = {"between", "next", "front", "right", "left", "back", "behind"}
ORDERINGS = {"near": "near", "front": "near", "far": "far", "back": "far", "left": "left",
             "right": "right", "middle": "middle", "center": "middle", "other": "other"}
LOCATION = re.compile(r"^(?:(?:right |just )?next to|beside|between|in front of|behind|"
                      r"to the (?:front|back|left|right) of|on the (?:left|right) of|"
                      r"(?:at|on) the (?:front|back|left|right) of)\b")


def words(text: str, keep: frozenset[str] = frozenset()) -> list[str]:
    """Normalised content words: lower case, singular, synonyms applied, stopwords (but those in
    `keep`) dropped."""
    out = []
    for w in re.findall(r"[a-z]+", text.lower().replace("'s", "")):
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        w = SYNONYMS.get(w, w)
        if w not in STOPWORDS or w in keep:
            out.append(w)
    return out


def referent(entity: str) -> str:
    """The entity without its region suffix: `flat_stove_1_cook_region` -> `flat_stove_1`."""
    m = re.match(r"^(.*?_\d+)(_.*)?$", entity)
    return m.group(1) if m else entity


def is_region(entity: str) -> bool:
    return entity.rsplit("_", 1)[-1] in REGION_HEADS


@dataclass
class SceneFacts:
    """What a planner knows about a scene (see the module docstring)."""

    entities: list[str]
    aliases: dict[str, str] = field(default_factory=dict)
    fixtures: set[str] = field(default_factory=set)
    positions: dict[str, np.ndarray] = field(default_factory=dict)
    robot_position: np.ndarray | None = None

    @classmethod
    def of(cls, robot: Robot, *, at_start: bool = False) -> SceneFacts:
        """Facts of a scene: names, the task's aliases, fixtures, positions as they are now, or
        (`at_start`) as the episode started: the scene an instruction was given in, so a replan
        refers to the objects the first plan did even when a failed attempt moved them."""
        entities = list(robot.entities())
        task = getattr(robot, "task", None)
        aliases = {a.lower(): c for a, c in getattr(task, "aliases", ())}
        fixtures: set[str] = set()
        if task is not None and getattr(task, "bddl_file", None):
            from tether.scenes.bddl import read_problem

            problem = read_problem(task.bddl_file)
            fixtures = {f for names in problem.fixtures.values() for f in names}
        where = robot.start_pose_of if at_start else robot.pose_of
        positions = {}
        for e in entities:
            try:
                positions[e] = np.asarray(where(e).pos, float)
            except TetherError:  # not seen (camera perception): a phrase needing it says so
                continue
        return cls(entities, aliases, fixtures, positions, np.asarray(robot.eef_pose().pos))

    def names(self, entity: str) -> list[list[str]]:
        """The word lists an entity may be called by."""
        out = [words(entity.replace("_", " "))]
        display = noun(category_of(entity))
        if not is_region(entity) and words(display) != out[0]:
            out.append(words(display))
        drawer = re.match(r"^(.*cabinet)_\d+_(top|middle|bottom)_region$", entity)
        if drawer:  # a cabinet's drawer: "the top drawer (of the cabinet)"
            out.append(words(f"{drawer.group(2)} drawer"))
            out.append(words(f"{drawer.group(2)} drawer cabinet"))
        return out

    def position(self, entity: str) -> np.ndarray:
        if entity not in self.positions:
            raise TetherError(f"no position known for '{entity}' (not seen)")
        return self.positions[entity]

    def regions_of(self, entity: str) -> list[str]:
        return [e for e in self.entities if is_region(e) and e != entity
                and referent(e) == entity]


def _score(facts: SceneFacts, entity: str, phrase: list[str]) -> float:
    best = 0.0
    for name in facts.names(entity):
        if not name or name[-1] not in phrase:
            continue
        matched = sum(1 for w in set(name) if w in phrase)
        best = max(best, matched - 0.01 * (len(set(name)) - matched))
    return best


def _alias(phrase: str, facts: SceneFacts) -> str | None:
    """The alias the phrase is, or the longest one its head noun phrase ends with."""
    def norm(text: str) -> str:
        return " ".join(w for w in re.findall(r"[a-z]+", text.lower()) if w not in ("the", "a"))

    whole = norm(phrase)
    head = norm(re.split(r"\bof\b", _split_head(phrase)[0])[0])
    for alias in sorted(facts.aliases, key=len, reverse=True):
        a = norm(alias)
        if a == whole or f" {head}".endswith(f" {a}"):
            return facts.aliases[alias]
    return None


def candidates(phrase: str, facts: SceneFacts, *, regions: bool | None = None) -> list[str]:
    """The best-scoring entities for a phrase (several when they look alike)."""
    ws = words(phrase)
    pool = [e for e in facts.entities if regions is None or is_region(e) == regions]
    scored = [(s, e) for e in pool if (s := _score(facts, e, ws)) > 0]
    if not scored:
        return []
    top = max(s for s, _ in scored)
    return [e for s, e in scored if s >= top - 1e-9]


def _split_head(phrase: str) -> tuple[str, str]:
    """`black bowl between the plate and the ramekin` -> (`black bowl`, `between ...`)."""
    m = re.search(r"\b(between|next to|beside|by|near(?:est)?|closest to|on top of|on|in|inside|"
                  r"from|at|in front of|behind|to the (?:left|right) of)\b", phrase)
    if not m or m.start() == 0:
        return phrase, ""
    return phrase[:m.start()].strip(), phrase[m.start():].strip()


def _xy(v: np.ndarray) -> np.ndarray:
    return np.asarray(v)[:2]


def _disambiguate(head: str, relation: str, group: list[str], facts: SceneFacts,
                  exclude: set[str]) -> list[str]:
    left = [e for e in group if e not in exclude] or group
    if len(left) == 1:
        return left
    order = next((ORDERINGS[w] for w in words(head + " " + relation) if w in ORDERINGS), None)
    if re.search(r"\bbetween the other\b", relation):
        order = "middle"
    if order == "other":
        return left
    pos = {e: facts.position(e) for e in left}
    if order is not None and not (relation and order in ("near",) and
                                  not re.search(r"\b(robot|near)\b", f"{relation} {head}")):
        robot = facts.robot_position if facts.robot_position is not None else np.zeros(3)
        key = {"near": lambda e: np.linalg.norm(_xy(pos[e] - robot)),
               "far": lambda e: -np.linalg.norm(_xy(pos[e] - robot)),
               "left": lambda e: pos[e][1], "right": lambda e: -pos[e][1],
               "middle": lambda e: abs(pos[e][1] - np.median([p[1] for p in pos.values()]))}
        return [min(left, key=key[order])]
    if not relation:
        return left
    rel = relation.split()[0]
    if rel == "between":
        parts = re.split(r"\band\b", relation[len("between"):])
        anchors = [ground(p, facts, exclude=set(left)) for p in parts if p.strip()]
        anchor = np.mean([facts.position(a) for a in anchors], axis=0)
    elif re.search(r"\b(center|centre)\b", relation):
        others = [p for e, p in facts.positions.items() if not is_region(e)
                  and e not in facts.fixtures]
        anchor = np.mean(others, axis=0)
    else:
        target = re.sub(r"^(next to|beside|by|near(?:est)?|closest to|on top of|on|in|inside|from|"
                        r"at|in front of|behind|to the (?:left|right) of)\s+", "", relation)
        anchor = facts.position(ground(target, facts, exclude=set(left)))
    return [min(left, key=lambda e: float(np.linalg.norm(_xy(pos[e] - anchor))))]


def ground(phrase: str, facts: SceneFacts, *, role: str = "object",
           exclude: set[str] | None = None) -> str:
    """The entity `phrase` refers to. `role`: `object`, `on`/`in` (a target), `location`,
    `articulated` (what open/close act on). `exclude`: entities already taken by the sentence
    (so "the other bowl" is another one)."""
    exclude = exclude or set()
    if (alias := _alias(phrase, facts)) is not None:
        return alias
    location = role == "location" or bool(LOCATION.match(phrase.strip()))
    if location:
        group = candidates(phrase + " region", facts, regions=True)
        relation = [w for w in words(phrase)[:1] if w in LOCATION_WORDS]
        group = [e for e in group if set(relation) <= set(words(e.replace("_", " ")))] or group
        if len(group) != 1:
            raise TetherError(f"cannot tell which place '{phrase}' is"
                              + (f": it could be {', '.join(sorted(group))}" if group else ""))
        return group[0]
    head, relation = _split_head(phrase)
    group = candidates(head, facts) or candidates(phrase, facts)
    if not group:
        known = [" ".join(n) for e in facts.entities for n in facts.names(e)]
        raise TetherError(f"no object '{phrase}' in this scene" + did_you_mean(head, known))
    group = _disambiguate(head, relation, group, facts, exclude)
    if len(group) > 1:
        raise TetherError(f"'{phrase}' is ambiguous: it could be {', '.join(sorted(group))}")
    entity = group[0]
    regions = facts.regions_of(referent(entity)) if not is_region(entity) else []
    wants_region = (role == "in" or (role == "on" and entity in facts.fixtures)
                    or (role == "articulated" and "drawer" in words(phrase)))
    if regions and wants_region:
        extra = set(words(phrase))
        scored = sorted(regions, key=lambda r: (
            -len(extra & set(words(r.replace("_", " ")))),
            not (role == "on" and r.endswith("_side")),  # on a fixture: its surface, if any
            next((i for i, p in enumerate(PREFERRED_REGIONS) if p in r), 99)))
        return scored[0]
    return entity
