"""The `tether` command: the app, its verb groups, and the one error boundary.

Each verb's code is in the module named for its group:

    tether run                                    tether/cli/run.py
    tether check / render                         tether/cli/trees.py
    tether view / export                          tether/cli/replay.py
    tether scenes list|show / tasks / doctor      tether/cli/scenes.py
    tether memory list|search|show|...            tether/cli/memory.py
    tether plan / do                              tether/cli/planning.py
    tether collect / merge-demos / train / serve-policy  tether/cli/policy.py
    tether collect-perception / train-perception  tether/cli/perception.py
    tether bench / bench compare                  tether/cli/bench.py

Options several verbs share, the consoles and `--with` parsing are in tether/cli/options.py;
where library log records go (`-v`/`-q`) in tether/cli/logs.py.

Exit codes: 0 success, 1 the task failed (run, do) or a tree has errors (check), 2 a user error
(any `TetherError`, printed as one `error: ...` line, never a traceback), 130 interrupted.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated, Any

import typer
from rich.text import Text
from typer.core import TyperGroup

from tether.cli import bench, memory, perception, planning, policy, replay, run, scenes, trees
from tether.cli.logs import configure_logging
from tether.cli.options import err, out
from tether.errors import TetherError


class TetherGroup(TyperGroup):
    """The app's command group and the one error boundary of every verb under it: a
    `TetherError` becomes one `error: <message>` line on stderr and exit code 2, Ctrl-C (a
    `KeyboardInterrupt`) one `interrupted` line and exit code 130. Being the group's `invoke`,
    it holds for `main()` and for `CliRunner().invoke(app, ...)` alike."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TetherError as exc:
            err.print(Text.assemble(("error:", "bold red"), " ", str(exc)))
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130) from None


app = typer.Typer(
    name="tether", cls=TetherGroup, no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]},
    help="A reactive behaviour-tree executive for robot manipulation: YAML task trees compiled "
         "to py_trees and ticked against LIBERO scenes.",
)
for group in (run, trees, replay, scenes, memory, planning, policy, perception, bench):
    group.register(app)


def _print_version(value: bool) -> None:
    if value:
        from tether import __version__

        out.print(f"tether {__version__}")
        raise typer.Exit(0)


@app.callback()
def tether(
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print tether's version and exit.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Log debug detail too (stderr).")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Log only warnings and errors (stderr).")] = False,
) -> None:
    """Options before the verb apply to every verb."""
    if verbose and quiet:
        raise TetherError("-v/--verbose and -q/--quiet exclude each other; give one")
    configure_logging(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)


def main() -> None:
    """The `tether` console script."""
    if sys.platform == "linux":  # headless by default: MuJoCo renders camera frames through EGL
        os.environ.setdefault("MUJOCO_GL", "egl")
    app()
