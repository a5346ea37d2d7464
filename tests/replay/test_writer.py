"""`tether.replay.writer.TraceWriter`: records stay in order whether written at once on the tick
thread (no frames, nothing pending) or behind frames the writer thread is still drawing."""

from __future__ import annotations

import threading

import numpy as np

from tether.replay.trace import read_trace
from tether.replay.writer import TraceWriter


class SlowCapture:
    """A capture whose drawing waits until the test lets it go."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def draw(self, cameras) -> np.ndarray:
        assert self.go.wait(10)
        return np.zeros((8, 8, 3), np.uint8)


def test_a_record_without_frames_waits_behind_one_whose_frame_is_being_drawn(tmp_path):
    (tmp_path / "frames").mkdir()
    writer = TraceWriter(tmp_path, quality=80)
    writer.write({"k": "tick", "t": 1})  # nothing pending: written on this thread
    assert [r["t"] for r in read_trace(tmp_path)] == [1]
    slow = SlowCapture()
    writer.reserve()
    writer.write({"k": "tick", "t": 2, "frames": {"a": "frames/2.jpg"}}, {"frames/2.jpg": slow})
    writer.write({"k": "tick", "t": 3})  # must not overtake tick 2
    assert [r["t"] for r in read_trace(tmp_path)] == [1]
    slow.go.set()
    writer.close()
    assert [r["t"] for r in read_trace(tmp_path)] == [1, 2, 3]
    assert (tmp_path / "frames" / "2.jpg").is_file() and writer.pending == 0
