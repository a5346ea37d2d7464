"""Concurrent writers and crashes: four processes writing at once lose no experience, and a
process killed with SIGKILL mid-write (or mid index save) leaves a consistent store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.memory.experience import PARTITIONS, Experience
from tether.memory.store import ExperienceStore

REPO = Path(__file__).parents[2]
WRITER = """
import sys
from tether.memory.experience import Experience
from tether.memory.store import ExperienceStore
path, name, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
store = ExperienceStore(path, "hashing")
i = 0
while n < 0 or i < n:
    if mode == "index":
        store.rebuild_index()
    else:
        e = Experience(partition=("successes", "failures", "rules")[i % 3], task=f"{name}/{i}",
                       instruction=f"writer {name} episode {i}", objects=["bowl", "plate"],
                       outcome="success", trace=[{"step": s, "node": "n" * 50}
                                                 for s in range(300 if mode == "big" else 3)])
        store.add(e)
        if i % 10 == 0:
            store.search(f"writer {name}", k=3)
    i += 1
"""


def writer(path: Path, name: str, n: int, mode: str = "small") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(n), mode],
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def assert_consistent(path: Path) -> int:
    store = ExperienceStore(path)
    assert store.check() == "ok"
    rows = store.conn.execute("SELECT data, length(vector) FROM experiences").fetchall()
    assert all(json.loads(d)["id"] and n == store.dim * 4 for d, n in rows)
    store.ensure_index()
    assert sum(len(store.indexes[p]) for p in PARTITIONS) == len(rows)
    store.close()
    return len(rows)


def test_four_processes_writing_at_once_lose_no_experience(tmp_path):
    path = tmp_path / "m.db"
    ExperienceStore(path, "hashing").close()
    procs = [writer(path, f"w{k}", 40) for k in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 4
    assert assert_consistent(path) == 160
    store = ExperienceStore(path)
    tasks = {e.task for e in store.all()}
    assert tasks == {f"w{k}/{i}" for k in range(4) for i in range(40)}


@pytest.mark.parametrize("mode", ["big", "index"])
def test_sigkill_mid_write_leaves_a_consistent_store(tmp_path, mode):
    path = tmp_path / "m.db"
    seed = ExperienceStore(path, "hashing")
    for k in range(3):
        seed.add(Experience(partition="failures", task=f"seed/{k}", instruction=f"seed {k}",
                            objects=[], outcome="failure"))
    seed.close()
    for delay in (0.6, 0.9, 1.3):
        proc = writer(path, "killed", -1, mode)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        before = assert_consistent(path)
        store = ExperienceStore(path)  # and the store still takes writes
        store.add(Experience(partition="rules", task="after", instruction="after", objects=[],
                             outcome="rule"))
        assert len(store) == before + 1
        store.close()
