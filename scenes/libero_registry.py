"""LIBERO's benchmark data (its task registry and recorded initial states) read without torch.

`libero.libero.benchmark` imports torch (~2 s of a process's start, a third of a short `tether
run`) to list four suites of names and to read initial states that are plain numpy arrays saved
with `torch.save`. So the registry's listing (`get_benchmark_dict()[suite]()`, task order 0:
names, instructions, files, in LIBERO's order) is kept as JSON beside tether's LIBERO config,
written by the first process that lists a suite and read by the next, under a key made of the
benchmark package's files (their sizes and modification times: another LIBERO lists afresh);
and an initial-states file, a zip archive whose pickle holds no tensors, is unpickled with the
standard library (torch reads it when it holds any). A missing, stale or unreadable listing is
made again.

    listing("libero_goal")[8]  # ("put_the_bowl_on_the_plate", "put the bowl on the plate",
                               #  "libero_goal", "put_the_bowl_on_the_plate.bddl", "...init")
    saved_array(path)          # (50, n) float64
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

from tether.files import write_whole

LISTING = "tasks.json"
Entry = tuple[str, str, str, str, str]  # name, language, problem folder, BDDL file, states file


def listing(suite: str) -> list[Entry]:
    """LIBERO's registry's tasks of `suite` (see the module docstring); `import_libero()` first."""
    path = Path(os.environ["LIBERO_CONFIG_PATH"]) / LISTING
    key = _registry_key()
    suites: dict[str, list[Entry]] = {}
    # none yet, unreadable or malformed: listed again
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
        kept = json.loads(path.read_text())
        if kept["key"] == key:
            suites = {name: [_entry(e) for e in entries]
                      for name, entries in kept["suites"].items()}
    if suite in suites:
        return suites[suite]
    from libero.libero import benchmark

    with contextlib.redirect_stdout(io.StringIO()):  # it prints "[info] using task orders"
        made = benchmark.get_benchmark_dict()[suite]()
    suites[suite] = [(t.name, t.language, t.problem_folder, t.bddl_file, t.init_states_file)
                     for t in (made.get_task(i) for i in range(made.get_num_tasks()))]
    _write(path, json.dumps({"key": key, "suites": suites}))
    return suites[suite]


def _write(path: Path, text: str) -> None:
    """`text` into `path` whole or not at all (another process may read it meanwhile); a
    folder that cannot be written to is left as it is: the listing is made again next time."""
    with contextlib.suppress(OSError):
        write_whole(path, lambda tmp: tmp.write_text(text))


def _entry(entry: list[str]) -> Entry:
    name, language, folder, bddl, states = (str(x) for x in entry)
    return name, language, folder, bddl, states


def _registry_key() -> str:
    import importlib.util

    folder = Path(importlib.util.find_spec("libero.libero").submodule_search_locations[0])
    files = sorted((folder / "benchmark").glob("*.py"))
    return ";".join(f"{f}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)


def saved_array(path: Path) -> np.ndarray:
    """The array `torch.save` wrote to `path` (LIBERO's initial states)."""
    # another format, or tensors inside: torch reads it
    with contextlib.suppress(zipfile.BadZipFile, pickle.UnpicklingError):
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
            if len(pickles) == 1:
                return np.asarray(pickle.loads(archive.read(pickles[0])))
    import torch

    return np.asarray(torch.load(path, weights_only=False))
