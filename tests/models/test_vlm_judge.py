"""`models/vlm_judge.py`: a yes/no question with an image, the answer parsed strictly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from tether.errors import TetherError
from tether.models.planners import ChatMessage
from tether.models.vlm_judge import JudgeError, VLMJudge, parse_yes_no


@pytest.mark.parametrize(("reply", "value"), [
    ("yes", True), ("Yes.", True), (" YES!\n", True), ("'yes'", True), ("no", False),
    ("No.", False), ('"no"', False)])
def test_plain_yes_and_no_are_parsed(reply, value):
    assert parse_yes_no(reply) is value


@pytest.mark.parametrize("reply", ["", "maybe", "yes, it is", "Yes. No.", "y", "no..",
                                   "The answer is yes"])
def test_anything_else_is_a_judge_error(reply):
    with pytest.raises(JudgeError, match="unparseable verifier answer .* \\(expected yes or no\\)"):
        parse_yes_no(reply)


def test_a_long_reply_is_shortened_in_the_message():
    with pytest.raises(JudgeError) as caught:
        parse_yes_no("x" * 200)
    assert len(str(caught.value)) < 140


class Backend:
    name = "fake"

    def __init__(self, reply: str | Exception):
        self.reply, self.sent = reply, []

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        self.sent.extend(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_the_judge_sends_the_question_and_the_image_in_one_user_turn():
    backend = Backend("Yes")
    image = np.zeros((4, 4, 3), np.uint8)
    assert VLMJudge(backend).ask("Is the bowl on the plate?", image) is True
    [message] = backend.sent
    assert message.role == "user" and message.images[0] is image
    assert message.text == "Is the bowl on the plate?\nAnswer with exactly one word, yes or no."


def test_a_failing_backend_is_a_judge_error():
    with pytest.raises(JudgeError, match="the verifier backend failed: server down"):
        VLMJudge(Backend(TetherError("server down"))).ask("?", np.zeros((4, 4, 3), np.uint8))
