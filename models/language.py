"""Language conditioning: an instruction's sentence embedding as a policy input feature.

ACT has no language input, but it takes a vector of `observation.environment_state`. A
`Language` names the embedder (`tether.models.embedders`, e.g. `minilm`: the shipped
all-MiniLM-L6-v2, offline) whose embedding of the episode's instruction fills that feature: the
recorder (`tether.datasets`) stores it in every frame, `tether train` copies the `Language` into
the checkpoint (`language.json`), and `LerobotPolicy` computes it at run time from the
instruction it is given, so the policy sees the same vector for the same words.

    language = Language("minilm")
    language.vector("pick up the ketchup and place it in the basket")   # float32, (384,)
    language.save(checkpoint); Language.load(checkpoint)                # None when absent
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tether.errors import TetherError
from tether.models.embedders import EMBEDDERS, Embedder

FEATURE = "observation.environment_state"
FILE = "language.json"


@dataclass
class Language:
    """The instruction's embedding by the embedder registered as `embedder`."""

    embedder: str = "minilm"
    _model: Embedder | None = field(default=None, init=False, repr=False, compare=False)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False,
                                          compare=False)

    @property
    def model(self) -> Embedder:
        if self._model is None:
            self._model = EMBEDDERS.get(self.embedder, where="language: ")()
        return self._model

    @property
    def dim(self) -> int:
        return self.model.dim

    def vector(self, instruction: str) -> np.ndarray:
        """The float32 embedding of `instruction` (computed once per distinct text)."""
        if instruction not in self._cache:
            self._cache[instruction] = self.model.embed([instruction])[0].astype(np.float32)
        return self._cache[instruction]

    def feature(self) -> dict:
        """The LeRobotDataset feature the vector fills."""
        return {"dtype": "float32", "shape": (self.dim,), "names": None}

    def save(self, folder: Path) -> None:
        """Write `folder/language.json`."""
        payload = {"feature": FEATURE, "embedder": self.embedder}
        (folder / FILE).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Language | None:
        """The `Language` saved in `folder`, or None when it has none."""
        path = folder / FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            embedder = data["embedder"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise TetherError(f"{path}: not a language file ({exc!r}); expected "
                              '{"feature": ..., "embedder": NAME}') from None
        EMBEDDERS.get(str(embedder), where=f"{path}: ")  # a located error for an unknown name
        return cls(str(embedder))
