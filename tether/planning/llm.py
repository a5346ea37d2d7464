"""The `llm` planner: a chat backend asked for a plan, its reply checked and repaired.

Each attempt sends the conversation so far to the backend (`tether.models.planners`), reads the
reply as a plan (`read_plan`: the JSON, its shape) and compiles it against the scene
(`check_plan`: node types, parameters and their types, entity names). With a `grounding`
config, the instruction's best readings (`tether.planning.grounding`, top `options`) go into the
prompt as grounded options, and a reply whose expected goals are not drawn from them is a
problem like any other. The exact problems go back
to the model as the next user turn (`repair_prompt`), up to `attempts` replies; then `PlanError`
lists what was still wrong with the last reply. Images go with the first user turn. A reply
sent back for repair is logged at INFO with its problems.

    planner = LLMPlanner(get_backend("openai", BackendConfig(model=..., base_url=...)))
    plan = planner.plan(PlanRequest(instruction, SceneFacts.of(scene), resolve=scene.resolve))
    planner.transcript   # every message of the last call, for the run directory
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from tether.errors import TetherError
from tether.models.planners import ChatBackend, ChatMessage
from tether.planning.grounding import GroundingConfig, rank
from tether.planning.plan import Plan, PlanError, check_plan, read_plan
from tether.planning.prompt import repair_prompt, system_prompt, user_prompt
from tether.planning.request import PlanRequest

log = logging.getLogger(__name__)


@dataclass
class LLMPlanner:
    backend: ChatBackend
    attempts: int = 3
    transcript: list[ChatMessage] = field(default_factory=list)
    grounding: GroundingConfig | None = None  # None: no grounded options in the prompt
    options: int = 5

    @property
    def name(self) -> str:
        return self.backend.name

    def plan(self, request: PlanRequest) -> Plan:
        if self.grounding is not None and not request.options and request.facts.entities:
            grounding = rank(request.instruction, request.facts, self.grounding)
            request.options = grounding.readings[:self.options]
        messages = [ChatMessage("system", system_prompt()),
                    ChatMessage("user", user_prompt(request), list(request.images))]
        problems: list[str] = []
        for attempt in range(1, self.attempts + 1):
            reply = self.backend.complete(messages)
            messages.append(ChatMessage("assistant", reply))
            try:
                plan = read_plan(reply, instruction=request.instruction, planner=self.name)
                problems = check_plan(plan, request.resolve) or _unoffered(plan, request)
            except PlanError as exc:
                problems = exc.problems
            if not problems:
                self.transcript = messages
                return plan
            log.info("reply %d of %d from the %s planner has %d problem(s), the first: %s",
                     attempt, self.attempts, self.name, len(problems), problems[0])
            messages.append(ChatMessage("user", repair_prompt(problems)))
        self.transcript = messages
        raise PlanError([f"no usable plan after {self.attempts} replies from the "
                         f"{self.name} planner; the last one had these problems:",
                         *(f"  {p}" for p in problems)])


def _unoffered(plan: Plan, request: PlanRequest) -> list[str]:
    """The plan's expected goals that no grounded option offers (none without options)."""
    offered = {str(g) for r in request.options for g in r.goals}
    if not offered:
        return []
    out = []
    for i, sub in enumerate(plan.subtasks):
        for effect in sub.expect:
            args = [v for k, v in effect.items() if k != "predicate"]
            if request.resolve is not None:
                try:
                    args = [request.resolve(a) for a in args]
                except TetherError:
                    pass  # check_plan reports unknown names
            goal = f"{effect.get('predicate')}({', '.join(args)})"
            if goal not in offered:
                out.append(f"subtasks[{i}].expect: {goal} is not one of the grounded readings "
                           f"({'; '.join(sorted(offered))})")
    return out
