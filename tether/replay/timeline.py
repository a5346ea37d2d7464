"""A trace as one timeline of ticks, the shape every export to another viewer reads.

`read_timeline(run_dir)` replays a trace's records (`tether.replay.trace`) into a `Timeline`: the
header, the nodes by id, and one `Tick` per tick with its time (tick number, robot steps,
simulated seconds), the root's status, the end effector's pose and the gripper's width, the
command, the node status changes (with the node's name), the blackboard keys written and deleted,
the events (a `vla_chunk` event carries its chunk's actions) and the camera frames as files.
The exports (`tether.replay.rerun_export`, `tether.replay.mcap_export`) walk it in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.replay.trace import read_trace, trace_path

STATUS_LEVEL = {"SUCCESS": 1.0, "RUNNING": 0.5, "INVALID": 0.0, "FAILURE": -1.0}  # as a scalar
ERROR_KINDS = ("error", "failure", "preempted")  # events shown as errors
WARN_KINDS = ("retry", "recovery", "frames_off")


@dataclass(frozen=True)
class Change:
    """A node whose status or feedback changed in a tick."""

    node: int
    name: str
    status: str
    feedback: str


@dataclass
class Tick:
    """One tick of the trace (see docs/trace.md for the fields it comes from)."""

    t: int
    step: int
    sim: float
    root: str
    eef: list[float] | None = None  # x, y, z, qx, qy, qz, qw (world)
    grip: float | None = None  # gripper width (m)
    command: dict[str, Any] | None = None  # {"by": leaf, "a": 7-D action}
    changes: list[Change] = field(default_factory=list)
    written: dict[str, Any] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    frames: dict[str, Path] = field(default_factory=dict)  # camera -> file


@dataclass
class Timeline:
    header: dict[str, Any]
    nodes: dict[int, dict[str, Any]]
    ticks: list[Tick]
    end: dict[str, Any] | None


def read_timeline(run_dir: Path | str) -> Timeline:
    """The trace of a run directory as a `Timeline`; a `TetherError` when it has no tree."""
    records = read_trace(run_dir)
    base = trace_path(run_dir).parent
    header = next((r for r in records if r["k"] == "header"), {})
    tree = next((r for r in records if r["k"] == "tree"), None)
    if tree is None:
        raise TetherError(f"{trace_path(run_dir)}: no tree record; not a tether trace")
    nodes = {n["id"]: n for n in tree["nodes"]}
    ticks = []
    for r in records:
        if r["k"] != "tick":
            continue
        ticks.append(Tick(
            t=r["t"], step=r["step"], sim=r["sim"], root=r["root"], eef=r.get("eef"),
            grip=r.get("grip"), command=r.get("cmd"),
            changes=[Change(int(i), nodes[int(i)]["name"], status, feedback)
                     for i, (status, feedback) in r.get("changes", {}).items()],
            written=r.get("bb", {}), deleted=r.get("bb_del", []), events=r.get("events", []),
            frames={cam: base / name for cam, name in r.get("frames", {}).items()}))
    end = next((r for r in records if r["k"] == "end"), None)
    return Timeline(header, nodes, ticks, end)


def event_text(event: dict[str, Any], nodes: dict[int, dict[str, Any]]) -> str:
    """One line for an event: its kind, the node's name, and its other fields."""
    node = event.get("node")
    name = nodes[node]["name"] if isinstance(node, int) and node in nodes else node
    rest = ", ".join(f"{k}={v}" for k, v in event.items()
                     if k not in ("kind", "node", "actions"))
    return f"{event['kind']} {name}" + (f": {rest}" if rest else "")
