"""The `llm` planner: a chat backend asked for a plan, its reply checked and repaired.

Each attempt sends the conversation so far to the backend (`tether.models.planners`), reads the
reply as a plan (`read_plan`: the JSON, its shape) and compiles it against the scene
(`check_plan`: node types, parameters and their types, entity names). The exact problems go back
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

from tether.models.planners import ChatBackend, ChatMessage
from tether.planning.plan import Plan, PlanError, check_plan, read_plan
from tether.planning.prompt import repair_prompt, system_prompt, user_prompt
from tether.planning.request import PlanRequest

log = logging.getLogger(__name__)


@dataclass
class LLMPlanner:
    backend: ChatBackend
    attempts: int = 3
    transcript: list[ChatMessage] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.backend.name

    def plan(self, request: PlanRequest) -> Plan:
        messages = [ChatMessage("system", system_prompt()),
                    ChatMessage("user", user_prompt(request), list(request.images))]
        problems: list[str] = []
        for attempt in range(1, self.attempts + 1):
            reply = self.backend.complete(messages)
            messages.append(ChatMessage("assistant", reply))
            try:
                plan = read_plan(reply, instruction=request.instruction, planner=self.name)
                problems = check_plan(plan, request.resolve)
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
