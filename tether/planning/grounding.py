"""Instruction grounding by ranking: which goal of the scene an instruction asks for.

Instead of reading the instruction with phrase rules, the grounder enumerates what the skill
library can achieve in the scene at hand and ranks those candidate goals against the words:

1. **Candidates.** Every goal of a skill predicate (`tether.planning.skills.RULES`' keys) over
   the scene's entities: `on(X, Y)`/`in(X, R)` for each movable object X and each surface,
   object, receptacle region or table place Y (`in` for receptacle regions, `on` otherwise),
   the one-argument predicates (`open`, `close`, `turn_on`, ...) over the fixtures and their
   drawers. A goal that already holds (X already on Y) is no candidate.
2. **Sentences.** Each candidate is rendered as a few canonical sentences (`Rendering`): one
   verb per predicate, each entity by its names (`SceneFacts.names`, its vocabulary noun, a
   fixture's part as "the back of the caddy", as a target a part of a fixture with drawers also
   as "the top of the drawer", a table place as "to the right of the plate") and
   by referring expressions computed from positions (`tether.scenes.referring`'s relations):
   what it stands on or lies in ("the bowl from the stove"), its nearest neighbour ("next to
   the ramekin"), the pair it stands between, among look-alikes left/right/front/back, and,
   negated, what singles out another look-alike ("the bowl not next to the ramekin").
3. **Score** = cosine of the instruction and the sentence (the local MiniLM, `minilm`) + the
   F1 of the longest common subsequence of the scene words they share (entity names, aliases,
   colours, relation words, quantifiers: order and repetition count) + a fifth of the same over
   all words but articles. A goal scores its best sentence. Conjunctions of two or three good
   single goals, in the order the instruction mentions their objects, are rendered ("A, then
   B", "it" for an entity the goal before names, one sentence for several objects on one
   target: "put both moka pots on the stove") and scored the same way.
   **Structured reading** (`tether.planning.clauses`): a placement says its roles (its object
   named before a pronoun for it; after the object's last mention the target is named when any
   other thing is: "the bowl on the cookie box ... place it on the plate" puts the bowl on the
   plate); each goal of a conjunction has a clause of its own, in order, naming its object
   first (a one-argument goal: saying its verb as a verb); a verb after an article is a
   modifier ("the open drawer"); an unnamed placement argument and an undone one-argument verb
   cost, and so does an `in` reading of a target said after "on" ("on the top of the drawer").
4. **Decide.** The best reading is planned when it scores at least `threshold` and beats the
   best different reading by `margin` (both calibrated by `benchmarks/planning.py
   --grounding`); otherwise one `TetherError` lists the best readings with their scores, as a
   question.

    grounding = rank("lift bowl from stove and set on plate", facts)
    grounding.readings[0].goals     # (Goal('on', ('akita_black_bowl_1', 'plate_1')),)
    grounding.decide()              # the goals, or TetherError listing the closest readings

Embeddings of candidate sentences are cached (by text), so a scene's candidates are embedded
once per process and each further instruction costs one embedding and a dot product.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tether.errors import TetherError
from tether.models.embedders import Embedder, get_embedder
from tether.planning.clauses import Clauses
from tether.planning.skills import RULES, Goal
from tether.scenes.referring import (
    LOCATION_WORDS,
    ORDERINGS,
    SceneFacts,
    is_region,
    referent,
    words,
)
from tether.scenes.vocabulary import category_of, noun, phrase

# one canonical sentence per predicate and kind of target; {x} the object, {y} the target
TEMPLATES = {
    "on": ("put {x} on {y}",),
    "in": ("put {x} in {y}",),
    "open": ("open {x}",),
    "close": ("close {x}",),
    "turn_on": ("turn on {x}", "turn {x} on"),
    "turn_off": ("turn off {x}", "turn {x} off"),
}
INTO_OBJECT = "put {x} in {y}"  # "the cheese in the bowl": on(cheese, bowl) for a non-fixture
IMPLICIT = {"in": "put {x} inside"}  # "open the drawer, then put the bowl inside" (in it)
TO_PLACE = "put {x} {y}"  # a place on the table: "to the right of the plate"
# a table place's relation word -> how a sentence says it ({} its anchors, "the plate")
PLACE_PHRASES = {"right": "to the right of {}", "left": "to the left of {}",
                 "front": "in front of {}", "back": "behind {}", "behind": "behind {}",
                 "next": "next to {}", "between": "between {}"}
POSSESSIVE = {"right", "left", "front", "back"}  # also "to the stove's front"
QUANTIFIERS = {"both", "two", "three", "all"}  # words of a group reading ("both moka pots")
NEGATION = "not"
PRONOUNS = frozenset({"it"})  # evidence too: a sentence says "it" where the instruction does
REGION_KINDS = {"contain", "heating", "cook", "region", "side"}  # LIBERO's words for a part's role
THEN = ", then "
ORDER_BONUS = 0.05  # the instruction names a goal's object before its target
CONJUNCTION_COST = 0.02  # per goal of a conjunction: one goal wins a tie
UNSAID_COST = 0.2  # per argument of a placement the instruction does not name
UNDONE_VERB_COST = 0.1  # per verb of a one-argument goal said that the reading does not do
ONTO = frozenset({"on", "onto", "atop"})  # a target said after these is a surface ...
INTO = frozenset({"in", "into", "inside"})  # ... after these, a receptacle
PREPOSITION_COST = 0.3  # an `in` reading of a target the instruction puts things "on"
PHRASING_WEIGHT = 0.2  # of the evidence over all words ("on", "to", "of", ...)
ARTICLES = {"the", "a", "an"}
DRAWER = "drawer"  # a drawer's name says it; a fixture with drawers is also called so
PREPOSITIONS = {"in", "on", "to"}
CLAUSE_KEEP = PRONOUNS | {"of"}  # the words `Clauses` keeps: "right of the plate" is a place
RENDERINGS = 3  # a goal's best sentences a conjunction may say it by (and its clause's best)
NEXT_TO = 0.2  # m: a look-alike is "next to" something nearer than this
NEXT_TO_SAID = 0.9  # ... or, said so, nearer than this share of the next one's distance
SUPPORT_XY = 0.08  # m: an object stands on the highest thing under it within this distance
SUPPORT_XY_FIXTURE = 0.15  # m: ... or of a fixture's part (an open drawer is pulled out)
SUPPORT_Z = 0.01  # m: ... a fixture's surface may sit this much above the object's position
SUPPORT_Z_INSIDE = 0.05  # m: ... a receptacle's region (its site is at the rim) this much


def receptacle(entity: str) -> bool:
    """A region things go into (LIBERO's names): a basket's or caddy's `contain` region, a
    microwave's `heating` region, a cabinet's drawer."""
    return bool(re.search(r"_(contain|heating)_region$|cabinet_\d+_(top|middle|bottom)_region$",
                          entity))


@dataclass(frozen=True)
class Reading:
    """One candidate reading of an instruction: its goals in order, the sentence that matched
    best and its score."""

    goals: tuple[Goal, ...]
    sentence: str
    score: float

    def __str__(self) -> str:
        return f"\"{self.sentence}\" = {', '.join(map(str, self.goals))} ({self.score:.2f})"


@dataclass
class GroundingConfig:
    """The ranker's knobs: the embedder, the least score to plan, the lead the best reading
    needs over the next, how many single goals conjunctions are built from."""

    embedder: str = "minilm"
    threshold: float = 1.159  # calibrated: benchmarks/planning.py --grounding
    margin: float = 0.005
    lexical_weight: float = 1.0
    shortlist: int = 12  # single goals embedded, the best by lexical evidence
    pool: int = 6  # single goals conjunctions are built from
    per_object: int = 3  # ... and the best goals of each object the instruction names
    shown: int = 3  # readings listed in the error


@dataclass
class Grounding:
    """The ranked readings of one instruction (best first)."""

    instruction: str
    readings: list[Reading]
    config: GroundingConfig = field(default_factory=GroundingConfig)

    def decide(self) -> list[Goal]:
        """The best reading's goals; `TetherError` listing the closest readings when it scores
        below the threshold or another reading is within the margin."""
        best = self.readings[0] if self.readings else None
        if best is None:
            raise TetherError(f"nothing in this scene can be done for '{self.instruction}'")
        runner_up = next((r for r in self.readings[1:] if set(r.goals) != set(best.goals)), None)
        shown = "\n".join(f"  {r}" for r in self.readings[:self.config.shown])
        if best.score < self.config.threshold:
            raise TetherError(f"cannot tell what '{self.instruction}' asks for here: no reading "
                              f"scores {self.config.threshold:.2f}; the closest are\n{shown}")
        if runner_up is not None and best.score - runner_up.score < self.config.margin:
            raise TetherError(f"'{self.instruction}' could mean more than one thing; did you "
                              f"mean\n{shown}")
        return list(best.goals)


def _parts(facts: SceneFacts) -> dict[str, str]:
    """Entity -> the fixture it is a part of (regions, surfaces and the table's places)."""
    return {e: o for e in facts.entities for o in facts.fixtures
            if e != o and e.startswith(o + "_") and e not in facts.fixtures}


def _table_place(entity: str, facts: SceneFacts) -> list[str]:
    """How sentences name a place on the table that goals name: a region of a fixture that is
    not a scene entity, with a relation word (`main_table_stove_front_region` -> "in front of
    the stove", "to the stove's front"; `..._between_plate_ramekin_region` -> "between the
    plate and the ramekin"). A place whose name says no anchor is anchored by position: the
    nearest object, the pair it lies between."""
    for owner in facts.fixtures:
        if owner not in facts.entities and entity.startswith(owner + "_"):
            said = words(entity[len(owner) + 1:].replace("_", " ").removesuffix(" region"))
            relation = next((w for w in said if w in PLACE_PHRASES), None)
            if relation is None:
                continue
            named = [w for w in said if w != relation]
            out = []
            for anchors in ([named] if named else _anchors(entity, relation, facts)):
                out.append(PLACE_PHRASES[relation].format(" and ".join(f"the {w}" for w in anchors))
                           .strip().removesuffix(" of"))
                if relation in POSSESSIVE and len(anchors) == 1:
                    out.append(f"to the {anchors[0]}'s {relation}")
            return list(dict.fromkeys(out))
    return []


def _head(entity: str) -> str:
    return phrase(entity).split()[-1]


def _anchors(entity: str, relation: str, facts: SceneFacts) -> list[list[str]]:
    """The objects a place lies next to (`relation` "between": the pair whose midpoint is
    nearest, in either order), by their vocabulary phrases and by their head nouns; none when
    its position is unknown."""
    pos = facts.positions
    things = [e for e in facts.entities if e in pos and e != entity and not is_region(e)
              and e not in facts.fixtures]
    groups = list(itertools.permutations(things, 2 if relation == "between" else 1))
    if entity not in pos or not groups:
        return []
    best = min(groups, key=lambda group: float(np.linalg.norm(
        np.mean([pos[e] for e in group], axis=0)[:2] - pos[entity][:2])))
    orders = [best, best[::-1]]  # "between A and B", "between B and A"
    return [[f(e) for e in group] for group in orders for f in (phrase, _head)]


@dataclass
class _Scene:
    """The entities of a scene by the part they play in goals, and how to call them."""

    facts: SceneFacts
    objects: list[str]
    targets: list[str]
    articulated: list[str]
    places: dict[str, list[str]]
    solid: list[str]  # what things stand on: objects, fixtures, fixture surfaces
    instruction: str = ""  # plain (`_plain`): the relations it says decide more

    @classmethod
    def of(cls, facts: SceneFacts, instruction: str = "") -> _Scene:
        parts = _parts(facts)
        places = {e: p for e in facts.entities if (p := _table_place(e, facts))}
        table = {e for e, owner in parts.items() if owner not in facts.entities}
        objects = [e for e in facts.entities if e not in facts.fixtures and e not in parts
                   and not is_region(e)]
        owners = {parts[e] for e in parts} | {e for e in facts.entities for r in facts.entities
                                              if is_region(r) and r.startswith(e + "_")}
        surfaces = [e for e in facts.entities if (is_region(e) or e.endswith("_side"))
                    and e not in table]
        bodies = [e for e in facts.entities if not is_region(e) and e not in parts
                  and e not in owners]
        drawers = [e for e in surfaces if any(DRAWER in n for n in facts.names(e))]
        articulated = [e for e in facts.fixtures if e in facts.entities  # a cabinet is
                       and not any(referent(d) == e for d in drawers)] + drawers  # its drawers
        solid = [e for e in facts.entities if e not in table and e in facts.positions]
        return cls(facts, objects, [*bodies, *surfaces, *places], articulated, places, solid,
                   _plain(instruction))

    def names(self, entity: str) -> list[str]:
        """What an entity may be called: its vocabulary phrase, its names, its aliases."""
        if entity in self.places:
            return self.places[entity]
        out = [*(" ".join(n) for n in self.facts.names(entity)[1:] if is_region(entity)),
               *self._part_name(entity), phrase(entity),
               *(" ".join(n) for n in self.facts.names(entity)[1:])]
        if is_region(entity) or entity.endswith("_side"):
            out.append(noun(category_of(entity)))
        out += [a for a, c in self.facts.aliases.items() if c == entity]
        return list(dict.fromkeys(out))

    def spoken_names(self, entity: str) -> list[str]:
        """`names` and, but for places and regions, the entity's own name ("cookies")."""
        own = [] if entity in self.places or is_region(entity) else [
            " ".join(self.facts.names(entity)[0])]
        return [*self.names(entity), *own]

    def _part_name(self, entity: str) -> list[str]:
        """A part of a fixture called as people do: `desk_caddy_1_back_contain_region` -> "back
        of the caddy", "caddy's back"; `wooden_cabinet_1_top_region` -> "top drawer of the
        cabinet", "cabinet's top drawer"; `wooden_cabinet_1_top_side` -> "top of the cabinet"."""
        part = self._qualifier(entity)
        if part is None:
            return []
        whole = noun(category_of(referent(entity)))
        return [f"{part} of the {whole}", f"{whole}'s {part}"]

    def _qualifier(self, entity: str) -> str | None:
        """Which part of its fixture an entity is ("top", "back"); None for no fixture's part."""
        owner = referent(entity)
        if owner == entity or owner not in self.facts.entities:
            return None
        names = self.facts.names(entity)
        qualifier = names[1] if len(names) > 1 else [
            w for w in words(entity[len(owner):].replace("_", " "))
            if w not in REGION_KINDS and not w.isdigit()]
        return " ".join(qualifier) or None

    def chest_name(self, entity: str) -> list[str]:
        """A part of a fixture with drawers, but a drawer, as a target: the fixture called a
        drawer ("put the plate on the top of the drawer": the cabinet's top, not its top
        drawer). Only as a target: "the bowl from the top drawer" says no top of a drawer."""
        part, owner = self._qualifier(entity), referent(entity)
        if part is None or entity in self.articulated or not any(
                referent(d) == owner and d != owner for d in self.articulated):
            return []
        return [f"{part} of the {DRAWER}"]

    def support(self, entity: str) -> str | None:
        """What `entity` stands on, from positions: the nearest thing below it."""
        pos = self.facts.positions
        if entity not in pos:
            return None
        x = pos[entity]
        def near(e: str) -> bool:
            xy, z = SUPPORT_XY_FIXTURE, SUPPORT_Z
            if e in self.objects:
                xy, z = SUPPORT_XY, 0.0
            elif receptacle(e):
                xy, z = SUPPORT_XY, SUPPORT_Z_INSIDE
            return bool(pos[e][2] < x[2] + z and np.linalg.norm(pos[e][:2] - x[:2]) < xy)

        below = [(float(pos[e][2]), e) for e in self.solid if e != entity and near(e)]
        return max(below)[1] if below else None

    def referring(self, entity: str) -> list[str]:
        """Phrases for an object: its names, what it stands on ("the bowl from the stove") and,
        among look-alikes, the relations that single it out (its nearest neighbour, the pair it
        is between, the table centre, its side) and, negated, those that single out another
        ("the bowl not between the plate and the ramekin")."""
        out = [f"the {n}" for n in self.names(entity)[:2]]
        base = self.names(entity)[0]
        under = self.support(entity)
        if under is not None:
            on = "in" if receptacle(under) else "on"
            out += [f"the {base} {p} the {n}" for n in self.names(under)[:3] for p in ("from", on)]
        alike = self._alike(entity)
        if len(alike) < 2:
            return list(dict.fromkeys(out))
        relations = self._relations(alike)
        out += [f"the {base} {r}" for r, e in relations if e == entity]
        out += [f"the {base} {NEGATION} {r}" for r, e in relations if e != entity]
        for word, order in (("left", "left"), ("right", "right"), ("front", "near"),
                            ("near", "near"), ("back", "far"), ("far", "far")):
            if self._extreme(entity, alike, order):
                out.append(f"the {word} {base}")
        if len(alike) > 2 and self._middle(alike) == entity:
            out += [f"the middle {base}", f"the {base} between the other two"]
        return list(dict.fromkeys(out))

    def _middle(self, alike: list[str]) -> str:
        """The look-alike nearest the others' centroid (the middle one of a row)."""
        pos = self.facts.positions
        centre = np.mean([pos[o] for o in alike], axis=0)
        return min(alike, key=lambda o: float(np.linalg.norm(pos[o][:2] - centre[:2])))

    def _alike(self, entity: str) -> list[str]:
        """The objects of the entity's category (itself included) whose positions are known."""
        pos = self.facts.positions
        if entity not in pos:
            return []
        return [o for o in self.objects if category_of(o) == category_of(entity) and o in pos]

    def _relations(self, alike: list[str]) -> list[tuple[str, str]]:
        """(relation phrase, the look-alike it singles out): "next to the ramekin" (the nearest
        look-alike, within `NEXT_TO`; when the instruction says "next to" it and none is that
        near, the clearly nearest, `NEXT_TO_SAID`: a speaker names a relation that tells the
        look-alikes apart, however the layout spread them), "between the plate and the
        ramekin" (both orders; the look-alike nearest the pair's midpoint, when it sees the pair
        at a right angle or wider: a pair's objects far apart still have something between
        them), "at the table center"."""
        pos = self.facts.positions
        others = [o for o in self.solid if category_of(o) != category_of(alike[0])
                  and not is_region(o)]

        def nearest(anchor: np.ndarray) -> str:
            return min(alike, key=lambda o: float(np.linalg.norm(pos[o][:2] - anchor[:2])))

        out = []
        for o in others:
            (first, e), (second, _) = sorted(
                (float(np.linalg.norm(pos[o][:2] - pos[a][:2])), a) for a in alike)[:2]
            said = any(f"next to the {n}" in self.instruction for n in self.names(o))
            if first < NEXT_TO or (said and first < NEXT_TO_SAID * second):
                out.append((f"next to the {self.names(o)[0]}", e))
        for a, b in itertools.permutations([o for o in others if o in self.objects], 2):
            e = nearest((pos[a] + pos[b]) / 2)
            if np.dot(pos[a][:2] - pos[e][:2], pos[b][:2] - pos[e][:2]) <= 0:
                out.append((f"between the {self.names(a)[0]} and the {self.names(b)[0]}", e))
        centre = np.mean([pos[o] for o in self.objects if o in pos], axis=0)
        out.append(("at the table center", nearest(centre)))
        return out

    def _extreme(self, entity: str, group: list[str], order: str) -> bool:
        pos = self.facts.positions
        robot = self.facts.robot_position if self.facts.robot_position is not None \
            else np.zeros(3)
        key = {"left": lambda e: pos[e][1], "right": lambda e: -pos[e][1],
               "near": lambda e: np.linalg.norm(pos[e][:2] - robot[:2]),
               "far": lambda e: -np.linalg.norm(pos[e][:2] - robot[:2])}[order]
        return min(group, key=key) == entity

    def goals(self) -> list[tuple[Goal, list[Rendering]]]:
        """Every candidate goal with its renderings."""
        refer = {x: self.referring(x) for x in self.objects}
        out = []
        for x in self.objects:
            under = self.support(x)
            for y in self.targets:
                predicate = "in" if receptacle(y) else "on"
                if y == x or y == under or predicate not in RULES:
                    continue
                if y in self.places:
                    templates, targets = (TO_PLACE,), self.places[y]
                else:
                    into = predicate == "on" and y in self.objects
                    templates = TEMPLATES[predicate] + ((INTO_OBJECT,) if into else ())
                    targets = (refer[y] if y in self.objects else [
                        f"the {n}" for n in [*self.names(y)[:2], *self.chest_name(y)]])
                    if y in self._alike(x) and len(self._alike(x)) == 2:
                        targets = [*targets, f"the other {self.names(y)[0]}"]
                out.append((Goal(predicate, (x, y)), [Rendering(t, s, n) for t in templates
                                                      for s in refer[x] for n in targets]))
        for predicate in RULES:
            if predicate in ("on", "in") or predicate not in TEMPLATES:
                continue
            for d in self.articulated:
                out.append((Goal(predicate, (d,)), [Rendering(t, f"the {n}") for t in
                                                    TEMPLATES[predicate] for n in self.names(d)]))
        return out


@dataclass(frozen=True)
class Rendering:
    """One canonical sentence of a goal: a template and the phrases of its object and target."""

    template: str
    x: str
    y: str = ""

    def __str__(self) -> str:
        return self.template.format(x=self.x, y=self.y)


@dataclass
class _Single:
    """A ranked single goal: its reading, the scene words of its best sentence, its best
    renderings (best first, then the one that best follows the clause naming its object; a
    conjunction may say the goal another way)."""

    reading: Reading
    found: list[str]
    renderings: list[Rendering]

    @property
    def goal(self) -> Goal:
        return self.reading.goals[0]


class Ranker:
    """Ranks candidate readings of instructions; embeddings are cached by sentence."""

    def __init__(self, config: GroundingConfig | None = None,
                 embedder: Embedder | None = None) -> None:
        self.config = config or GroundingConfig()
        self._embedder = embedder
        self._cache: dict[str, np.ndarray] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.config.embedder)
        return self._embedder

    def embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if new:
            for t, v in zip(new, self.embedder.embed(new), strict=True):
                self._cache[t] = v
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1))

    def rank(self, instruction: str, facts: SceneFacts) -> Grounding:
        scene = _Scene.of(facts, instruction)
        vocabulary = _vocabulary(scene)

        def scene_words(text: str) -> list[str]:
            return [w for w in words(text, PRONOUNS) if w in vocabulary]

        clauses = Clauses.of(instruction, CLAUSE_KEEP)
        said = clauses.evidence_words(vocabulary, _verbs())
        spoken = {e: clauses.whole([_name_words(n) for n in scene.spoken_names(e)])
                  for e in scene.objects + scene.targets + scene.articulated}
        lexical = []
        for goal, renderings in scene.goals():
            if not _roles_said(goal, clauses, scene, spoken, set(clauses.clause)):
                continue
            found = [scene_words(str(r)) for r in renderings]
            lexical.append((max(_evidence(said, f) for f in found), goal, renderings, found))
        lexical.sort(key=lambda t: -t[0])
        query = self.embed([_plain(instruction)])[0]
        weight = self.config.lexical_weight
        singles: list[_Single] = []
        named = {o for o in scene.objects + scene.articulated
                 if _first(o, clauses, scene) < len(clauses.said)}
        local = {o: clauses.evidence_words(vocabulary, _verbs(),
                                           clauses.clause[_first(o, clauses, scene)])
                 for o in named}
        for _, goal, renderings, found in _shortlist(lexical, set(said), local, self.config):
            total = self.embed([str(r) for r in renderings]) @ query + weight * np.array(
                [_evidence(said, f) + _phrasing(instruction, str(r))
                 for f, r in zip(found, renderings, strict=True)])
            total += (_order_bonus(goal, clauses, scene) - _undone(clauses, (goal,))
                      - _unsaid(goal, clauses, scene) - _preposition_cost(goal, clauses, scene))
            order = [int(j) for j in np.argsort(-total)]
            kept = order[:RENDERINGS]
            if goal.args[0] in local:  # and the one its own clause says best
                clause = local[goal.args[0]]
                kept += [max(order, key=lambda j: _evidence(clause, found[j]))]
            i = order[0]
            singles.append(_Single(Reading((goal,), str(renderings[i]), float(total[i])),
                                   found[i], [renderings[j] for j in dict.fromkeys(kept)]))
        singles.sort(key=lambda s: -s.reading.score)
        readings = [s.reading for s in singles]
        if singles and set(said) - set(singles[0].found):  # words the best goal leaves out
            pool = sorted(_covering(singles, set(said), local, self.config),
                          key=lambda s: _mention(s.reading, clauses, scene))
            combos = [c for n in (2, 3) for c in itertools.combinations(pool, n)
                      if _compatible(c, said) and _anchored(c, clauses, scene, spoken)]
            texts = [(c, t) for c in combos
                     for t in _conjunction(c, _fitting(c, said, scene_words))]
            sims = self.embed([t for _, t in texts]) @ query if texts else []
            best: dict[tuple[Goal, ...], Reading] = {}
            for (combo, text), sim in zip(texts, sims, strict=True):
                goals = tuple(s.goal for s in combo)
                order = sum(_order_bonus(g, clauses, scene) for g in goals) / len(goals)
                score = float(sim + weight * (_evidence(said, scene_words(text))
                                              + _phrasing(instruction, text))
                              + order - CONJUNCTION_COST * len(goals)
                              - _undone(clauses, goals)
                              - sum(_unsaid(g, clauses, scene)
                                    + _preposition_cost(g, clauses, scene) for g in goals))
                if goals not in best or score > best[goals].score:
                    best[goals] = Reading(goals, text, score)
            readings += best.values()
        readings.sort(key=lambda r: -r.score)
        return Grounding(instruction, readings, self.config)


def _shortlist(lexical: list, said: set[str], local: dict[str, list[str]],
               config: GroundingConfig) -> list:
    """The best goals by lexical score, the best two for each instruction word, and the best
    few of each named object, over the whole instruction and over the clause naming it ("the
    bowl on the plate" in "put the bowl on the plate, the ramekin on ...")."""
    chosen = lexical[:config.shortlist]
    for word in sorted(said):
        chosen += [t for t in lexical if any(word in f for f in t[3])][:2]
    for o in sorted(local):
        goals = [t for t in lexical if t[1].args[0] == o]
        chosen += goals[:config.per_object]
        chosen += sorted(goals, key=lambda t: -max(_evidence(local[o], f) for f in t[3])
                         )[:config.per_object]
    return list({id(t): t for t in chosen}.values())


def _covering(singles: list[_Single], said: set[str], local: dict[str, list[str]],
              config: GroundingConfig) -> list[_Single]:
    """The best single readings, the best few of each named object (by score and by the
    clause that names it), and the best one for each instruction word they miss."""
    chosen = singles[:config.pool]
    for o in sorted(local):
        goals = [s for s in singles if s.goal.args[0] == o]
        chosen += goals[:config.per_object]
        chosen += sorted(goals, key=lambda s: -_evidence(local[o], s.found))[:config.per_object]
    for word in sorted(said - {w for s in chosen for w in s.found}):
        chosen += [s for s in singles if word in s.found][:1]
    return list({id(s): s for s in chosen}.values())


def _fitting(combo: tuple[_Single, ...], said: list[str],
             scene_words: Callable[[str], list[str]]) -> tuple[Rendering, ...]:
    """The renderings of a conjunction's goals whose joined words best follow the instruction's
    ("the white mug on the left plate" where a single goal's best was "... the plate next to
    the white mug")."""
    return max(itertools.product(*(s.renderings for s in combo)),
               key=lambda rs: _evidence(said, scene_words(THEN.join(map(str, rs)))))


def _conjunction(combo: tuple[_Single, ...], renderings: tuple[Rendering, ...]) -> list[str]:
    """Sentences of a conjunction: its goals' sentences joined by ", then", once as they are
    and once with "it" for an entity the goal before names ("open the top drawer, then put
    the bowl in it"); goals that put several objects on one target also as one sentence ("put
    the soup and the butter in the basket", look-alikes "put both moka pots on the stove")."""
    plain, pronoun, implicit, before = [], [], [], set()
    for s, r in zip(combo, renderings, strict=True):
        x, *y = [_same_thing(a, before) for a in s.goal.args]
        x = x and not y  # "it" is never a thing moved: "put X on Y, then put it ..." moves X
        plain.append(str(r))
        pronoun.append(r.template.format(x="it" if x else r.x, y="it" if any(y) else r.y))
        unsaid = any(y) and r.template == TEMPLATES[s.goal.predicate][0]
        implicit.append(IMPLICIT[s.goal.predicate].format(x=r.x) if unsaid
                        and s.goal.predicate in IMPLICIT else pronoun[-1])
        before = set(s.goal.args)
    texts = [THEN.join(plain), THEN.join(pronoun), THEN.join(implicit)]
    first = renderings[0]
    if len({r.template for r in renderings}) == 1 and _same_target(combo):
        xs = [r.x for r in renderings]
        if _group(combo) and len(set(xs)) == 1:  # look-alikes no phrase tells apart
            plural = f"{xs[0].removeprefix('the ')}s"
            texts += [first.template.format(x=f"{q} {plural}", y=first.y)
                      for q in ("both", "the two", "all") if q != "both" or len(xs) == 2]
        joined = ", ".join(xs[:-1]) + " and " + xs[-1]
        texts += [first.template.format(x=joined, y=first.y)]
        if len(xs) == 2:
            texts.append(first.template.format(x=f"both {joined}", y=first.y))
    return list(dict.fromkeys(texts))


def _same_thing(entity: str, named: set[str]) -> bool:
    """`entity` is one of `named`, a part of one (the stove's cook region after "turn on the
    stove") or the whole one is a part of (the microwave after its heating region)."""
    return entity in named or referent(entity) in named or entity in {referent(e) for e in named}


def _whole_and_part(a: str, b: str) -> bool:
    """One entity is the fixture the other is a part of (the cabinet and its top drawer)."""
    return a != b and (referent(a) == b or referent(b) == a)


def _same_target(combo: tuple[_Single, ...]) -> bool:
    goals = [s.goal for s in combo]
    return all(len(g.args) == 2 for g in goals) and len({(g.predicate, g.args[1])
                                                         for g in goals}) == 1


def _group(combo: tuple[_Single, ...]) -> bool:
    """The conjunction puts look-alikes (one category) on one target."""
    return _same_target(combo) and len({category_of(s.goal.args[0]) for s in combo}) == 1


def _plain(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def _vocabulary(scene: _Scene) -> set[str]:
    """The words that name things, relations or quantities in this scene, and pronouns."""
    vocab = set(LOCATION_WORDS) | set(ORDERINGS) | _verbs() | QUANTIFIERS | {NEGATION} | PRONOUNS
    for e in scene.facts.entities:
        for n in scene.names(e):
            vocab |= set(words(n))
    return vocab - {"region", "side", "contain", "main", "table"}


def _verbs() -> set[str]:
    """The words of the one-argument predicates' sentences ("open", "turn", "off", ...)."""
    placing = {w for p in ("on", "in") for t in TEMPLATES[p] for w in words(t)}
    return {w for p, ts in TEMPLATES.items() for t in ts for w in words(t)
            if "{y}" not in t} - placing - {"x"}


def _evidence(said: list[str], sentence: list[str]) -> float:
    """The mean of two F1s of the words an instruction and a sentence share: counted as often as
    both say them, and in the same order (their longest common subsequence: "the bowl between
    the plate and the ramekin on the plate" is not "... on the ramekin"; "the front one of the
    bowls" still says "front")."""
    if not said or not sentence:
        return 0.0
    row = [0] * (len(sentence) + 1)
    for a in said:
        diagonal = 0
        for j, b in enumerate(sentence, 1):
            diagonal, row[j] = row[j], diagonal + 1 if a == b else max(row[j], row[j - 1])
    shared = sum((Counter(said) & Counter(sentence)).values())
    return (row[-1] + shared) / (len(said) + len(sentence))


def _phrasing(instruction: str, sentence: str) -> float:
    """`PHRASING_WEIGHT` x the same F1 over all words but articles: how the sentence says it
    ("on the right plate" is not "to the right of the plate")."""
    def plain(text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in ARTICLES]

    return PHRASING_WEIGHT * _evidence(plain(instruction), plain(sentence))


def _mention(reading: Reading, clauses: Clauses, scene: _Scene) -> int:
    """Where the instruction first names the reading's first argument (its object)."""
    return _first(reading.goals[0].args[0], clauses, scene)


def _order_bonus(goal: Goal, clauses: Clauses, scene: _Scene) -> float:
    """`ORDER_BONUS` when the instruction names the goal's object before its target."""
    if len(goal.args) < 2:
        return 0.0
    before = _first(goal.args[0], clauses, scene) < _first(goal.args[1], clauses, scene)
    return ORDER_BONUS if before else 0.0


def _first(entity: str, clauses: Clauses, scene: _Scene) -> int:
    """The index of the first instruction word naming the entity (`Clauses.mentions`); past the
    end when none does."""
    return min(_mentions(entity, clauses, scene), default=len(clauses.said))


def _mentions(entity: str, clauses: Clauses, scene: _Scene) -> list[int]:
    return clauses.mentions([_name_words(name) for name in scene.spoken_names(entity)])


def _anchored(combo: tuple[_Single, ...], clauses: Clauses, scene: _Scene,
              spoken: dict[str, list[int]]) -> bool:
    """Each goal of a conjunction is said in a clause of its own, in order: a placement where
    its object is named (a thing moved is named, never "it"), a one-argument goal where its
    verb is said as a verb; in that clause nothing else (no other thing, no pronoun) is named
    before the object ("set it on the plate" moves "it", not the plate; "put the mug on the
    plate" does not move the plate); up to the next goal's clause the words say its roles
    (`_roles_said`). Look-alikes put on one target are one
    clause ("put both moka pots on the stove")."""
    if _group(combo):
        return True
    anchors: list[int] = []
    for s in combo:
        goal = s.goal
        if len(goal.args) == 1:
            options = clauses.verb_clauses(_verb(goal.predicate))
        else:
            options = {clauses.clause[i] for i in _mentions(goal.args[0], clauses, scene)}
        later = [c for c in options if c > (anchors[-1] if anchors else -1)]
        if not later:
            return False
        anchors.append(min(later))
        if len(goal.args) == 2:
            here = [i for i, c in enumerate(clauses.clause) if c == anchors[-1]]
            x = min(i for i in _mentions(goal.args[0], clauses, scene)
                    if clauses.clause[i] == anchors[-1])
            others = [i for e, at in spoken.items() if e != goal.args[0] for i in at if i in here]
            others += [i for i in here if clauses.said[i] in PRONOUNS]
            if any(i < x for i in others):
                return False
    ends = [*anchors[1:], max(clauses.clause) + 1]
    return all(_roles_said(s.goal, clauses, scene, spoken, set(range(a, b)))
               for s, a, b in zip(combo, anchors, ends, strict=True))


def _roles_said(goal: Goal, clauses: Clauses, scene: _Scene, spoken: dict[str, list[int]],
                span: set[int]) -> bool:
    """Within the clauses `span`, a placement's object is named before a pronoun that stands
    for it ("the cheese sits by the drawer; move it onto the plate" moves the cheese, not the
    plate), and after the last word saying the object (its name or the pronoun) the target is
    named whole when any other thing is: in "pick up the bowl on the cookie box and place it on
    the plate" the plate is the target, the cookie box says which bowl."""
    if len(goal.args) < 2:
        return True
    x, y = goal.args
    named = [i for i in _mentions(x, clauses, scene) if clauses.clause[i] in span]
    pronouns = [i for i, w in enumerate(clauses.said)
                if w in PRONOUNS and clauses.clause[i] in span]
    if pronouns and named and min(named) > max(pronouns):
        return False
    moved = named + pronouns
    if not moved:
        return True
    last = max(moved)

    def after(entity: str) -> bool:
        return any(i > last and clauses.clause[i] in span for i in spoken.get(entity, ()))

    return after(y) or not any(after(e) for e in spoken if e != x)


def _name_words(name: str) -> list[str]:
    """A name's words as `Clauses` says them, without leading prepositions ("in front of the
    stove": front, of, stove; not "right plate" for "to the right of the plate")."""
    out = words(name, CLAUSE_KEEP)
    while out and out[0] in PREPOSITIONS:
        out = out[1:]
    return out


def _unsaid(goal: Goal, clauses: Clauses, scene: _Scene) -> float:
    """`UNSAID_COST` per argument of a placement the instruction does not name (not even by
    its head noun): a thing moved and where it goes are said."""
    if len(goal.args) < 2:
        return 0.0
    return UNSAID_COST * sum(not _mentions(a, clauses, scene) for a in goal.args)


def _preposition_cost(goal: Goal, clauses: Clauses, scene: _Scene) -> float:
    """`PREPOSITION_COST` for an `in` reading whose target the instruction says after "on"
    ("put the plate on the top of the drawer" is onto the cabinet, not into its top drawer):
    the preposition said last before the target's name, in the clause of the word saying the
    object (its name or a pronoun) just before it. Only this direction: "in" is also said of
    `on` goals ("the cheese in the bowl", "in front of the stove")."""
    if goal.predicate != "in" or _placing_word(goal, clauses, scene) not in ONTO:
        return 0.0
    return PREPOSITION_COST


def _placing_word(goal: Goal, clauses: Clauses, scene: _Scene) -> str | None:
    """The last of `ONTO` | `INTO` said between a word saying a placement's object and the
    next word naming its target in the same clause; None when no clause says both."""
    x, y = goal.args
    moved = sorted([*_mentions(x, clauses, scene),
                    *(i for i, w in enumerate(clauses.said) if w in PRONOUNS)])
    for j in _mentions(y, clauses, scene):
        before = [i for i in moved if i < j and clauses.clause[i] == clauses.clause[j]]
        if before:
            said = clauses.said[before[-1] + 1:j]
            return next((w for w in reversed(said) if w in ONTO | INTO), None)
    return None


def _verb(predicate: str) -> str:
    """The verb of a predicate's sentences ("open", "turn")."""
    return words(TEMPLATES[predicate][0])[0]


def _undone(clauses: Clauses, goals: tuple[Goal, ...]) -> float:
    """`UNDONE_VERB_COST` per one-argument verb said as a verb ("... and close door") that no
    goal of the reading does."""
    done = {_verb(g.predicate) for g in goals}
    verbs = {_verb(p) for p in TEMPLATES if p not in ("on", "in")}
    return UNDONE_VERB_COST * sum(bool(clauses.verb_clauses(v)) for v in verbs - done)


def _compatible(combo: tuple[_Single, ...], said: list[str]) -> bool:
    """A conjunction moves each object once (and acts on a fixture or on its parts, not both),
    and each of its goals explains an instruction word
    (or a word's further occurrence) the others do not; look-alikes put on one target are a
    group ("both moka pots")."""
    firsts = [s.goal.args[0] for s in combo]
    if len(set(firsts)) != len(firsts) or any(
            _whole_and_part(a, b) for a, b in itertools.combinations(firsts, 2)):
        return False
    if _group(combo):
        return True
    want = Counter(said)
    for i, s in enumerate(combo):
        rest: Counter[str] = Counter()
        for j, other in enumerate(combo):
            if j != i:
                rest |= Counter(other.found)
        mine = Counter(s.found)
        if not any(min(n, mine[w]) > min(n, rest[w]) for w, n in want.items()):
            return False
    return True


_RANKER: Ranker | None = None


def rank(instruction: str, facts: SceneFacts, config: GroundingConfig | None = None) -> Grounding:
    """The ranked readings of `instruction` in the scene of `facts` (a process-wide ranker
    keeps the sentence embeddings)."""
    global _RANKER
    config = config or GroundingConfig()  # not the config of the call before
    if _RANKER is None or config != _RANKER.config:
        _RANKER = Ranker(config)
    return _RANKER.rank(instruction, facts)
