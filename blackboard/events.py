"""Short-term memory: the episode's event log, rendered as text a planner can read.

An `Event` is one thing that happened at a control step: a leaf finished (its node, what it did
and with which arguments, the outcome, the verifier's feedback, the error code it wrote), or a
note a tree added with `remember`. Events marked `boundary` close a segment of the episode (a
sub-task finished, or what the tree observes of the scene changed); `compression` folds closed
segments into summaries.

    log = event_log()                       # the episode's log, at /memory/events
    log.append(Event(step=12, node="approach bowl", action="move_to", args="bowl+[0, 0, 0.1]",
                     outcome="SUCCESS"))
    log[0].render()  # 'At step 12, approach bowl (move_to bowl+[0, 0, 0.1]) succeeded.'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tether.blackboard.episode import storage

EVENTS_KEY = "/memory/events"
OUTCOME_WORDS = {"SUCCESS": "succeeded", "FAILURE": "failed", "NOTE": "noted"}


@dataclass(frozen=True)
class Event:
    """One entry of the short-term log (see the module docstring)."""

    step: int
    node: str
    action: str  # the node type (`move_to`, `check`, ...) or `note`
    args: str = ""
    outcome: str = "SUCCESS"  # SUCCESS, FAILURE or NOTE
    feedback: str = ""
    error: str | None = None
    boundary: bool = False

    def render(self) -> str:
        """`At step k, NODE (ACTION ARGS) succeeded|failed [with CODE]: FEEDBACK.`

        The parenthesis is left out when the node's name already says it (an unnamed node is
        named by its label, e.g. `check grasped(bowl)`).
        """
        if self.outcome == "NOTE":
            return f"At step {self.step}, note: {self.args}."
        what = self.action if not self.args else f"{self.action} {self.args}"
        verb = OUTCOME_WORDS.get(self.outcome, self.outcome)
        said = what in self.node or self.node == self.action  # an unnamed node's label
        text = f"At step {self.step}, {self.node}{'' if said else f' ({what})'} {verb}"
        if self.error:
            text += f" with {self.error}"
        return text + (f": {self.feedback}." if self.feedback else ".")

    def to_dict(self) -> dict:
        return asdict(self)


def event_log() -> list[Event]:
    """This episode's event log (created empty on first use; cleared with the blackboard)."""
    return storage().setdefault(EVENTS_KEY, [])


def render_events(events: list[Event]) -> str:
    """The raw log as text, one line per event."""
    return "\n".join(e.render() for e in events)
