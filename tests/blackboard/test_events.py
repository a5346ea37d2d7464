"""The short-term event log renders "At step k, ..." lines and lives on the episode blackboard."""

from __future__ import annotations

from tether.blackboard.episode import new_episode
from tether.blackboard.events import Event, event_log, render_events


def test_events_render_as_at_step_lines():
    ok = Event(step=12, node="approach bowl", action="move_to", args="bowl+[0, 0, 0.1]",
               outcome="SUCCESS", feedback="0.4 cm to go")
    bad = Event(step=55, node="descend", action="move_to", outcome="FAILURE", error="STUCK",
                feedback="no progress for 40 steps")
    note = Event(step=60, node="remember", action="note", args="trying the side", outcome="NOTE")
    assert render_events([ok, bad, note]).splitlines() == [
        "At step 12, approach bowl (move_to bowl+[0, 0, 0.1]) succeeded: 0.4 cm to go.",
        "At step 55, descend (move_to) failed with STUCK: no progress for 40 steps.",
        "At step 60, note: trying the side.",
    ]


def test_each_episode_starts_with_an_empty_event_log():
    new_episode(task="t", instruction="i", params={}, entities=[])
    event_log().append(Event(step=0, node="n", action="wait"))
    new_episode(task="t", instruction="i", params={}, entities=[])
    assert event_log() == []
