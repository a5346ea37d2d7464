"""The structured reading of an instruction the grounding checks its readings against.

An instruction's content words (`tether.scenes.referring.words`, the words in `keep` kept) each
belong to a clause: the text between ",", ";", "and", "then", "after that" (not the "and" of
"between A and B"). `tether.planning.grounding` reads from it where things are named
(`Clauses.mentions`, `Clauses.whole`), which clauses say a verb as a verb (`verb_clauses`), and
the words that are evidence: a verb word right after an article is a modifier ("the open
drawer"), no evidence for its predicate (`evidence_words`).

    clauses = Clauses.of("pick up the bowl on the cookie box and place it on the plate", {"it"})
    clauses.said     # ['pick', 'bowl', 'on', 'cookies', 'box', 'place', 'it', 'on', 'plate']
    clauses.clause   # [0, 0, 0, 0, 0, 1, 1, 1, 1]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.scenes.referring import words

CLAUSE_BREAK = re.compile(r"[,;.]|\b(?:and|then|after that|afterwards)\b")
PAIR = re.compile(r"\b(between\s+(?:(?!\band\b)[^,;.])*?)\band\b")  # "between A and B": one
DETERMINERS = frozenset({"the", "a", "an", "this", "that"})  # before a verb word: a modifier


@dataclass(frozen=True)
class Clauses:
    """An instruction's words (pronouns in `keep` kept), the clause each is in, and the words
    said right after a determiner (a verb word there is a modifier)."""

    said: list[str]
    clause: list[int]
    modifiers: frozenset[int]  # indices into `said`

    @classmethod
    def of(cls, text: str, keep: frozenset[str] = frozenset()) -> Clauses:
        said: list[str] = []
        clause: list[int] = []
        modifiers: set[int] = set()
        text = PAIR.sub(r"\1&", text.lower().replace("’", "'"))
        for i, part in enumerate(CLAUSE_BREAK.split(text)):
            previous = ""
            for raw in re.findall(r"[a-z']+", part):
                for w in words(raw, keep):
                    if previous in DETERMINERS:
                        modifiers.add(len(said))
                    said.append(w)
                    clause.append(i)
                previous = raw
        return cls(said, clause, frozenset(modifiers))

    def mentions(self, names: list[list[str]]) -> list[int]:
        """Where one of the names is said whole ("white mug" in "the yellow and white mug"
        too); where none is, where a name's head noun is."""
        whole = self.whole(names)
        if whole:
            return whole
        heads = {n[-1] for n in names if n}
        return [i for i, w in enumerate(self.said) if w in heads]

    def whole(self, names: list[list[str]]) -> list[int]:
        """Where one of the names is said whole (the index of its last word)."""
        return sorted({i + len(n) - 1 for n in names if n for i in range(len(self.said))
                       if self.said[i:i + len(n)] == n})

    def verb_clauses(self, verb: str) -> set[int]:
        """The clauses that say `verb` as a verb (not as a modifier: "the open drawer")."""
        return {self.clause[i] for i, w in enumerate(self.said)
                if w == verb and i not in self.modifiers}

    def evidence_words(self, vocabulary: set[str], verbs: set[str],
                       clause: int | None = None) -> list[str]:
        """The words of `vocabulary` said (in `clause`, or all), but verb words said as
        modifiers."""
        return [w for i, w in enumerate(self.said) if w in vocabulary
                and not (w in verbs and i in self.modifiers)
                and clause in (None, self.clause[i])]
