"""The trace writer: a thread that draws, encodes and writes a trace's frames and records in order.

The recorder builds each tick's record on the tick thread and hands it over with the camera
frames it names, as captures (`tether.scenes.cameras`: a MuJoCo scene's capture is its visual
scene, read from the sim at that tick; drawing it is the cost). The writer thread draws each
frame with its own GL context, without multisampling (half the cost of a LIBERO frame on a CPU;
edges are jagged) and with light textures (`Cameras(light=True)`: its context is made in half
the time), encodes it as JPEG, writes it, and only then appends the record
that names it, so a trace never names a frame that is not on disk: killed at any moment, the
run leaves whole lines naming whole frames (docs/trace.md). A record without frames while
nothing waits for the writer is written at once on the tick thread: handing it over would cost
the tick a thread switch for a line of JSON. The hand-over is bounded: at most
`QUEUE` records and `IN_FLIGHT` captures wait (a MuJoCo capture of a LIBERO scene holds
~0.3 MB); beyond that the tick thread waits for the writer.

When frames cannot be drawn (no GL context: no display and no EGL), the writer stops drawing,
drops the frames from that record and every later one, and says why in `frames_off`; the
recorder then stops capturing and reports it in the trace. Any other failure (a full disk) stops
the writer, and the next `write` raises it on the tick thread. `close` writes what is queued,
stops the thread and closes the file; the recorder calls it when the episode finishes or aborts.

    writer = TraceWriter(run_dir, quality=80)
    writer.reserve()                                   # a place for one capture
    writer.write({"k": "tick", "t": 1, "frames": {"agentview": "frames/t000001-agentview.jpg"}},
                 {"frames/t000001-agentview.jpg": robot.capture("agentview", (128, 128), True)})
    writer.close()
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.replay.trace import TRACE_NAME, TraceFile
from tether.scenes.cameras import Cameras, Capture

QUEUE = 256  # records waiting to be written
IN_FLIGHT = 32  # captures waiting to be drawn (sixteen ticks of two cameras)


class TraceWriter:
    """Writes `trace.jsonl` and its frames in `run_dir` on a thread (see the module docstring)."""

    def __init__(self, run_dir: Path, *, quality: int):
        self.run_dir, self.quality = run_dir, quality
        self.file = TraceFile(run_dir / TRACE_NAME)
        self.queue: queue.Queue[tuple[dict[str, Any], dict[str, Capture]] | None] = \
            queue.Queue(QUEUE)
        self.places = threading.Semaphore(IN_FLIGHT)
        self.lock = threading.Lock()  # guards `pending` and direct writes to the file
        self.pending = 0  # records handed to the thread and not yet written
        self.frames_off: str | None = None  # why frames stopped
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self.thread.start()

    def reserve(self) -> None:
        """Wait for a place for one more capture (given back once it is drawn)."""
        self.places.acquire()

    def cancel(self) -> None:
        """Give back a place reserved for a capture that was not taken."""
        self.places.release()

    def write(self, record: dict[str, Any], frames: dict[str, Capture] | None = None) -> None:
        """Queue `record` after the `frames` it names (path relative to the run directory ->
        capture, each in a reserved place); raises what stopped the writer."""
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        with self.lock:
            if not frames and not self.pending:  # nothing to keep it in order behind
                self.file.write(record)
                return
            self.pending += 1
        self.queue.put((record, frames or {}))

    def close(self) -> None:
        """Write everything queued, stop the thread and close the trace file."""
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        self.file.close()

    def _run(self) -> None:
        cameras = Cameras(light=True)  # this thread's GL contexts
        failed = False
        try:
            while (item := self.queue.get()) is not None:
                record, frames = item
                try:
                    if not failed:
                        self._save(record, frames, cameras)
                except BaseException as exc:  # reported on the tick thread by the next write
                    self.error, failed = exc, True
                finally:
                    for _ in frames:
                        self.places.release()
                    with self.lock:
                        self.pending -= 1
        finally:
            cameras.close()

    def _save(self, record: dict[str, Any], frames: dict[str, Capture], cameras: Cameras) -> None:
        from PIL import Image

        for path, capture in frames.items():
            if self.frames_off is not None:
                break
            try:
                image = capture.draw(cameras)
            except TetherError as exc:  # no frames is better than no run
                self.frames_off = str(exc)
                break
            Image.fromarray(image).save(self.run_dir / path, quality=self.quality)
        if self.frames_off is not None:
            record.pop("frames", None)
        self.file.write(record)
