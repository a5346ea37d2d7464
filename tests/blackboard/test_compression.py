"""Event-boundary compression: segments fold at boundaries, old summaries fold into a bounded
digest, so the rendered context stops growing while the raw log grows linearly."""

from __future__ import annotations

from tether.blackboard.compression import CompressedLog, compress
from tether.blackboard.events import Event, render_events


def episode(n: int) -> list[Event]:
    """`n` events: cycles of approach, grasp (failing every third time) and a closing sub-task."""
    out = []
    for i in range(n):
        phase = i % 4
        if phase == 3:
            out.append(Event(i, "pick and place", "sequence", outcome="SUCCESS", boundary=True))
        elif phase == 1 and i % 12 == 1:
            out.append(Event(i, "grasp", "check", outcome="FAILURE", error="EMPTY_GRASP"))
        else:
            out.append(Event(i, "approach", "move_to", "bowl+[0, 0, 0.1]", feedback="0.4 cm"))
    return out


def test_a_boundary_folds_the_open_segment_into_one_summary():
    log = CompressedLog(keep=6)
    for e in episode(4):
        log.add(e)
    assert log.open == [] and len(log.summaries) == 1
    s = log.summaries[0]
    assert (s.first, s.last, s.closed_by, s.events) == (0, 3, "pick and place", 4)
    assert log.render() == ("Steps 0-3: pick and place succeeded after 4 events; failed: grasp x1 "
                            "(errors: EMPTY_GRASP x1).")


def test_events_after_the_last_boundary_stay_verbatim():
    log = compress(episode(6))
    assert log.render().splitlines()[-2:] == [e.render() for e in episode(6)[4:]]


def test_older_summaries_fold_into_a_digest_of_counts():
    log = compress(episode(400), keep=3)
    assert len(log.summaries) == 3
    assert log.digest.segments[("pick and place", "SUCCESS")] == 97
    assert log.render().startswith("Steps 0-387 (summarised): pick and place succeeded x97. "
                                   "Errors: EMPTY_GRASP x33.")


def test_compressed_context_stays_flat_while_raw_grows_linearly():
    sizes = {n: (len(render_events(episode(n))), len(compress(episode(n)).render()))
             for n in (100, 1000)}
    assert sizes[1000][0] > 9 * sizes[100][0]
    assert sizes[1000][1] < 1.2 * sizes[100][1]
