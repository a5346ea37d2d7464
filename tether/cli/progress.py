"""Progress in the terminal: while an episode runs, and for long jobs.

On a terminal, `LiveTree` redraws the tree with each node's status (py_trees' unicode rendering)
a few times per second, with a status line. Otherwise (CI logs, pipes), `TipLines` prints one
compact line whenever the running leaf changes, so logs stay short and readable. `LazyBar` is
a tqdm bar for long jobs, opened at their first progress report.
"""

from __future__ import annotations

from typing import Self

import py_trees
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from tether.scenes.robot import Robot
from tether.trees.episode import Tick


def status_line(tick: Tick, robot: Robot) -> str:
    return (f"step {robot.steps:4d}  t={robot.sim_time:6.2f}s  {tick.root.value:8s}  "
            f"{tick.tip or '-'}")


class LiveTree:
    """Redraw the whole tree with statuses (rich Live), at most `fps` times per second."""

    def __init__(self, root: py_trees.behaviour.Behaviour, robot: Robot, console: Console,
                 fps: float = 8.0):
        self.root, self.robot = root, robot
        self.live = Live(console=console, refresh_per_second=fps, transient=False)

    def __enter__(self) -> Self:
        self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.live.__exit__(*exc)

    def __call__(self, tick: Tick) -> None:
        tree = py_trees.display.unicode_tree(self.root, show_status=True)
        self.live.update(Group(Text.from_ansi(tree), Text(status_line(tick, self.robot),
                                                          style="bold")))


class TipLines:
    """Print a line each time the running leaf (the tip) or the root status changes."""

    def __init__(self, robot: Robot, console: Console):
        self.robot, self.console, self.last = robot, console, None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __call__(self, tick: Tick) -> None:
        key = (tick.tip, tick.root)
        if key != self.last:
            self.last = key
            self.console.print(status_line(tick, self.robot), highlight=False)


class LazyBar:
    """A tqdm bar opened at the job's first report (`show`), so a job that stops on a user
    error prints nothing before the error; closed on exit."""

    def __init__(self, desc: str, unit: str):
        self.desc, self.unit = desc, unit
        self.bar = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()

    def show(self, done: int, total: int, **postfix: str) -> None:
        from tqdm import tqdm

        if self.bar is None:
            self.bar = tqdm(total=total, initial=done, desc=self.desc, unit=self.unit)
        self.bar.n = done
        if postfix:
            self.bar.set_postfix(postfix)
        self.bar.refresh()
