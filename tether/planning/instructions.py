"""The instruction parser: "pick up the bowl and place it on the plate" -> goal literals.

The offline planner's fallback when memory has no plan for an instruction. It knows the standard
manipulation verbs (`VERBS`): pick/place/put/move/stack/nest (on, onto, on top of, in, into,
inside, next to, between, in front of, to the right of, ...), push ... to, open, close/shut,
turn on/off. A sentence is split into clauses ("..., then ...", "... and put ..."); a clause
without a verb reuses the previous one; "it" refers to the previous clause's object (or, for
open/close, its target); "both A and B" and "both Xs" give one literal per object. Phrases stay
words here: `tether.scenes.referring.ground` maps them to entities.

    parse("put both the soup and the sauce in the basket")
    # [Literal('in', 'the soup', 'the basket'), Literal('in', 'the sauce', 'the basket')]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tether.errors import TetherError

PLACE_VERBS = r"(?:put|place|move|set|stack|nest|drop|bring|transfer|push|slide|carry|lay)"
PICK_VERBS = r"(?:pick up|pick|grab|take|get|lift|find|grasp)"
RELATIONS = [  # longest first; (words, predicate, location)
    ("on the top of", "on top of", False), ("on top of", "on top of", False),
    ("onto", "on", False), ("on to", "on", False),
    ("into", "in", False), ("inside of", "in", False), ("inside", "in", False),
    ("in front of", "on", True), ("to the front of", "on", True), ("to the back of", "on", True),
    ("to the right of", "on", True), ("to the left of", "on", True), ("next to", "on", True),
    ("beside", "on", True), ("between", "on", True), ("behind", "on", True),
    ("on", "on", False), ("in", "in", False),
    ("to", "to", False),  # "move the bowl to the plate": on it, or in it when it is a receptacle
]
REL = "|".join(re.escape(r) for r, _, _ in RELATIONS)
FILLERS = [r"\bso (?:that )?it (?:is|sits|ends up|rests)\b", r"\bright (?=next to)",
           r"\b(?:just|exactly|midway|please|carefully|gently)\b", r"^(?:first|now|then|and)\b",
           r"^[\w ]+? - "]
CLAUSE_SPLIT = re.compile(
    r"\s*(?:,\s*(?:and\s+)?(?:then\s+)?|;\s*|\s+and\s+then\s+|\s+then\s+|"
    r"\s+and\s+(?=(?:open|close|turn|shut|switch|pull|stack|nest|pick|grab|take)\b|"
    r"(?:put|place|move|set|drop|push)\s+(?!it\b|them\b)))")


@dataclass(frozen=True)
class Literal:
    """A goal in the instruction's words: `on("the bowl", "the plate")`, `open("the drawer")`.

    `location` marks a target that is a place ("next to the plate"), not an object."""

    predicate: str
    object: str
    target: str | None = None
    location: bool = False


def _clean(text: str) -> str:
    text = " ".join(text.lower().replace("’", "'").split()).rstrip(".!")
    m = re.match(r"^of the (?:two|three|four|five|\d+) ([a-z ]+?)s?, (.*)$", text)
    if m:  # "of the three black bowls, move the centre one onto the plate"
        text = re.sub(r"\bone\b", m.group(1), m.group(2), count=1)
    return text


def _strip(clause: str) -> str:
    for pattern in FILLERS:
        clause = re.sub(pattern, " ", clause)
    return " ".join(clause.split())


def _objects(phrase: str) -> list[str]:
    """"both the soup and the sauce" -> two phrases; "both moka pots" -> a plural phrase."""
    phrase = phrase.strip()
    if phrase.startswith("both "):
        rest = phrase[5:]
        parts = re.split(r"\s+and\s+(?=the\b)|\s+and\s+", rest, maxsplit=1)
        return parts if len(parts) == 2 else [f"both {rest}"]
    if "between" not in phrase:
        return re.split(r"\s+and\s+(?=the\b)", phrase)
    return [phrase]


def _relation(rest: str) -> tuple[str, str, bool] | None:
    m = re.search(rf"\b({REL})\b", rest)
    if not m:
        return None
    for words, predicate, location in RELATIONS:
        if m.group(1) == words:
            target = rest[m.end():].strip() if not location else rest[m.start():].strip()
            return predicate, target, location
    return None


Rule = Callable[[re.Match, "Context"], list[Literal]]


@dataclass
class Context:
    """What earlier clauses left for later ones: their verb, object and target."""

    verb: str = "put"
    object: str | None = None
    target: str | None = None
    pending: list[str] = field(default_factory=list)  # clauses found inside a clause


def _place(obj: str, rest: str, ctx: Context) -> list[Literal]:
    if obj.strip() in ("it", "them") and ctx.object:  # "...; move it onto the plate"
        obj = ctx.object
    rel = _relation(" " + rest)
    if rel is None:
        if re.search(r"\b(inside|in it|there)\b", rest) and ctx.object:
            rel = ("in", ctx.object, False)
        else:
            raise TetherError(f"no place to put it in '{rest.strip()}' (on, in, next to, ...?)")
    predicate, target, location = rel
    if predicate == "on top of":  # the top side of a fixture ("on top of the cabinet")
        predicate, target = "on", f"top side of {target}"
    if target in ("it", "") and ctx.object:
        target = ctx.object
    more = re.match(rf"^(.+?)\s+and\s+(.+?\s(?:{REL})\s.+)$", target)
    if more and not location:  # "on the box and the cheese in front of the plate"
        target = more.group(1)
        ctx.pending.append(more.group(2))
    return [Literal(predicate, o, target, location) for o in _objects(obj)]


def _pick_place(m: re.Match, ctx: Context) -> list[Literal]:
    return _place(m.group("obj"), m.group("rest"), ctx)


def _put(m: re.Match, ctx: Context) -> list[Literal]:
    text = m.group("body")
    found = list(re.finditer(rf"\s({REL})\s", f" {text} "))
    rel = found[-1] if found else None  # the last relation places; earlier ones refer
    if not rel:
        raise TetherError(f"no place to put it in '{text}' (on, in, next to, ...?)")
    obj = f" {text} "[:rel.start()].strip()
    return _place(obj, f" {text} "[rel.start():], ctx)


def _articulated(predicate: str) -> Rule:
    def rule(m: re.Match, ctx: Context) -> list[Literal]:
        obj = m.group("obj").strip()
        if obj in ("it", "") and (ctx.target or ctx.object):
            obj = ctx.target or ctx.object
        return [Literal(predicate, obj)]
    return rule


# (pattern, rule): the first pattern that matches a clause decides
VERBS: list[tuple[re.Pattern, Rule]] = [
    (re.compile(rf"^{PICK_VERBS} (?P<obj>.+?) and (?:then )?{PLACE_VERBS} (?:it|them) "
                r"(?P<rest>.+)$"), _pick_place),
    (re.compile(r"^(?:open|pull open) (?P<obj>.+)$"), _articulated("open")),
    (re.compile(r"^(?:pull|slide) (?P<obj>.+?) open$"), _articulated("open")),
    (re.compile(r"^(?:close|shut) (?P<obj>.+)$"), _articulated("close")),
    (re.compile(r"^(?:push|slide) (?P<obj>.+?) (?:shut|closed)$"), _articulated("close")),
    (re.compile(r"^(?:turn|switch) on (?P<obj>.+)$"), _articulated("turn_on")),
    (re.compile(r"^(?:turn|switch) (?P<obj>.+?) on$"), _articulated("turn_on")),
    (re.compile(r"^(?:turn|switch) off (?P<obj>.+)$"), _articulated("turn_off")),
    (re.compile(rf"^(?P<obj>.+?) (?:goes|go|belongs|should go) (?P<rest>(?:{REL})\b.+)$"),
     _pick_place),
    (re.compile(rf"^{PLACE_VERBS} (?P<body>.+)$"), _put),
]


# a clause that says where something is, before the one that says what to do with it
DESCRIPTION = re.compile(r"^(?P<obj>(?:the|a|an) [a-z -]+?) (?:is|are|sits|sit|lies|lie|stands|"
                         r"stand|rests|rest)\b")


def parse(instruction: str) -> list[Literal]:
    """The goal literals of an instruction, in order; `TetherError` when a clause is not
    understood (the message quotes it)."""
    literals: list[Literal] = []
    ctx = Context()
    clauses = CLAUSE_SPLIT.split(_clean(instruction))
    while clauses:
        clause = _strip(clauses.pop(0))
        if not clause or re.match(rf"^(?:{REL})\b", clause):
            continue  # empty, or a refinement of the last place ("..., on the side of the bowl")
        both = re.match(rf"^(.*?\s(?:{REL})\s.+?)\s+and\s+(the\s+[a-z][a-z ]*?\s(?:{REL})\s.+)$",
                        clause)
        if both and "between" not in clause:  # "the ramekin on the box and the cheese in ..."
            clause = both.group(1)
            clauses.insert(0, both.group(2))
        said = DESCRIPTION.match(clause)
        if said and clauses and not any(p.match(clause) for p, _ in VERBS):
            ctx.object = said.group("obj")  # "the cheese sits by the drawer; move it ..."
            continue
        for pattern, rule in VERBS:
            if m := pattern.match(clause):
                found = rule(m, ctx)
                ctx.verb = clause.split()[0]
                break
        else:
            m = VERBS[-1][0].match(f"put {clause}")
            if m is None or not re.search(rf"\b({REL})\b", clause):
                raise TetherError(f"cannot read '{clause}': no known verb (put, place, pick, "
                                  "stack, push, open, close, turn on/off)")
            found = _put(m, ctx)
        literals.extend(found)
        last = found[-1]
        ctx.object, ctx.target = last.object, last.target
        clauses[:0], ctx.pending = ctx.pending, []
    if not literals:
        raise TetherError(f"nothing to do in '{instruction}'")
    return literals
