"""Perturbations of the instruction and of what it asks for.

- `task_rebind` (scene): the goal and the instruction name another valid object of the scene
  (LIBERO-PRO "task", Harness VLA's semantic retargeting); success follows the new goal.
- `unseen_names` (scene): the instruction calls objects by synonyms, brand names or invented
  words the policy never saw (VLA²'s unseen concepts); the goal is unchanged.
- `noisy_instruction` (scene): fillers, colloquial openings and typos (LIBERO-SOMA noisy
  prompts, LIBERO-PRO "language"); the goal is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tether.errors import TetherError
from tether.scenes.bddl import Problem
from tether.scenes.perturbations.base import SCENE, Perturbation, register
from tether.scenes.perturbations.edits import noun
from tether.scenes.vocabulary import PARAPHRASES

INVENTED = ("blicket", "dax", "wug", "toma", "fep", "zorb", "kiki")
OPENINGS = ("hey robot, ", "um, could you ", "please ", "ok so ", "yo, ", "can you ")
ENDINGS = ("", " thanks", " real quick", " pls", " if you can", ", cheers")


@dataclass(frozen=True)
class RebindConfig:
    object: str = ""  # the new object to move; default: a seeded choice among the others


@register
class TaskRebind(Perturbation):
    name, stage, Config = "task_rebind", SCENE, RebindConfig
    summary = "the goal and instruction name another object of the scene to move"

    def edit_problem(self, problem: Problem, rng: np.random.Generator) -> Problem:
        binary = [i for i, lit in enumerate(problem.goal) if len(lit) == 3
                  and lit[0] in ("on", "in") and lit[1] in problem.object_names()]
        if not binary:
            raise TetherError("task_rebind needs a goal that moves an object (on/in)")
        i = binary[0]
        pred, old, target = problem.goal[i]
        used = {a for lit in problem.goal for a in lit[1:]}
        old_category = problem.category_of(old)
        candidates = [o for o in problem.object_names() if o not in used
                      and problem.category_of(o) != old_category]
        if self.config.object:
            if self.config.object not in problem.object_names():
                raise TetherError(f"task_rebind: '{self.config.object}' is not an object of "
                                  f"this task; its objects: {', '.join(problem.object_names())}")
            new = self.config.object
        elif candidates:
            new = candidates[int(rng.integers(len(candidates)))]
        else:
            raise TetherError("task_rebind: no other object to rebind the task to")
        goal = list(problem.goal)
        goal[i] = (pred, new, target)
        interest = [new if o == old else o for o in problem.obj_of_interest]
        word = "in" if pred == "in" else "on"
        language = f"put the {noun(problem, new)} {word} the {noun(problem, target)}"
        return problem.copy(goal=goal, obj_of_interest=interest, language=language)


def _replace_words(text: str, table: dict[str, str]) -> str:
    """Replace whole words/phrases, longest first, each span once."""
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b", re.IGNORECASE)
    return pattern.sub(lambda m: table[m.group(0).lower()], text)


@dataclass(frozen=True)
class UnseenConfig:
    mode: str = "synonym"  # synonym (incl. brand names) or invented

    def __post_init__(self) -> None:
        if self.mode not in ("synonym", "invented"):
            raise ValueError("mode is 'synonym' or 'invented'")


@register
class UnseenNames(Perturbation):
    name, stage, Config = "unseen_names", SCENE, UnseenConfig
    summary = "the instruction names objects by synonyms, brand names or invented words"

    def edit_instruction(self, text: str, problem: Problem, rng: np.random.Generator) -> str:
        if self.config.mode == "synonym":
            table = {k: v[int(rng.integers(len(v)))] for k, v in PARAPHRASES.items()}
        else:
            nouns = sorted({noun(problem, n) for n in problem.object_names()}, key=len,
                           reverse=True)
            words = list(rng.permutation(INVENTED))
            table = {n: words[i % len(words)] for i, n in enumerate(nouns)}
            # also the bare head noun ("bowl" for "black bowl")
            table.update({n.split()[-1]: table[n] for n in nouns if n.split()[-1] not in table})
        return _replace_words(text, table)


@dataclass(frozen=True)
class NoisyConfig:
    typo_rate: float = 0.05  # chance per letter of a word (4+ letters) that two letters swap
    filler: bool = True  # add a colloquial opening and ending


@register
class NoisyInstruction(Perturbation):
    name, stage, Config = "noisy_instruction", SCENE, NoisyConfig
    summary = "colloquial fillers and typos in the instruction"

    def edit_instruction(self, text: str, problem: Problem, rng: np.random.Generator) -> str:
        words = text.split()
        for i, w in enumerate(words):
            if len(w) >= 4 and w.isalpha() and rng.random() < self.config.typo_rate * len(w):
                j = int(rng.integers(1, len(w) - 2))
                words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        out = " ".join(words)
        if self.config.filler:
            out = OPENINGS[int(rng.integers(len(OPENINGS)))] + out + \
                ENDINGS[int(rng.integers(len(ENDINGS)))]
        return out
