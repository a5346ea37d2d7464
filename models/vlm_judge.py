"""A VLM judge: a yes/no question about one camera image, put to a chat backend.

The verifier nodes (`verify`, `monitor`) ask it whether an expected effect is visible. The
question goes to a planner backend (`tether.models.planners`: a vLLM server, a local Qwen-VL) with
the image; the reply is parsed strictly: after trimming whitespace, surrounding quotes and one final
`.` or `!`, it must be `yes` or `no` (any case). Anything else is a `JudgeError`, never a guess.

    judge = VLMJudge(get_backend("openai", BackendConfig(model=..., base_url=...)))
    judge.ask("Is the black bowl on the plate?", image)   # True, False, or JudgeError
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tether.errors import TetherError
from tether.models.chat import ChatBackend, ChatMessage

INSTRUCTION = "Answer with exactly one word, yes or no."


class JudgeError(TetherError):
    """The judge's reply was not a plain yes or no (or the backend failed)."""


def parse_yes_no(reply: str) -> bool:
    """True for `yes`, False for `no`; `JudgeError` for anything else."""
    text = reply.strip().strip("\"'`").strip()
    if text[-1:] in (".", "!"):
        text = text[:-1]
    word = text.lower()
    if word in ("yes", "no"):
        return word == "yes"
    shown = reply if len(reply) <= 80 else reply[:77] + "..."
    raise JudgeError(f"unparseable verifier answer {shown!r} (expected yes or no)")


@dataclass
class VLMJudge:
    backend: ChatBackend

    @property
    def name(self) -> str:
        return f"vlm:{self.backend.name}"

    def ask(self, question: str, image: np.ndarray) -> bool:
        """Whether the answer to `question` about `image` (H x W x 3 uint8 RGB) is yes."""
        try:
            reply = self.backend.complete([ChatMessage("user", f"{question}\n{INSTRUCTION}",
                                                       [image])])
        except TetherError as exc:
            raise JudgeError(f"the verifier backend failed: {exc}") from exc
        return parse_yes_no(reply)
