"""BDDL problems: LIBERO's task files, read, checked, edited and written back.

A LIBERO task is a BDDL problem (PDDL-like s-expressions): a problem class (the scene), the
language instruction, table regions, fixtures, objects, the initial literals and the goal.
`read_problem` parses a file into a `Problem` and checks everything LIBERO would otherwise
reject late, or silently ignore, against what the installed LIBERO knows (problem classes, object
categories, predicates) and against the file itself (every name a literal uses is declared).
Each finding is a `TetherError` located at file:line:column:

    problem = read_problem("my_task.bddl")      # TetherError: my_task.bddl:31:9: unknown ...
    problem.goal                                # [('on', 'akita_black_bowl_1', 'plate_1')]
    problem.write(path)                         # the same task as BDDL LIBERO loads

Perturbations that change a scene edit a `Problem` (add objects, retarget the goal, reword the
instruction) and write it to a new file; `Problem.to_bddl` writes what LIBERO's parser reads
(names lower-case, as LIBERO's tokenizer makes them anyway).

LIBERO-PRO's `(:perturbation_config ...)` section is read into `Problem.perturbation_config`
(`tether.scenes.perturbation_config`, every key checked); scenes apply it as perturbations
(`tether.scenes.perturbations.bddl_config`), so `to_bddl` leaves it out.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from tether.errors import TetherError, did_you_mean
from tether.scenes.perturbation_config import PerturbationConfig, read_perturbation_config
from tether.scenes.sexpr import Reader, SList, Token, parse

SECTIONS = (":domain", ":language", ":regions", ":fixtures", ":objects", ":obj_of_interest",
            ":init", ":goal", ":requirements", ":perturbation_config")
REGION_KEYS = (":target", ":ranges", ":yaw_rotation", ":rgba")


@dataclass
class Region:
    """A named region: a rectangle on a table (`ranges`) or a site of an object (`target`)."""

    name: str
    target: str
    ranges: list[tuple[float, float, float, float]] = field(default_factory=list)
    yaw_rotation: tuple[float, float] | None = None
    rgba: tuple[float, float, float, float] | None = None

    @property
    def full_name(self) -> str:
        """The name literals use: target and region name, e.g. `main_table_plate_region`."""
        return f"{self.target}_{self.name}"


@dataclass
class Problem:
    """One BDDL problem; names are lower-case as LIBERO reads them."""

    problem_class: str
    language: str
    regions: list[Region]
    fixtures: dict[str, list[str]]  # category -> instances
    objects: dict[str, list[str]]
    obj_of_interest: list[str]
    init: list[tuple[str, ...]]
    goal: list[tuple[str, ...]]
    source: str = "<bddl>"
    # LIBERO-PRO's robustness section, applied by tether's perturbations (never written back)
    perturbation_config: PerturbationConfig | None = None

    def category_of(self, name: str) -> str | None:
        for table in (self.objects, self.fixtures):
            for category, names in table.items():
                if name in names:
                    return category
        return None

    def object_names(self) -> list[str]:
        return [n for names in self.objects.values() for n in names]

    def region_names(self) -> list[str]:
        return [r.full_name for r in self.regions]

    def copy(self, **changes) -> Problem:
        """A deep-enough copy to edit: lists and dicts are fresh."""
        fresh = replace(self, regions=[replace(r) for r in self.regions],
                        fixtures={k: list(v) for k, v in self.fixtures.items()},
                        objects={k: list(v) for k, v in self.objects.items()},
                        obj_of_interest=list(self.obj_of_interest), init=list(self.init),
                        goal=list(self.goal))
        return replace(fresh, **changes)

    def to_bddl(self) -> str:
        def num(x: float) -> str:
            return repr(float(x))

        out = [f"(define (problem {self.problem_class})", "  (:domain robosuite)",
               f"  (:language {self.language})", "  (:regions"]
        for r in self.regions:
            out.append(f"    ({r.name}")
            out.append(f"      (:target {r.target})")
            if r.ranges:
                out.append("      (:ranges (" + " ".join(
                    "(" + " ".join(num(x) for x in rng) + ")" for rng in r.ranges) + "))")
            if r.yaw_rotation is not None:
                out.append(f"      (:yaw_rotation (({num(r.yaw_rotation[0])} "
                           f"{num(r.yaw_rotation[1])})))")
            if r.rgba is not None:
                out.append("      (:rgba (" + " ".join(num(x) for x in r.rgba) + "))")
            out.append("    )")
        out.append("  )")
        for section, table in ((":fixtures", self.fixtures), (":objects", self.objects)):
            out.append(f"  ({section}")
            out += [f"    {' '.join(names)} - {category}" for category, names in table.items()
                    if names]
            out.append("  )")
        out.append("  (:obj_of_interest " + " ".join(self.obj_of_interest) + ")")
        out.append("  (:init")
        out += ["    (" + " ".join(lit) + ")" for lit in self.init]
        out.append("  )")
        out.append("  (:goal (And " + " ".join("(" + " ".join(g) + ")" for g in self.goal) + "))")
        out.append(")")
        return "\n".join(out) + "\n"

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_bddl())
        return path


# --- reading -------------------------------------------------------------------------------
@functools.cache
def libero_vocabulary() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What the installed LIBERO knows: problem classes, object categories, predicates."""
    from tether.scenes.libero_setup import import_libero

    import_libero()
    from libero.libero.envs.bddl_base_domain import TASK_MAPPING
    from libero.libero.envs.objects import OBJECTS_DICT
    from libero.libero.envs.predicates import VALIDATE_PREDICATE_FN_DICT

    return (frozenset(TASK_MAPPING), frozenset(OBJECTS_DICT),
            frozenset(VALIDATE_PREDICATE_FN_DICT))


class _Reader(Reader):
    def declarations(self, form: SList) -> dict[str, list[str]]:
        table: dict[str, list[str]] = {}
        pending: list[str] = []
        items = form.items[1:]
        i = 0
        while i < len(items):
            word = self.word(items[i], "a name")
            if word == "-":
                if i + 1 >= len(items) or not pending:
                    raise self.error(items[i], "'-' must sit between names and their category")
                table.setdefault(self.word(items[i + 1], "a category"), []).extend(pending)
                pending = []
                i += 2
                continue
            pending.append(word)
            i += 1
        if pending:
            raise self.error(form, f"{', '.join(pending)} have no '- category'")
        return table

    def literal(self, form: Token | SList) -> tuple[str, ...]:
        if not isinstance(form, SList) or not form.items:
            raise self.error(form, "expected a literal like (On a b)")
        return tuple(self.word(x, "a name") for x in form.items)

    def region(self, form: Token | SList) -> Region:
        if not isinstance(form, SList) or not form.items:
            raise self.error(form, "expected a region (name (:target ...) ...)")
        name = self.word(form.items[0], "a region name")
        region = Region(name=name, target="")
        for attr in form.items[1:]:
            if not isinstance(attr, SList):
                raise self.error(attr, f"region '{name}': expected (:key ...)")
            key = attr.head()
            if key == ":target":
                region.target = self.word(attr.items[1], "a target") if len(attr.items) == 2 \
                    else ""
            elif key == ":ranges":
                ranges = attr.items[1] if len(attr.items) == 2 else None
                if not isinstance(ranges, SList):
                    raise self.error(attr, "(:ranges ((x0 y0 x1 y1) ...))")
                for rng in ranges.items:
                    if not isinstance(rng, SList) or len(rng.items) != 4:
                        raise self.error(rng, "a range is 4 numbers (x0 y0 x1 y1)")
                    x0, y0, x1, y1 = (self.number(v) for v in rng.items)
                    if x1 < x0 or y1 < y0:
                        raise self.error(rng, "a range is (x_min y_min x_max y_max)")
                    region.ranges.append((x0, y0, x1, y1))
            elif key == ":yaw_rotation":
                value = attr.items[1] if len(attr.items) == 2 else None
                pair = value.items[0] if isinstance(value, SList) and value.items else None
                if not isinstance(pair, SList) or len(pair.items) != 2:
                    raise self.error(attr, "(:yaw_rotation ((min max)))")
                region.yaw_rotation = (self._angle(pair.items[0]), self._angle(pair.items[1]))
            elif key == ":rgba":
                value = attr.items[1] if len(attr.items) == 2 else None
                if not isinstance(value, SList) or len(value.items) != 4:
                    raise self.error(attr, "(:rgba (r g b a))")
                region.rgba = tuple(self.number(v) for v in value.items)  # type: ignore[assignment]
            else:
                raise self.error(attr, f"region '{name}': unknown key '{key}'"
                                       f"{did_you_mean(key, REGION_KEYS)}; tether understands "
                                       f"{', '.join(REGION_KEYS)}")
        if not region.target:
            raise self.error(form, f"region '{name}' has no (:target NAME)")
        return region

    def _angle(self, item: Token | SList) -> float:
        """A number, or a multiple of pi as LIBERO's files write it (LIBERO eval()s these)."""
        text = self.word(item, "an angle")
        m = re.fullmatch(r"(-?)(?:([\d.]+)\*)?(?:np\.)?pi", text)
        if m:
            return (-1.0 if m.group(1) else 1.0) * float(m.group(2) or 1.0) * math.pi
        return self.number(item)


def parse_problem(text: str, source: str = "<bddl>") -> Problem:
    """Parse and check BDDL text; `TetherError` at file:line:column for anything not understood."""
    r = _Reader(source)
    top = parse(text, source)
    if top.head() != "define":
        raise r.error(top, "a BDDL problem starts with (define (problem NAME) ...)")
    sections: dict[str, SList] = {}
    problem_form: SList | None = None
    for form in top.items[1:]:
        if not isinstance(form, SList):
            raise r.error(form, f"unexpected '{form.text}' in (define ...)")
        key = form.head()
        if key == "problem":
            problem_form = form
        elif key in SECTIONS:
            if key in sections:
                raise r.error(form, f"section '{key}' appears twice")
            sections[key] = form
        else:
            raise r.error(form, f"tether does not understand section '{key}'"
                                f"{did_you_mean(key, SECTIONS)}; it reads (problem ...), "
                                f"{', '.join(SECTIONS)}")
    if problem_form is None or len(problem_form.items) != 2:
        raise r.error(top, "missing (problem NAME)")
    for needed in (":language", ":objects", ":init", ":goal"):
        if needed not in sections:
            raise r.error(top, f"missing section ({needed} ...)")
    problems, categories, predicates = libero_vocabulary()
    problem_class = r.word(problem_form.items[1], "a problem class")
    if problem_class not in problems:
        raise r.error(problem_form.items[1], f"unknown problem class '{problem_class}'"
                      f"{did_you_mean(problem_class, problems)}; LIBERO has "
                      f"{', '.join(sorted(problems))}")
    language = " ".join(r.word(t, "a word") if isinstance(t, Token) else "" for t in
                        sections[":language"].items[1:]).strip()
    if not language:
        raise r.error(sections[":language"], "the instruction is empty")
    regions = [r.region(f) for f in sections[":regions"].items[1:]] if ":regions" in sections \
        else []
    fixtures = r.declarations(sections[":fixtures"]) if ":fixtures" in sections else {}
    objects = r.declarations(sections[":objects"])
    for form, table in ((sections.get(":fixtures"), fixtures), (sections[":objects"], objects)):
        for category in table:
            if category not in categories and category != "table" and not category.endswith(
                    "_table") and category != "floor":
                raise r.error(form, f"unknown object category '{category}'"
                                    f"{did_you_mean(category, categories)}")
    declared = {n for t in (objects, fixtures) for names in t.values() for n in names}
    # LIBERO's own files declare regions of fixtures the scene lacks; those regions just do not
    # exist (LIBERO skips them), so a literal naming one is the error, not the declaration.
    region_names = {reg.full_name for reg in regions if reg.target in declared}
    names = declared | region_names

    def literals(form: SList) -> list[tuple[str, ...]]:
        out = []
        for item in form.items:
            lit = r.literal(item)
            if lit[0] not in predicates:
                hint = did_you_mean(lit[0], predicates)
                raise r.error(item, f"unknown predicate '{lit[0]}'{hint}; LIBERO has "
                                    f"{', '.join(sorted(predicates))}")
            for arg, tok in zip(lit[1:], item.items[1:], strict=True):
                if arg not in names:
                    raise r.error(tok, f"'{arg}' is not a declared object, fixture or region"
                                       f"{did_you_mean(arg, names)}")
            out.append(lit)
        return out

    init = literals(SList(sections[":init"].items[1:], 0, 0))
    goal_form = sections[":goal"].items[1:]
    if len(goal_form) != 1 or not isinstance(goal_form[0], SList):
        raise r.error(sections[":goal"], "the goal is one literal or (And literal ...)")
    goal_body = goal_form[0]
    goal = literals(SList(goal_body.items[1:], 0, 0) if goal_body.head() == "and"
                    else SList([goal_body], 0, 0))
    if not goal:
        raise r.error(goal_body, "the goal has no literals")
    interest = [r.word(t, "a name") for t in sections[":obj_of_interest"].items[1:]] \
        if ":obj_of_interest" in sections else []
    for name, tok in zip(interest, sections.get(":obj_of_interest", SList([], 0, 0)).items[1:],
                         strict=False):
        if name not in names:
            raise r.error(tok, f"obj_of_interest '{name}' is not declared"
                               f"{did_you_mean(name, names)}")
    config = read_perturbation_config(sections[":perturbation_config"], r, names) \
        if ":perturbation_config" in sections else None
    return Problem(problem_class=problem_class, language=language, regions=regions,
                   fixtures=fixtures, objects=objects, obj_of_interest=interest, init=init,
                   goal=goal, source=source, perturbation_config=config)


def read_problem(path: Path | str) -> Problem:
    """Read and check a BDDL file (see `parse_problem`)."""
    path = Path(path)
    if not path.is_file():
        raise TetherError(f"no BDDL file '{path}'")
    return parse_problem(path.read_text(), source=str(path))
