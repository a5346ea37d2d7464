"""`tether view` and `tether export`: a run directory replayed in the browser (`tether.replay`).

    tether view RUN_DIR [--port N] [--host H] [--live]   serve the replay (Ctrl-C stops it)
    tether export RUN_DIR -o run.html                    the replay as one self-contained file
    tether export RUN_DIR -o run.rrd|run.mcap [--format rerun|mcap]   for rerun or Foxglove
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.cli.options import err, out

RunDir = Annotated[Path, typer.Argument(help="A run directory (runs/<stamp>-...).")]


def view(
    run_dir: RunDir,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; anything but 127.0.0.1 lets other "
                                           "machines read the run.")] = "127.0.0.1",
    live: Annotated[bool, typer.Option(help="Follow a run in progress.")] = False,
) -> None:
    """Replay a run in the browser: the tree coloured by status, timeline, blackboard, frames."""
    from tether.replay.viewer.server import LOOPBACK, server

    srv = server(run_dir, host=host, port=port, live=live)
    if host != LOOPBACK:
        err.print(f"[yellow]warning:[/] serving on {host}: anyone who can reach it can read this "
                  "run", markup=True)
    out.print(f"tether view: http://{host}:{port}/  (Ctrl-C to stop)")
    srv.run()


def export(
    run_dir: RunDir,
    output: Annotated[Path, typer.Option("--output", "-o", help="The file to write.")],
    fmt: Annotated[str | None, typer.Option(
        "--format", "-f", help="html (one self-contained replay page), rerun (.rrd) or mcap "
                               "(Foxglove); default: from the output's suffix")] = None,
) -> None:
    """Write the run as one file: a self-contained HTML replay, a rerun recording or an MCAP
    file, with frames, robot pose, commands, statuses, blackboard and events on one timeline."""
    from tether.replay.export import export_run

    chosen = export_run(run_dir, output, fmt)
    size = output.stat().st_size
    out.print(f"wrote {output} ({size / 1e6:.1f} MB, {chosen.name}); open it with "
              f"{chosen.open_with}")


def register(app: typer.Typer) -> None:
    """Add `view` and `export` to the tether app."""
    app.command()(view)
    app.command()(export)
