"""The experience store: SQLite is the truth, the faiss index follows it (own writes, other
processes' writes, a saved index, a transaction's rollback), partitions are searched apart, and
records round-trip."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from tether.errors import TetherError
from tether.memory.experience import FAILURES, RULES, SUCCESSES, Experience
from tether.memory.store import ExperienceStore


def exp(partition: str = FAILURES, instruction: str = "put the bowl on the plate",
        **kw) -> Experience:
    kw.setdefault("outcome", "failure" if partition == FAILURES else "success")
    return Experience(partition=partition, task=kw.pop("task", "libero/t"),
                      instruction=instruction, objects=["bowl", "plate"], **kw)


@pytest.fixture
def store(tmp_path):
    s = ExperienceStore(tmp_path / "m.db", "hashing")
    yield s
    s.close()


def test_search_is_top_k_per_partition_above_the_threshold(store):
    store.add(exp(FAILURES, params={"approach": [0, 0, 0.1]}))
    store.add(exp(SUCCESSES, params={"approach": [-0.1, 0, 0]}))
    store.add(exp(SUCCESSES, "turn on the stove"))
    hits = store.search("put the bowl on the plate Objects: bowl, plate", k=5, threshold=0.9)
    assert [h.experience.params for h in hits[SUCCESSES]] == [{"approach": [-0.1, 0, 0]}]
    assert len(hits[FAILURES]) == 1 and hits[RULES] == []
    assert hits[FAILURES][0].similarity == pytest.approx(1.0, abs=1e-5)


def test_an_experience_round_trips_with_every_field(store):
    e = exp(error_codes=["STUCK"], trace=[{"step": 1}], params={"attempts": 3},
            metadata={"steps": 55}, run_id="r1", diagnosis="blocked")
    store.add(e)
    assert store.get(e.id) == e
    assert store.find(e.id[:6]) == e


def test_the_index_follows_writes_from_another_connection(store, tmp_path):
    store.add(exp())
    assert len(store.search("bowl", k=10)[FAILURES]) == 1
    other = ExperienceStore(tmp_path / "m.db")
    other.add(exp(instruction="put the bowl in the basket"))
    assert len(store.search("bowl", k=10)[FAILURES]) == 2
    other.close()


def test_a_saved_index_is_reused_and_a_stale_one_rebuilt(store, tmp_path):
    for i in range(5):
        store.add(exp(instruction=f"task {i}"))
    store.rebuild_index()
    reopened = ExperienceStore(tmp_path / "m.db")
    reopened.ensure_index()
    assert reopened.index_generation == store.generation()
    store.add(exp(instruction="task 5"))  # the saved index is now one generation behind
    third = ExperienceStore(tmp_path / "m.db")
    assert len(third.search("task", k=10)[FAILURES]) == 6


def test_modify_and_delete_keep_the_index_consistent(store):
    a, b = store.add(exp()), store.add(exp(instruction="put the bowl in the basket"))
    store.modify(a.id, lambda e: setattr(e, "support", e.support + 1))
    assert store.get(a.id).support == 1
    assert store.delete([b.id]) == 1
    assert [h.experience.id for h in store.search("bowl", k=10)[FAILURES]] == [a.id]


def test_export_then_import_into_a_new_store(store, tmp_path):
    store.add(exp())
    store.add(exp(RULES, outcome="rule", params={"approach": [0, -0.1, 0]}))
    assert store.export(tmp_path / "m.jsonl") == 2
    other = ExperienceStore(tmp_path / "other.db", "hashing")
    assert other.import_(tmp_path / "m.jsonl") == (2, 0)
    assert other.import_(tmp_path / "m.jsonl") == (0, 2)
    assert sorted(e.id for e in other.all()) == sorted(e.id for e in store.all())


def test_opening_a_store_with_another_embedder_is_a_user_error(store, tmp_path):
    class Other:
        name, dim, modality = "other", 8, "text"

        def embed(self, items):
            return np.zeros((len(items), 8), np.float32)

    with pytest.raises(TetherError, match="built with embedder 'hashing'"):
        ExperienceStore(tmp_path / "m.db", Other())


def test_an_unknown_partition_is_refused(store):
    with pytest.raises(TetherError, match="unknown memory partition"):
        store.add(exp("lessons"))


@pytest.mark.parametrize("ivf_from, kind", [(10**9, "PQ16x4fs exhaustive"),
                                            (0, "IVF100,PQ16x4fs nprobe 128")])
def test_large_partitions_switch_to_pq_codes_re_ranked_exactly(monkeypatch, ivf_from, kind):
    """From EXACT_BELOW entries: PQ codes scanned exhaustively, or through an inverted file from
    IVF_FROM; either way the hits are re-ranked with the full vectors."""
    from tether.memory import index as vector_index
    from tether.memory.index import EXACT_BELOW, VectorIndex

    monkeypatch.setattr(vector_index, "IVF_FROM", ivf_from)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((EXACT_BELOW, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex.build(32, np.arange(EXACT_BELOW) + 1, vectors)
    assert index.kind() == f"{kind}, re-rank 20k"
    assert index.search(vectors[123], 1) == [(124, pytest.approx(1.0, abs=1e-5))]  # re-ranked
    loaded = VectorIndex.from_bytes(32, index.to_bytes())  # search parameters are restored
    assert loaded.kind() == index.kind() and loaded.search(vectors[5], 1)[0][0] == 6
    loaded.remove(np.array([124]))
    assert len(loaded) == EXACT_BELOW - 1 and loaded.search(vectors[123], 1)[0][0] != 124
    assert loaded.search(vectors[5], 1)[0][0] == 6


def test_a_transaction_commits_all_its_writes_or_none(store):
    kept = store.add(exp(instruction="kept"))
    store.search("kept", k=1)  # the index is loaded, so it must follow the rollback too
    with pytest.raises(RuntimeError, match="half-way"), store.transaction():
        store.add(exp(instruction="undone"))
        store.modify(kept.id, lambda e: setattr(e, "support", 5))
        raise RuntimeError("half-way")
    assert [e.id for e in store.all()] == [kept.id] and store.get(kept.id).support == 0
    assert [h.experience.id for h in store.search("undone", k=5)[FAILURES]] == [kept.id]


def test_a_failed_write_inside_a_transaction_is_undone_alone(store):
    with store.transaction():
        first = store.add(exp(instruction="first"))
        with pytest.raises(TetherError, match="unknown memory partition"):
            store.add_many([exp(instruction="valid"), exp("lessons")])
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            store.add_many([exp(instruction="second"), exp(instruction="dup", id=first.id)])
        last = store.add(exp(instruction="last"))
    assert [e.id for e in store.all()] == [first.id, last.id]
    assert sorted(h.experience.id for h in store.search("first", k=5)[FAILURES]) == sorted(
        [first.id, last.id])


def test_a_row_is_stored_pending_and_embedded_once_before_the_next_search(store, tmp_path):
    a = store.add(exp(instruction="bowl on the plate"))
    b = store.add(exp(instruction="bowl in the basket"), store.embed(["x"])[0])
    vectors = dict(store.conn.execute("SELECT id, length(vector) FROM experiences").fetchall())
    assert vectors == {a.id: 0, b.id: store.dim * 4}
    other = ExperienceStore(tmp_path / "m.db")  # another process's connection
    assert [h.experience.id for h in other.search(a.key, k=1)[FAILURES]] == [a.id]
    assert other.embed_pending() == 0 and store.embed_pending() == 0
    assert np.array_equal(store.vectors([a.id])[0], store.embed([a.key])[0])
    c = store.add(exp(instruction="bowl in the drawer"))
    store.rebuild_index()  # `tether memory rebuild-index` embeds what is pending
    assert store.conn.execute("SELECT length(vector) FROM experiences WHERE id = ?",
                              (c.id,)).fetchone()[0] == store.dim * 4
    assert sorted(store.indexes[FAILURES].ids()) == [1, 2, 3]
    other.close()
