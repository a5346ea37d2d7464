"""The run's tick log: one JSON line per tick, appended and flushed as the run goes.

Each line holds the tick index, the robot step and sim time, the root status, the running leaf,
who commanded and what, and the status and feedback of every node visited. Because each line is
flushed when written, a run that is killed is readable up to its last tick.
"""

from __future__ import annotations

import json
from pathlib import Path

from scenes.robot import Robot
from trees.episode import Tick


class TickLog:
    """Append one JSON line per tick to `path`."""

    def __init__(self, path: Path, robot: Robot):
        self.robot = robot
        self.file = path.open("a", encoding="utf-8")

    def __call__(self, tick: Tick) -> None:
        record = {
            "tick": tick.index,
            "step": self.robot.steps,
            "sim_time": round(self.robot.sim_time, 4),
            "root": tick.root.value,
            "tip": tick.tip,
            "commander": tick.commander,
            "action": None if tick.action is None else [round(float(a), 4) for a in tick.action],
            "visited": [[n.name, n.status.value, n.feedback_message] for n in tick.visited],
        }
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()
