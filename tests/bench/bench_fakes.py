"""Stand-ins for `tether.bench.runner.run_episode` that need no simulator (bench tests).

`fake_episode` decides by arm name: `raises` raises, `hangs` sleeps past any timeout, `crashes`
kills its worker process; any other arm succeeds on even seeds and, like a real episode, leaves
a run directory with its final tree in `tree.txt`. Every call appends the episode's key to
`calls.txt` in the run directory, so tests can count what ran. `threads_episode` is
`fake_episode` with the worker's OMP_NUM_THREADS in its row.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tether.bench.runner import base_row
from tether.bench.suite import Episode


def fake_episode(ep: Episode, out: str) -> dict[str, Any]:
    with (Path(out) / "calls.txt").open("a", encoding="utf-8") as f:
        f.write(ep.key + "\n")
    if ep.arm.name == "raises":
        raise RuntimeError("the arm broke")
    if ep.arm.name == "hangs":
        time.sleep(600)
    if ep.arm.name == "crashes":
        os._exit(3)
    ok = ep.seed % 2 == 0
    trace = Path("episodes") / ep.slug
    (Path(out) / trace).mkdir(parents=True, exist_ok=True)
    (Path(out) / trace / "tree.txt").write_text(f"{{-}} fake tree [{'✓' if ok else '✕'}]\n")
    return {**base_row(ep), "status": "passed" if ok else "failed", "success": ok,
            "steps": 10 + ep.seed, "tree_status": "SUCCESS" if ok else "FAILURE",
            "ended_by": "tree", "error_codes": [] if ok else ["EMPTY_GRASP"], "error": None,
            "trace": str(trace), "wall_seconds": 0.01}


def threads_episode(ep: Episode, out: str) -> dict[str, Any]:
    return {**fake_episode(ep, out), "threads": os.environ.get("OMP_NUM_THREADS")}
