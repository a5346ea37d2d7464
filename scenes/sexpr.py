"""S-expressions as BDDL writes them: tokens and lists that remember where they stand.

`parse(text, source)` gives the top list of a file; every `Token` and `SList` carries its line
and column, so a `Reader` over them reports any finding as a `TetherError` at file:line:column:

    top = parse(path.read_text(), str(path))
    reader = Reader(str(path))
    reader.number(top.items[1])           # TetherError: task.bddl:3:7: 'abc' is not a number

`tether.scenes.bddl` reads a problem with it, `tether.scenes.perturbation_config` its
`:perturbation_config` section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.errors import TetherError


@dataclass(frozen=True)
class Token:
    text: str
    line: int
    col: int


# An s-expression: a token or a list of them, each list carrying where it opened.
@dataclass
class SList:
    items: list[Token | SList]
    line: int
    col: int

    def head(self) -> str:
        return self.items[0].text.lower() if self.items and isinstance(self.items[0], Token) else ""


def tokenize(text: str) -> list[Token]:
    tokens = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split(";", 1)[0]
        for m in re.finditer(r"\(|\)|[^\s()]+", line):
            tokens.append(Token(m.group(), lineno, m.start() + 1))
    return tokens


def parse(text: str, source: str) -> SList:
    """The one top-level list of `text`; `TetherError` at file:line:column when unbalanced."""
    stack: list[SList] = []
    top: SList | None = None
    for tok in tokenize(text):
        if tok.text == "(":
            lst = SList([], tok.line, tok.col)
            if stack:
                stack[-1].items.append(lst)
            elif top is not None:
                raise TetherError(f"{source}:{tok.line}:{tok.col}: text after the end of "
                                  "the problem")
            else:
                top = lst
            stack.append(lst)
        elif tok.text == ")":
            if not stack:
                raise TetherError(f"{source}:{tok.line}:{tok.col}: unbalanced ')'")
            stack.pop()
        elif not stack:
            raise TetherError(f"{source}:{tok.line}:{tok.col}: '{tok.text}' outside the "
                              "(define ...) form")
        else:
            stack[-1].items.append(tok)
    if stack:
        raise TetherError(f"{source}:{stack[-1].line}:{stack[-1].col}: this '(' is never "
                          "closed")
    if top is None:
        raise TetherError(f"{source}:1:1: empty file; a BDDL problem is (define (problem ...) ...)")
    return top


class Reader:
    """Reads words and numbers out of s-expressions of one file, with located errors."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, at: Token | SList, message: str) -> TetherError:
        return TetherError(f"{self.source}:{at.line}:{at.col}: {message}")

    def word(self, item: Token | SList, what: str) -> str:
        if not isinstance(item, Token):
            raise self.error(item, f"expected {what}, found a list")
        return item.text.lower()

    def number(self, item: Token | SList) -> float:
        text = self.word(item, "a number")
        try:
            return float(text)
        except ValueError:
            raise self.error(item, f"'{text}' is not a number") from None
