"""Event-boundary compression: a short-term context that stays flat over long episodes.

Following OmniAct's episodic memory, the raw events of the current segment are kept verbatim;
when an event closes the segment (a sub-task finished, or the scene changed: `Event.boundary`)
the segment folds into one `Segment` summary line. The newest `keep` summaries stay as lines;
older ones fold into a single `Digest` of counts (which nodes ran and failed, which error codes
occurred, how many segments succeeded), whose size depends on the tree, not on the episode's
length. So a 1,000-event episode renders about as long as a 100-event one, while the raw log
grows linearly (`benchmarks/context_size.py` measures both with a real tokenizer).

    memory = CompressedLog(keep=6)
    for event in events:
        memory.add(event)
    memory.render()   # digest line, summary lines, then "At step k, ..." for the open segment
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tether.blackboard.events import Event


@dataclass
class Segment:
    """A closed segment: steps, the node that closed it, its outcome, what failed on the way."""

    first: int
    last: int
    closed_by: str
    outcome: str
    events: int
    failures: Counter = field(default_factory=Counter)  # node -> failures in the segment
    errors: Counter = field(default_factory=Counter)  # error code -> count

    def render(self) -> str:
        verb = {"SUCCESS": "succeeded", "FAILURE": "failed"}.get(self.outcome, "ended")
        text = f"Steps {self.first}-{self.last}: {self.closed_by} {verb} after {self.events} events"
        if self.failures:
            text += "; failed: " + ", ".join(f"{node} x{n}" for node, n in
                                             sorted(self.failures.items()))
        if self.errors:
            codes = ", ".join(f"{c} x{n}" for c, n in sorted(self.errors.items()))
            text += f" (errors: {codes})"
        return text + "."


@dataclass
class Digest:
    """Everything older than the kept summaries, as bounded counts."""

    first: int | None = None
    last: int = 0
    segments: Counter = field(default_factory=Counter)  # (closed_by, outcome) -> count
    errors: Counter = field(default_factory=Counter)

    def absorb(self, s: Segment) -> None:
        self.first = s.first if self.first is None else self.first
        self.last = s.last
        self.segments[(s.closed_by, s.outcome)] += 1
        self.errors.update(s.errors)

    def render(self) -> str:
        if self.first is None:
            return ""
        parts = [f"{node} {'succeeded' if outcome == 'SUCCESS' else 'failed'} x{n}"
                 for (node, outcome), n in sorted(self.segments.items())]
        text = f"Steps {self.first}-{self.last} (summarised): " + "; ".join(parts)
        if self.errors:
            text += ". Errors: " + ", ".join(f"{c} x{n}" for c, n in sorted(self.errors.items()))
        return text + "."


class CompressedLog:
    """The compressed short-term context (see the module docstring)."""

    def __init__(self, keep: int = 6):
        self.keep = keep
        self.digest = Digest()
        self.summaries: list[Segment] = []
        self.open: list[Event] = []

    def add(self, event: Event) -> None:
        self.open.append(event)
        if event.boundary:
            self.fold()

    def fold(self) -> None:
        """Close the open segment into a summary; push the oldest summary into the digest."""
        if not self.open:
            return
        last = self.open[-1]
        self.summaries.append(Segment(
            first=self.open[0].step, last=last.step, closed_by=last.node, outcome=last.outcome,
            events=len(self.open),
            failures=Counter(e.node for e in self.open if e.outcome == "FAILURE"),
            errors=Counter(e.error for e in self.open if e.error)))
        self.open = []
        while len(self.summaries) > self.keep:
            self.digest.absorb(self.summaries.pop(0))

    def render(self) -> str:
        lines = [self.digest.render(), *(s.render() for s in self.summaries),
                 *(e.render() for e in self.open)]
        return "\n".join(line for line in lines if line)


def compress(events: list[Event], keep: int = 6) -> CompressedLog:
    """A `CompressedLog` fed with `events` in order."""
    memory = CompressedLog(keep)
    for event in events:
        memory.add(event)
    return memory
