"""Concurrent writers and crashes: four processes writing at once lose no experience; two
processes consolidating the same episode at once merge it into one entry; a process killed with
SIGKILL mid-write, mid index save, mid `import` or mid consolidation leaves a consistent store
holding all of that write or none of it, whose index agrees with a rebuild from SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.memory.consolidation import EpisodeRecord, consolidate
from tether.memory.experience import FAILURES, PARTITIONS, RULES, SUCCESSES, Experience
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
    """Check the store at `path` (integrity, rows with a whole vector or pending, index as
    loaded = index rebuilt = SQLite's rows per partition); its number of entries."""
    store = ExperienceStore(path)
    assert store.check() == "ok"
    rows = store.conn.execute("SELECT data, length(vector) FROM experiences").fetchall()
    assert all(json.loads(d)["id"] and n in (0, store.dim * 4) for d, n in rows)
    seqs = {p: sorted(s for (s,) in store.conn.execute(
        "SELECT seq FROM experiences WHERE partition = ?", (p,))) for p in PARTITIONS}
    store.ensure_index()
    assert {p: sorted(store.indexes[p].ids()) for p in PARTITIONS} == seqs
    store.rebuild_index(save=False)
    assert {p: sorted(store.indexes[p].ids()) for p in PARTITIONS} == seqs
    assert {n for (n,) in store.conn.execute("SELECT length(vector) FROM experiences")} <= {
        store.dim * 4}  # the pending rows were embedded before the index was used
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


# A process that consolidates one episode or imports one file into a store, and holds (waits at a
# barrier, or stops until killed) when its connection starts a chosen SQL statement.
HELD = """
import json, os, sqlite3, sys, time
from pathlib import Path
from tether.memory.consolidation import EpisodeRecord, consolidate
from tether.memory.store import ExperienceStore
path, job, arg, sql, nth, hold = sys.argv[1:7]
store = ExperienceStore(path)
started = 0

def trace(statement):
    global started
    if statement.startswith(sql):
        started += 1
        if started == int(nth):
            if hold == "stop":
                print("held", flush=True)
                time.sleep(600)
            else:  # a barrier of two: wait for the other process to get here too
                Path(hold, str(os.getpid())).touch()
                for _ in range(6000):
                    if len(list(Path(hold).iterdir())) == 2:
                        break
                    time.sleep(0.01)
                else:
                    sys.exit(3)

sqlite3.enable_callback_tracebacks(True)
store.conn.set_trace_callback(trace)
if job == "import":
    print(json.dumps(store.import_(arg)))
else:
    consolidate(store, EpisodeRecord(**json.loads(arg)))
"""


def held(path: Path, job: str, arg: str, sql: str, nth: int, hold: str) -> subprocess.Popen:
    """Run `HELD`: `job` ("import" a file, or "consolidate" a JSON episode) into `path`."""
    return subprocess.Popen([sys.executable, "-c", HELD, str(path), job, arg, sql, str(nth), hold],
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, text=True)


def kill_when_held(proc: subprocess.Popen) -> None:
    assert proc.stdout.readline() == "held\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def episode(success: bool, run: str, source: str = "default") -> dict:
    """An episode of task `t` as `EpisodeRecord` keywords (JSON, for `HELD`)."""
    approach = [-0.1, 0, 0] if success else [0, 0, 0.1]
    return {"task": "t", "instruction": "put the cheese on the plate",
            "objects": ["cheese", "plate"], "success": success, "steps": 60, "ended_by": "tree",
            "errors": [] if success else [{"code": "STUCK", "node": "reach grasp point",
                                           "message": "no progress", "step": 55}],
            "events": [], "params": {"approach": approach},
            "advice": {"approach": {"value": approach, "source": source}}, "run_id": run}


def entries(path: Path) -> dict[str, dict]:
    with ExperienceStore(path) as store:
        return {e.id: e.to_dict() for e in store.all()}


def test_two_processes_consolidating_one_episode_at_once_merge_it(tmp_path):
    """Both hold at their first write transaction, so both have done everything consolidation
    does before writing; then they go on at once."""
    path, barrier = tmp_path / "m.db", tmp_path / "barrier"
    barrier.mkdir()
    ExperienceStore(path, "hashing").close()
    procs = [held(path, "consolidate", json.dumps(episode(True, run)), "BEGIN IMMEDIATE", 1,
                  str(barrier)) for run in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert assert_consistent(path) == 1
    with ExperienceStore(path) as store:
        (merged,) = store.all()
        assert store.counts() == {SUCCESSES: 1, FAILURES: 0, RULES: 0}
    assert merged.count == 2 and sorted(merged.metadata["runs"]) == ["a", "b"]


def export_file(tmp_path: Path, n: int) -> Path:
    """An export file of `n` experiences spread over the partitions."""
    dump = tmp_path / "dump.jsonl"
    with ExperienceStore(tmp_path / "source.db", "hashing") as source:
        source.add_many([Experience(partition=PARTITIONS[i % 3], task=f"import/{i}",
                                    instruction=f"imported {i}", objects=["bowl"],
                                    outcome="success") for i in range(n)])
        assert source.export(dump) == n
    return dump


def test_two_processes_importing_one_file_at_once_add_it_once(tmp_path):
    """Both hold at their write transaction, after reading which ids the store knows."""
    path, barrier, dump = tmp_path / "m.db", tmp_path / "barrier", export_file(tmp_path, 50)
    barrier.mkdir()
    ExperienceStore(path, "hashing").close()
    procs = [held(path, "import", str(dump), "BEGIN IMMEDIATE", 1, str(barrier))
             for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert sorted(json.loads(p.stdout.read()) for p in procs) == [[0, 50], [50, 0]]
    assert assert_consistent(path) == 50


def test_sigkill_mid_import_writes_none_of_it(tmp_path):
    path, dump = tmp_path / "m.db", export_file(tmp_path, 300)
    seed = ExperienceStore(path, "hashing")
    for k in range(3):
        seed.add(Experience(partition=FAILURES, task=f"seed/{k}", instruction=f"seed {k}",
                            objects=[], outcome="failure"))
    seed.rebuild_index()  # a saved index, which must still match after the kill
    before = entries(path)
    kill_when_held(held(path, "import", str(dump), "INSERT INTO experiences", 150, "stop"))
    assert assert_consistent(path) == 3 and entries(path) == before
    with ExperienceStore(path) as store:  # and the import can be run again, whole
        assert store.import_(dump) == (300, 0)
    assert assert_consistent(path) == 303
    assert {e["task"] for e in entries(path).values()} == {
        *(f"seed/{k}" for k in range(3)), *(f"import/{i}" for i in range(300))}


def test_sigkill_mid_consolidation_writes_none_of_it(tmp_path):
    """A success following a failure model writes three things: the success, the rule's
    support and the correction of the failure; killed between them, none is there."""
    path = tmp_path / "m.db"
    with ExperienceStore(path, "hashing") as store:
        failed = consolidate(store, EpisodeRecord(**episode(False, "f")))
        store.rebuild_index()
    won = episode(True, "w", source=f"rule:{failed.rule}")
    before = entries(path)
    kill_when_held(held(path, "consolidate", json.dumps(won), "UPDATE experiences", 1, "stop"))
    assert assert_consistent(path) == 2 and entries(path) == before
    with ExperienceStore(path) as store:  # run again, it writes all three
        report = consolidate(store, EpisodeRecord(**won))
        assert report.corrected == [failed.id] and report.evidence == [failed.rule]
        assert store.counts() == {SUCCESSES: 1, FAILURES: 1, RULES: 1}
        assert store.get(failed.rule).support == 1
        assert store.get(failed.id).metadata["corrected_by"] == report.id
    assert assert_consistent(path) == 3
