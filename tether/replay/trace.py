"""The trace file: a run written down tick by tick, readable while it grows and after a crash.

A trace is `trace.jsonl` in a run directory, one JSON record per line, each with its kind in
`"k"`: a `header` (what ran), the `tree` (every node once: id, parent, name, type, parameters,
file:line), then one `tick` record per tick (what changed), and an `end` record when the episode
finished. Camera frames are image files under `frames/`, named from the tick records. The full
format is in docs/trace.md.

`TraceFile` appends a record as one line and flushes it, so a run killed by SIGKILL is readable up
to its last whole tick; `read_trace` parses a trace and ignores a torn last line. `jsonable` turns
any blackboard value into JSON (numbers rounded, large arrays and lists summarised).

    with TraceFile(run_dir / TRACE_NAME) as trace:
        trace.write({"k": "header", ...})
    records = read_trace(run_dir)
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from pathlib import Path
from typing import IO, Any, Self

import numpy as np

from tether.errors import TetherError

FORMAT = "tether-trace/1"
TRACE_NAME = "trace.jsonl"
FRAMES_DIR = "frames"
MAX_ITEMS = 32  # lists, dicts and arrays longer than this are summarised
MAX_TEXT = 2000  # characters of a string (or of a repr) kept
DIGITS = 5  # significant digits kept of a float
DECIMALS = 5  # decimals kept of the floats in a small array (actions, poses)


def _round(x: float) -> float | str:
    if not math.isfinite(x):
        return str(x)
    return float(f"{x:.{DIGITS}g}")


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe rendering of a blackboard value.

    Numbers keep 5 significant digits (5 decimals in small float arrays, such as actions and
    poses); numpy arrays with more than 32 elements become
    `{"array": shape, "dtype", "min", "max", "mean"}`; longer lists and dicts keep their first 32
    items plus `"…": N more`; dataclasses become dicts; other objects their `str()`.
    """
    if isinstance(value, np.ndarray):  # first: the most common, every tick (pose, action)
        if value.size > MAX_ITEMS:
            finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
            stats = {} if finite.size == 0 or value.dtype.kind not in "biuf" else {
                "min": _round(float(finite.min())), "max": _round(float(finite.max())),
                "mean": _round(float(finite.mean()))}
            return {"array": list(value.shape), "dtype": str(value.dtype), **stats}
        if value.dtype.kind == "f" and np.isfinite(value).all():
            return np.round(value, DECIMALS).tolist()
        return jsonable(value.tolist(), depth)
    if value is None or isinstance(value, bool | str):
        return value if not isinstance(value, str) or len(value) <= MAX_TEXT else \
            value[:MAX_TEXT] + "…"
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return _round(float(value))
    if isinstance(value, enum.Enum):
        return jsonable(value.value, depth)
    if depth > 6:
        return _text(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        out = [jsonable(v, depth + 1) for v in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            out.append({"…": f"{len(items) - MAX_ITEMS} more"})
        return out
    if isinstance(value, dict):
        out = {str(k): jsonable(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
        if len(value) > MAX_ITEMS:
            out["…"] = f"{len(value) - MAX_ITEMS} more"
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value)}
    return _text(value)


def _text(value: Any) -> str:
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(record: dict) -> str:
    """One record as one compact JSON line (no newline)."""
    return _ENCODER.encode(record)


class TraceFile:
    """Append records to a trace file, one line each, each handed to the system as written (in
    one call: a run killed at any moment leaves whole lines)."""

    def __init__(self, path: Path):
        self.path = path
        self.file: IO[bytes] = path.open("ab", buffering=0)

    def write(self, record: dict) -> None:
        line = memoryview((dumps(record) + "\n").encode())
        while line:
            line = line[self.file.write(line):]

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trace_path(run_dir: Path | str) -> Path:
    """The trace file of a run directory (or the file itself when given one)."""
    path = Path(run_dir)
    return path if path.is_file() else path / TRACE_NAME


def parse_lines(text: str) -> list[dict]:
    """Records from trace text; a torn last line (a run killed mid-write) is left out."""
    records = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if any(lines[i + 1:]):
                raise TetherError(f"trace line {i + 1} is not JSON") from None
    return records


def read_trace(run_dir: Path | str) -> list[dict]:
    """Every whole record of a run's trace, in order."""
    path = trace_path(run_dir)
    if not path.is_file():
        raise TetherError(f"no trace at {path} (was the run made with --no-record?)")
    return parse_lines(path.read_text(encoding="utf-8"))
