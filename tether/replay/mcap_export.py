"""A run's trace as an MCAP file of JSON messages, opened with Foxglove (or `mcap cat`).

Each message's log time is the tick's simulated time (ns); each carries its tick `t`. Topics
(schemas in JSON Schema; Foxglove's own where one fits, so its panels show them directly):

| topic | schema | what |
| --- | --- | --- |
| `/camera/<name>` | `foxglove.CompressedImage` | the trace's JPEG frames, not re-encoded |
| `/robot/eef` | `foxglove.PoseInFrame` | the end effector's pose in `world` |
| `/robot/gripper` | `tether.Gripper` | the gripper's width (m) |
| `/command` | `tether.Command` | the tick's 7-D command and the leaf that put it |
| `/vla/chunk` | `tether.VlaChunk` | each chunk a `vla` leaf received, with its actions |
| `/tree/tick` | `tether.Tick` | tick, robot steps, simulated time, the root's status |
| `/tree/status` | `tether.NodeStatus` | each node status change (status as text and as a level) |
| `/blackboard` | `tether.BlackboardWrite` | each key written (JSON value) or deleted |
| `/events` | `foxglove.Log` | every event; failures, errors and preemptions at level ERROR |
| `/run` | `tether.Run` | header, nodes and result, once at time 0 |
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from mcap.writer import Writer

from tether.replay.timeline import (
    ERROR_KINDS,
    STATUS_LEVEL,
    WARN_KINDS,
    Timeline,
    event_text,
)

NUMBER, TEXT, INT = {"type": "number"}, {"type": "string"}, {"type": "integer"}
TIME = {"type": "object", "properties": {"sec": INT, "nsec": INT}}
XYZ = {"type": "object", "properties": {"x": NUMBER, "y": NUMBER, "z": NUMBER}}
NUMBERS = {"type": "array", "items": NUMBER}
SCHEMAS: dict[str, dict[str, Any]] = {
    "foxglove.CompressedImage": {"timestamp": TIME, "frame_id": TEXT, "format": TEXT,
                                 "data": {"type": "string", "contentEncoding": "base64"}},
    "foxglove.PoseInFrame": {"timestamp": TIME, "frame_id": TEXT, "pose": {
        "type": "object", "properties": {"position": XYZ, "orientation": {
            "type": "object", "properties": {k: NUMBER for k in "xyzw"}}}}},
    "foxglove.Log": {"timestamp": TIME, "level": INT, "message": TEXT, "name": TEXT,
                     "file": TEXT, "line": INT},
    "tether.Gripper": {"t": INT, "width": NUMBER},
    "tether.Command": {"t": INT, "by": TEXT, "action": NUMBERS},
    "tether.VlaChunk": {"t": INT, "node": TEXT, "chunk": INT, "size": INT, "instruction": TEXT,
                        "actions": {"type": "array", "items": NUMBERS}},
    "tether.Tick": {"t": INT, "step": INT, "sim": NUMBER, "root": TEXT, "level": NUMBER},
    "tether.NodeStatus": {"t": INT, "node": INT, "name": TEXT, "status": TEXT, "level": NUMBER,
                          "feedback": TEXT},
    "tether.BlackboardWrite": {"t": INT, "key": TEXT, "value": {}, "deleted": {"type": "boolean"}},
    "tether.Run": {"header": {"type": "object"}, "nodes": {"type": "array"},
                   "end": {"type": ["object", "null"]}},
}
LOG_LEVEL = {"info": 2, "warn": 3, "error": 4}


def _level(kind: str) -> int:
    return LOG_LEVEL["error" if kind in ERROR_KINDS else "warn" if kind in WARN_KINDS else "info"]


class _Topics:
    """Channels registered on first use, one schema each."""

    def __init__(self, writer: Writer):
        self.writer = writer
        self.schemas: dict[str, int] = {}
        self.channels: dict[str, int] = {}
        self.count = 0

    def write(self, topic: str, schema: str, ns: int, message: dict[str, Any]) -> None:
        if topic not in self.channels:
            if schema not in self.schemas:
                body = {"title": schema, "type": "object", "properties": SCHEMAS[schema]}
                self.schemas[schema] = self.writer.register_schema(
                    schema, "jsonschema", json.dumps(body).encode())
            self.channels[topic] = self.writer.register_channel(
                topic, "json", self.schemas[schema])
        self.writer.add_message(self.channels[topic], ns, json.dumps(
            message, ensure_ascii=False, separators=(",", ":")).encode(), ns, self.count)
        self.count += 1


def write_mcap(timeline: Timeline, output: Path) -> None:
    """Write `timeline` as an MCAP file to `output`."""
    with output.open("wb") as stream:
        writer = Writer(stream)
        writer.start(profile="", library="tether")
        topics = _Topics(writer)
        topics.write("/run", "tether.Run", 0, {
            "header": timeline.header, "nodes": [timeline.nodes[i] for i in sorted(timeline.nodes)],
            "end": timeline.end})
        for tick in timeline.ticks:
            ns = round(tick.sim * 1e9)
            stamp = {"sec": ns // 1_000_000_000, "nsec": ns % 1_000_000_000}
            topics.write("/tree/tick", "tether.Tick", ns, {
                "t": tick.t, "step": tick.step, "sim": tick.sim, "root": tick.root,
                "level": STATUS_LEVEL[tick.root]})
            for camera, path in tick.frames.items():
                topics.write(f"/camera/{camera}", "foxglove.CompressedImage", ns, {
                    "timestamp": stamp, "frame_id": camera, "format": "jpeg",
                    "data": base64.b64encode(path.read_bytes()).decode()})
            if tick.eef is not None:
                pos, quat = tick.eef[:3], tick.eef[3:]
                topics.write("/robot/eef", "foxglove.PoseInFrame", ns, {
                    "timestamp": stamp, "frame_id": "world", "pose": {
                        "position": dict(zip("xyz", pos, strict=True)),
                        "orientation": dict(zip("xyzw", quat, strict=True))}})
            if tick.grip is not None:
                topics.write("/robot/gripper", "tether.Gripper", ns,
                             {"t": tick.t, "width": tick.grip})
            if tick.command is not None:
                topics.write("/command", "tether.Command", ns, {
                    "t": tick.t, "by": tick.command["by"], "action": tick.command["a"]})
            for change in tick.changes:
                topics.write("/tree/status", "tether.NodeStatus", ns, {
                    "t": tick.t, "node": change.node, "name": change.name,
                    "status": change.status, "level": STATUS_LEVEL[change.status],
                    "feedback": change.feedback})
            for key, value in tick.written.items():
                topics.write("/blackboard", "tether.BlackboardWrite", ns,
                             {"t": tick.t, "key": key, "value": value, "deleted": False})
            for key in tick.deleted:
                topics.write("/blackboard", "tether.BlackboardWrite", ns,
                             {"t": tick.t, "key": key, "value": None, "deleted": True})
            for event in tick.events:
                topics.write("/events", "foxglove.Log", ns, {
                    "timestamp": stamp, "level": _level(event["kind"]), "name": event["kind"],
                    "message": event_text(event, timeline.nodes), "file": "", "line": tick.t})
                if event["kind"] == "vla_chunk":
                    topics.write("/vla/chunk", "tether.VlaChunk", ns, {
                        "t": tick.t, "node": str(event["node"]), "chunk": event.get("chunk", 0),
                        "size": event.get("size", 0), "instruction": event.get("instruction", ""),
                        "actions": event.get("actions", [])})
        writer.finish()
