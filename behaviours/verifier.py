"""Verifiers: who decides whether an expectation about the scene holds, and when they answer.

An `Expectation` is a named predicate (`tether.behaviours.conditions.PredicateCall`) that must hold
(or, with `holds=False`, must not), plus the yes/no question a VLM is asked about it. A verifier
`request`s a check **at the step it is called**: the sim verifier evaluates the predicate there
and then; the VLM verifier renders the camera image there and hands the question to a worker
thread. The returned `Pending` gives its `Verdict` when asked (`result()`), waiting for a slow
model if need be. The nodes (`verify`, `monitor`) decide at which step they ask for the result,
so an episode is the same whether the model answers in a millisecond or a minute.

    verifier = SimVerifier()                           # the default: tether.scenes.predicates
    verifier = VLMVerifier(VLMJudge(backend))          # a run's `verifier` service
    verdict = verifier.request(robot, expectation).result()
    verdict.contradicts   # the scene says otherwise;  verdict.error: no usable answer
"""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from tether.behaviours.conditions import PredicateCall
from tether.blackboard.references import deref, render
from tether.models.vlm_judge import JudgeError, VLMJudge
from tether.scenes.predicates import PREDICATES
from tether.scenes.robot import Robot

SIM, VLM, AUTO = "sim", "vlm", "auto"
VERIFIER_CHOICES = (AUTO, SIM, VLM)


@dataclass(frozen=True)
class Expectation:
    call: PredicateCall
    holds: bool = True  # False: the predicate must not become true
    question: str | None = None  # for a VLM; `${/key}` placeholders; default from the predicate

    def __str__(self) -> str:
        return str(self.call) if self.holds else f"not {self.call}"

    def ask(self) -> str:
        """The yes/no question whose `yes` means the predicate holds."""
        if self.question is not None:
            return render(self.question)
        pred = PREDICATES[self.call.predicate]
        args = deref(self.call.args)
        text = re.sub(r"\s*\([^)]*\)", "", pred.doc).rstrip(".")
        text = re.sub(r"`(\w+)`", lambda m: str(args.get(m.group(1), m.group(1))), text)
        return f"Look at the image. Is it true that {text}?"


@dataclass(frozen=True)
class Verdict:
    value: bool | None  # whether the predicate holds (None: no usable answer)
    step: int  # the step whose observation was judged
    by: str  # the verifier's name
    error: str | None = None

    def contradicts(self, expectation: Expectation) -> bool:
        return self.value is not None and self.value != expectation.holds


class Pending(Protocol):
    def result(self) -> Verdict:
        """The verdict, waiting for it if it is not there yet."""


@dataclass(frozen=True)
class Ready:
    verdict: Verdict

    def result(self) -> Verdict:
        return self.verdict


@dataclass
class Asked:
    future: Future
    step: int
    by: str

    def result(self) -> Verdict:
        try:
            return Verdict(bool(self.future.result()), self.step, self.by)
        except JudgeError as exc:
            return Verdict(None, self.step, self.by, str(exc))


class Verifier(Protocol):
    name: str

    def request(self, robot: Robot, expectation: Expectation) -> Pending:
        """Start judging `expectation` on the scene as it is now."""


class SimVerifier:
    """The sim's own predicates (`tether.scenes.predicates`), evaluated at the step of the
    request."""

    name = SIM

    def request(self, robot: Robot, expectation: Expectation) -> Pending:
        return Ready(Verdict(expectation.call(robot), robot.steps, self.name))


class VLMVerifier:
    """A VLM asked about the `camera` image rendered at the step of the request, in a worker
    thread (one question at a time, in request order)."""

    def __init__(self, judge: VLMJudge, *, camera: str = "agentview",
                 size: tuple[int, int] = (256, 256)):
        self.judge, self.camera, self.size = judge, camera, size
        self.name = judge.name
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlm-verifier")

    def request(self, robot: Robot, expectation: Expectation) -> Pending:
        image = robot.render(self.camera, self.size)
        if image is None:
            return Ready(Verdict(None, robot.steps, self.name,
                                 f"the scene has no camera '{self.camera}' to show the verifier"))
        question = expectation.ask()
        return Asked(self.pool.submit(self.judge.ask, question, image), robot.steps, self.name)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def choose_verifier(choice: str, given: Verifier | None) -> Verifier | None:
    """The verifier a node asks: `sim`; `vlm` (`given`, the run's `verifier` service, None when
    the run has none); `auto` (the service if given, else `sim`)."""
    if choice == SIM:
        return SimVerifier()
    if choice == VLM:
        return given
    return given if given is not None else SimVerifier()
