"""Exports of a run's trace to other viewers, registered by format name.

`export_run(run_dir, output, fmt)` reads the trace as one timeline (`tether.replay.timeline`)
and writes it with the format's writer: `rerun` (a `.rrd` for the rerun viewer,
`tether.replay.rerun_export`) or `mcap` (JSON messages for Foxglove, `tether.replay.mcap_export`).
`html` is the self-contained replay page (`tether.replay.viewer.page`). Each writer's library is
imported only when its format is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tether.errors import TetherError
from tether.registry import Registry
from tether.replay.trace import trace_path


@dataclass(frozen=True)
class ExportFormat:
    name: str
    suffix: str
    write: Callable[[Path, Path], None]  # (run directory, output file)
    open_with: str


def _rerun(run_dir: Path, output: Path) -> None:
    from tether.replay.rerun_export import write_rerun
    from tether.replay.timeline import read_timeline

    write_rerun(read_timeline(run_dir), output, recording_id=trace_path(run_dir).parent.name)


def _mcap(run_dir: Path, output: Path) -> None:
    from tether.replay.mcap_export import write_mcap
    from tether.replay.timeline import read_timeline

    write_mcap(read_timeline(run_dir), output)


def _html(run_dir: Path, output: Path) -> None:
    from tether.replay.viewer.page import export_html

    export_html(run_dir, output)


FORMATS: Registry[ExportFormat] = Registry("export format")
for _fmt in (ExportFormat("html", ".html", _html, "a browser"),
             ExportFormat("rerun", ".rrd", _rerun, "the rerun viewer: rerun FILE"),
             ExportFormat("mcap", ".mcap", _mcap, "Foxglove")):
    FORMATS.register(_fmt.name, _fmt)


def export_run(run_dir: Path | str, output: Path | str, fmt: str | None = None) -> ExportFormat:
    """Write the run in `run_dir` to `output` in format `fmt` (a name in `FORMATS`; None: the
    one whose suffix `output` has); the format used."""
    output = Path(output)
    if fmt is None:
        by_suffix = {f.suffix: f for f in FORMATS.values()}
        if output.suffix.lower() not in by_suffix:
            raise TetherError(f"{output}: give --format ({', '.join(FORMATS)}) or a file ending "
                              f"in {', '.join(by_suffix)}")
        chosen = by_suffix[output.suffix.lower()]
    else:
        chosen = FORMATS.get(fmt, where="--format: ")
    if not trace_path(run_dir).is_file():
        raise TetherError(f"no trace at {trace_path(run_dir)} (was the run made with "
                          "--no-record?)")
    chosen.write(Path(run_dir), output)
    return chosen
