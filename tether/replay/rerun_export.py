"""A run's trace as a rerun recording (`.rrd`), opened with `rerun run.rrd`.

Two timelines, `tick` (sequence) and `sim` (simulated time), and these entities:

- `camera/<name>`: the trace's JPEG frames, not re-encoded (`EncodedImage`);
- `robot/eef`: the end effector's pose in the world (`Transform3D`, `Points3D`), and
  `robot/eef/{x,y,z}`, `robot/gripper` (width, m) as plots (`Scalars`);
- `command/action` (the tick's 7-D command, `Scalars`) and `command/by` (its leaf, `TextLog`);
- `vla/<leaf>`: each chunk a `vla` leaf received, one row per action (`Tensor`);
- `tree/root`, `tree/nodes/<id>`: statuses as scalars (SUCCESS 1, RUNNING 0.5, INVALID 0,
  FAILURE -1) and, per node, as text with its name and feedback (`TextLog`);
- `blackboard/<key>`: every write (its JSON value) and deletion (`TextLog`);
- `events`: every event, failures, errors and preemptions at level ERROR (`TextLog`);
- `run`: the header, the node list and the result (static `TextDocument`).

The wall-clock `log_time` timeline is off: the timelines are the run's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import rerun as rr

from tether.replay.timeline import (
    ERROR_KINDS,
    STATUS_LEVEL,
    WARN_KINDS,
    Timeline,
    event_text,
)

AXES = ("x", "y", "z")


def _level(kind: str) -> str:
    return rr.TextLogLevel.ERROR if kind in ERROR_KINDS else \
        rr.TextLogLevel.WARN if kind in WARN_KINDS else rr.TextLogLevel.INFO


def _entity(key: str) -> str:
    """A blackboard key as an entity path below `blackboard/`."""
    parts = key.strip("/").split("/")
    return "blackboard/" + "/".join(rr.escape_entity_path_part(p) for p in parts)


def write_rerun(timeline: Timeline, output: Path, recording_id: str) -> None:
    """Write `timeline` as a rerun recording to `output`."""
    rec = rr.RecordingStream("tether", recording_id=recording_id)
    rec.set_log_time_enabled(False)
    rec.set_log_tick_enabled(False)
    rec.save(output)
    rec.log("run", rr.TextDocument(_summary(timeline), media_type=rr.MediaType.MARKDOWN),
            static=True)
    rec.log("tree/root", rr.SeriesLines(names="root"), static=True)
    rec.log("command/action", rr.SeriesLines(names=[f"a{i}" for i in range(7)]), static=True)
    for tick in timeline.ticks:
        rec.set_time("tick", sequence=tick.t)
        rec.set_time("sim", duration=tick.sim)
        for camera, path in tick.frames.items():
            rec.log(f"camera/{camera}", rr.EncodedImage(path=path, media_type="image/jpeg"))
        if tick.eef is not None:
            pos, quat = tick.eef[:3], tick.eef[3:]
            rec.log("robot/eef", rr.Transform3D(translation=pos, quaternion=rr.Quaternion(
                xyzw=quat)), rr.Points3D([[0.0, 0.0, 0.0]]))  # a dot at the frame's origin
            for axis, value in zip(AXES, pos, strict=True):
                rec.log(f"robot/eef/{axis}", rr.Scalars(value))
        if tick.grip is not None:
            rec.log("robot/gripper", rr.Scalars(tick.grip))
        if tick.command is not None:
            rec.log("command/action", rr.Scalars(tick.command["a"]))
            rec.log("command/by", rr.TextLog(tick.command["by"]))
        rec.log("tree/root", rr.Scalars(STATUS_LEVEL[tick.root]))
        for change in tick.changes:
            path = f"tree/nodes/{change.node}"
            rec.log(path, rr.Scalars(STATUS_LEVEL[change.status]))
            rec.log(path, rr.TextLog(f"{change.status} {change.name}"
                                     + (f": {change.feedback}" if change.feedback else ""),
                                     level=_level(change.status.lower())))
        for key, value in tick.written.items():
            rec.log(_entity(key), rr.TextLog(json.dumps(value, ensure_ascii=False)))
        for key in tick.deleted:
            rec.log(_entity(key), rr.TextLog("(deleted)"))
        for event in tick.events:
            rec.log("events", rr.TextLog(event_text(event, timeline.nodes),
                                         level=_level(event["kind"])))
            if event["kind"] == "vla_chunk" and event.get("actions"):
                rec.log(f"vla/{rr.escape_entity_path_part(str(event['node']))}",
                        rr.Tensor(np.asarray(event["actions"], dtype=np.float64),
                                  dim_names=["step", "action"]))
    rec.flush()
    rec.disconnect()


def _summary(timeline: Timeline) -> str:
    header = {k: v for k, v in timeline.header.items() if k != "k"}
    lines = ["# tether run", "", "```json", json.dumps(header, indent=1), "```", "", "## nodes", ""]
    lines += [f"- {i} `{n['type']}` {n['name']}" for i, n in sorted(timeline.nodes.items())]
    if timeline.end is not None:
        lines += ["", "## end", "", "```json", json.dumps(timeline.end), "```"]
    return "\n".join(lines)
