"""Regression gates and comparisons between bench summaries (`summary.json`).

`gate(current, baseline, tolerance_pp)` lists the cells (arm x perturbation) of the baseline
whose success rate dropped by more than `tolerance_pp` percentage points, or that the current run
lacks; `tether bench SUITE --gate BASELINE.json` exits 1 when the list is not empty.
`compare(a, b)` pairs the cells of two summaries for `tether bench compare A B`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import TetherError


def load_summary(path: Path | str) -> dict[str, Any]:
    """A summary from `summary.json` or from a bench run directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TetherError(f"no bench summary at {path}") from None
    except json.JSONDecodeError as exc:
        raise TetherError(f"{path}: not a bench summary ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), dict):
        raise TetherError(f"{path}: not a bench summary (no 'cells')")
    return data


@dataclass(frozen=True)
class CellDiff:
    cell: str
    a: dict[str, Any] | None
    b: dict[str, Any] | None

    @property
    def delta_pp(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return round(100 * (self.b["rate"] - self.a["rate"]), 1)


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[CellDiff]:
    """Every cell of either summary, in A's order then B's new cells."""
    keys = list(dict.fromkeys([*a["cells"], *b["cells"]]))
    return [CellDiff(k, a["cells"].get(k), b["cells"].get(k)) for k in keys]


def gate(current: dict[str, Any], baseline: dict[str, Any], tolerance_pp: float = 0.0
         ) -> list[str]:
    """The baseline cells that dropped by more than `tolerance_pp` (or are missing)."""
    drops = []
    for d in compare(baseline, current):
        if d.a is None:
            continue
        if d.b is None:
            drops.append(f"{d.cell}: in the baseline but not in this run")
        elif d.delta_pp is not None and d.delta_pp < -tolerance_pp:
            drops.append(f"{d.cell}: {100 * d.a['rate']:.0f}% -> {100 * d.b['rate']:.0f}% "
                         f"({d.delta_pp:+.1f} pp, tolerance {tolerance_pp:g} pp)")
    return drops
