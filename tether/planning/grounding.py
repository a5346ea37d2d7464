"""Instruction grounding by ranking: which goal of the scene an instruction asks for.

Instead of reading the instruction with phrase rules, the grounder enumerates what the skill
library can achieve in the scene at hand and ranks those candidate goals against the words:

1. **Candidates.** Every goal of a skill predicate (`tether.planning.skills.RULES`' keys) over
   the scene's entities: `on(X, Y)`/`in(X, R)` for each movable object X and each surface,
   object, receptacle region or table place Y (`in` for receptacle regions, `on` otherwise),
   the one-argument predicates (`open`, `close`, `turn_on`, ...) over the fixtures and their
   drawers. A goal that already holds (X already on Y) is no candidate.
2. **Sentences.** Each candidate is rendered as a few canonical sentences: one verb per
   predicate, each entity by its names (`SceneFacts.names`, its vocabulary noun) and by
   referring expressions computed from positions (`tether.scenes.referring`'s relations): what
   it stands on ("the bowl from the stove"), its nearest neighbour ("next to the ramekin"), the
   pair it stands between, and, among look-alikes, left/right/front/back.
3. **Score** = cosine of the instruction and the sentence (the local MiniLM, `minilm`) + the
   F1 of the scene words they share (entity names, aliases, colours, relation words). A goal
   scores its best sentence. Conjunctions of two or three of the best single goals, in the order
   the instruction mentions their objects, are rendered and scored the same way.
4. **Decide.** The best reading is planned when it scores at least `threshold` and beats the
   best different reading by `margin`; otherwise one `TetherError` lists the best readings with
   their scores, as a question.

    grounding = rank("lift bowl from stove and set on plate", facts)
    grounding.readings[0].goals     # (Goal('on', ('akita_black_bowl_1', 'plate_1')),)
    grounding.decide()              # the goals, or TetherError listing the closest readings

Embeddings of candidate sentences are cached (by text), so a scene's candidates are embedded
once per process and each further instruction costs one embedding and a dot product.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from tether.errors import TetherError
from tether.models.embedders import Embedder, get_embedder
from tether.planning.skills import RULES, Goal
from tether.scenes.referring import LOCATION_WORDS, ORDERINGS, SceneFacts, is_region, words
from tether.scenes.vocabulary import category_of, noun, phrase

# one canonical sentence per predicate and kind of target; {x} the object, {y} the target
TEMPLATES = {
    "on": ("put {x} on {y}",),
    "in": ("put {x} in {y}",),
    "open": ("open {x}",),
    "close": ("close {x}",),
    "turn_on": ("turn on {x}",),
    "turn_off": ("turn off {x}",),
}
INTO_OBJECT = "put {x} in {y}"  # "the cheese in the bowl": on(cheese, bowl) for a non-fixture
TO_PLACE = "put {x} at the {y}"  # a place on the table ("stove front", "next to plate")
THEN = ", then "
ORDER_BONUS = 0.05  # the instruction names a goal's object before its target
CONJUNCTION_COST = 0.02  # per goal of a conjunction: one goal wins a tie
SUPPORT_XY = 0.08  # m: an object stands on the highest thing under it within this distance
SUPPORT_XY_FIXTURE = 0.15  # m: ... or of a fixture's part (an open drawer is pulled out)
SUPPORT_Z = 0.01  # m: ... a fixture's surface may sit this much above the object's position


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
    threshold: float = 1.2
    margin: float = 0.005
    lexical_weight: float = 1.0
    shortlist: int = 12  # single goals embedded, the best by lexical evidence
    pool: int = 6  # single goals conjunctions are built from
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


def _table_place(entity: str, facts: SceneFacts) -> str | None:
    """The words of a place on the table that goals name (`main_table_stove_front_region` ->
    "stove front"): a region of a fixture that is not a scene entity, with a relation word."""
    for owner in facts.fixtures:
        if owner not in facts.entities and entity.startswith(owner + "_"):
            rest = entity[len(owner) + 1:].replace("_", " ").removesuffix(" region")
            if set(words(rest)) & LOCATION_WORDS:
                return rest
    return None


@dataclass
class _Scene:
    """The entities of a scene by the part they play in goals, and how to call them."""

    facts: SceneFacts
    objects: list[str]
    targets: list[str]
    articulated: list[str]
    places: dict[str, str]
    solid: list[str]  # what things stand on: objects, fixtures, fixture surfaces

    @classmethod
    def of(cls, facts: SceneFacts) -> _Scene:
        parts = _parts(facts)
        places = {e: p for e in facts.entities if (p := _table_place(e, facts)) is not None}
        table = {e for e, owner in parts.items() if owner not in facts.entities}
        objects = [e for e in facts.entities if e not in facts.fixtures and e not in parts
                   and not is_region(e)]
        owners = {parts[e] for e in parts} | {e for e in facts.entities for r in facts.entities
                                              if is_region(r) and r.startswith(e + "_")}
        surfaces = [e for e in facts.entities if (is_region(e) or e.endswith("_side"))
                    and e not in table]
        bodies = [e for e in facts.entities if not is_region(e) and e not in parts
                  and e not in owners]
        drawers = [e for e in surfaces if any("drawer" in n for n in facts.names(e))]
        articulated = [e for e in facts.fixtures if e in facts.entities] + drawers
        solid = [e for e in facts.entities if e not in table and e in facts.positions]
        return cls(facts, objects, [*bodies, *surfaces, *places], articulated, places, solid)

    def names(self, entity: str) -> list[str]:
        """What an entity may be called: its vocabulary phrase, its names, its aliases."""
        if entity in self.places:
            return [self.places[entity]]
        out = [*(" ".join(n) for n in self.facts.names(entity)[1:] if is_region(entity)),
               phrase(entity), *(" ".join(n) for n in self.facts.names(entity)[1:])]
        if is_region(entity) or entity.endswith("_side"):
            out.append(noun(category_of(entity)))
        out += [a for a, c in self.facts.aliases.items() if c == entity]
        return list(dict.fromkeys(out))

    def support(self, entity: str) -> str | None:
        """What `entity` stands on, from positions: the nearest thing below it."""
        pos = self.facts.positions
        if entity not in pos:
            return None
        x = pos[entity]
        below = [(float(pos[e][2]), e) for e in self.solid if e != entity
                 and pos[e][2] < x[2] + (0.0 if e in self.objects else SUPPORT_Z)
                 and np.linalg.norm(pos[e][:2] - x[:2]) < (
                     SUPPORT_XY if e in self.objects else SUPPORT_XY_FIXTURE)]
        return max(below)[1] if below else None

    def referring(self, entity: str) -> list[str]:
        """Phrases for an object: its names and, among look-alikes, the relations that single
        it out (what it stands on, its nearest neighbour, the pair it is between, its side)."""
        out = [f"the {n}" for n in self.names(entity)[:2]]
        base = self.names(entity)[0]
        under = self.support(entity)
        if under is not None:
            out += [f"the {base} from the {n}" for n in self.names(under)[:3]]
        pos = self.facts.positions
        alike = [o for o in self.objects if category_of(o) == category_of(entity) and o in pos]
        if len(alike) < 2 or entity not in pos:
            return list(dict.fromkeys(out))
        others = [o for o in self.solid if category_of(o) != category_of(entity)
                  and not is_region(o)]

        def nearest(anchor: np.ndarray) -> str:
            return min(alike, key=lambda o: float(np.linalg.norm(pos[o][:2] - anchor[:2])))

        for o in others:
            if nearest(pos[o]) == entity and np.linalg.norm(pos[o][:2] - pos[entity][:2]) < 0.2:
                out.append(f"the {base} next to the {self.names(o)[0]}")
        for a, b in itertools.combinations([o for o in others if o in self.objects], 2):
            mid = (pos[a] + pos[b]) / 2
            if nearest(mid) == entity and np.linalg.norm(mid[:2] - pos[entity][:2]) < 0.08:
                out.append(f"the {base} between the {self.names(a)[0]} and the "
                           f"{self.names(b)[0]}")
        centre = np.mean([pos[o] for o in self.objects if o in pos], axis=0)
        if nearest(centre) == entity:
            out.append(f"the {base} at the table center")
        for word, order in (("left", "left"), ("right", "right"), ("front", "near"),
                            ("back", "far")):
            if self._extreme(entity, alike, order):
                out.append(f"the {word} {base}")
        return list(dict.fromkeys(out))

    def _extreme(self, entity: str, group: list[str], order: str) -> bool:
        pos = self.facts.positions
        robot = self.facts.robot_position if self.facts.robot_position is not None \
            else np.zeros(3)
        key = {"left": lambda e: pos[e][1], "right": lambda e: -pos[e][1],
               "near": lambda e: np.linalg.norm(pos[e][:2] - robot[:2]),
               "far": lambda e: -np.linalg.norm(pos[e][:2] - robot[:2])}[order]
        return min(group, key=key) == entity

    def goals(self) -> list[tuple[Goal, list[str]]]:
        """Every candidate goal with its canonical sentences."""
        out = []
        for x in self.objects:
            subjects = self.referring(x)
            under = self.support(x)
            for y in self.targets:
                predicate = "in" if receptacle(y) else "on"
                if y == x or y == under or predicate not in RULES:
                    continue
                if y in self.places:
                    templates, targets = (TO_PLACE,), [self.places[y]]
                else:
                    into = predicate == "on" and y in self.objects
                    templates = TEMPLATES[predicate] + ((INTO_OBJECT,) if into else ())
                    targets = (self.referring(y) if y in self.objects
                               else [f"the {n}" for n in self.names(y)[:2]])
                sentences = [t.format(x=s, y=n) for t in templates for s in subjects
                             for n in targets]
                out.append((Goal(predicate, (x, y)), sentences))
        for predicate in RULES:
            if predicate in ("on", "in") or predicate not in TEMPLATES:
                continue
            for d in self.articulated:
                out.append((Goal(predicate, (d,)),
                            [t.format(x=f"the {n}") for t in TEMPLATES[predicate]
                             for n in self.names(d)]))
        return out


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
        scene = _Scene.of(facts)
        vocabulary = _vocabulary(scene)
        said = set(words(instruction)) & vocabulary
        lexical = []
        for goal, sentences in scene.goals():
            found = [set(words(s)) & vocabulary for s in sentences]
            lexical.append((max(_f1(said, f) for f in found), goal, sentences, found))
        lexical.sort(key=lambda t: -t[0])
        query = self.embed([_plain(instruction)])[0]
        weight = self.config.lexical_weight
        singles: list[tuple[Reading, set[str]]] = []
        for _, goal, sentences, found in _shortlist(lexical, said, self.config.shortlist):
            total = self.embed(sentences) @ query + weight * np.array([_f1(said, f)
                                                                       for f in found])
            total += _order_bonus(goal, instruction, scene)
            i = int(np.argmax(total))
            singles.append((Reading((goal,), sentences[i], float(total[i])), found[i]))
        singles.sort(key=lambda t: -t[0].score)
        readings = [r for r, _ in singles]
        if singles and said - singles[0][1]:  # words the best single goal leaves unexplained
            pool = sorted(_covering(singles, said, self.config.pool),
                          key=lambda t: _mention(t[0], instruction, scene))
            combos = [c for n in (2, 3) for c in itertools.combinations(pool, n)
                      if _compatible(c, said)]
            texts = [THEN.join(r.sentence for r, _ in c) for c in combos]
            sims = self.embed(texts) @ query if texts else []
            for combo, text, sim in zip(combos, texts, sims, strict=True):
                found = set().union(*(f for _, f in combo))
                goals = tuple(g for r, _ in combo for g in r.goals)
                order = sum(_order_bonus(g, instruction, scene) for g in goals) / len(goals)
                readings.append(Reading(goals, text, float(
                    sim + weight * _f1(said, found) + order - CONJUNCTION_COST * len(goals))))
        readings.sort(key=lambda r: -r.score)
        return Grounding(instruction, readings, self.config)


def _shortlist(lexical: list, said: set[str], n: int) -> list:
    """The `n` best goals by lexical score, and the best two for each instruction word."""
    chosen = lexical[:n]
    for word in sorted(said):
        chosen += [t for t in lexical if any(word in f for f in t[3])][:2]
    return list({id(t): t for t in chosen}.values())


def _covering(singles: list[tuple[Reading, set[str]]], said: set[str],
              n: int) -> list[tuple[Reading, set[str]]]:
    """The `n` best single readings, and the best one for each instruction word they miss."""
    chosen = singles[:n]
    for word in sorted(said - set().union(*(f for _, f in chosen))):
        chosen += [t for t in singles if word in t[1]][:1]
    return list({id(t): t for t in chosen}.values())


def _plain(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def _vocabulary(scene: _Scene) -> set[str]:
    """The words that name things or relations in this scene."""
    vocab = set(LOCATION_WORDS) | set(ORDERINGS) | _verbs()
    for e in scene.facts.entities:
        for n in scene.names(e):
            vocab |= set(words(n))
    return vocab - {"region", "side", "contain", "main", "table"}


def _verbs() -> set[str]:
    """The words of the one-argument predicates' sentences ("open", "turn", "off", ...)."""
    placing = {w for p in ("on", "in") for t in TEMPLATES[p] for w in words(t)}
    return {w for p, ts in TEMPLATES.items() for t in ts for w in words(t)
            if "{y}" not in t} - placing - {"x"}


def _f1(said: set[str], sentence: set[str]) -> float:
    if not said or not sentence:
        return 0.0
    return 2 * len(said & sentence) / (len(said) + len(sentence))


def _mention(reading: Reading, instruction: str, scene: _Scene) -> int:
    """Where the instruction first names the reading's first argument (its object)."""
    return _first(reading.goals[0].args[0], instruction, scene)


def _order_bonus(goal: Goal, instruction: str, scene: _Scene) -> float:
    """`ORDER_BONUS` when the instruction names the goal's object before its target."""
    if len(goal.args) < 2:
        return 0.0
    before = _first(goal.args[0], instruction, scene) < _first(goal.args[1], instruction, scene)
    return ORDER_BONUS if before else 0.0


def _first(entity: str, instruction: str, scene: _Scene) -> int:
    """The index of the first instruction word that is the head noun of one of the entity's
    names (past the end when none is)."""
    said = words(instruction)
    heads = {words(n)[-1] for n in scene.names(entity) if words(n)}
    return next((i for i, w in enumerate(said) if w in heads), len(said))


def _ordered(pool: list[Reading], instruction: str, scene: _Scene) -> list[Reading]:
    return sorted(pool, key=lambda r: _mention(r, instruction, scene))


def _compatible(combo: tuple[tuple[Reading, set[str]], ...], said: set[str]) -> bool:
    """A conjunction moves each object once, and each of its goals explains instruction words
    the others do not."""
    firsts = [r.goals[0].args[0] for r, _ in combo]
    if len(set(firsts)) != len(firsts):
        return False
    for i, (_, found) in enumerate(combo):
        rest = set().union(*(f for j, (_, f) in enumerate(combo) if j != i))
        if not (said & found) - rest:
            return False
    return True


_RANKER: Ranker | None = None


def rank(instruction: str, facts: SceneFacts, config: GroundingConfig | None = None) -> Grounding:
    """The ranked readings of `instruction` in the scene of `facts` (a process-wide ranker
    keeps the sentence embeddings)."""
    global _RANKER
    if _RANKER is None or (config is not None and config != _RANKER.config):
        _RANKER = Ranker(config)
    return _RANKER.rank(instruction, facts)
