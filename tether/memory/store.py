"""The long-term experience store: SQLite (WAL) is the truth, faiss the rebuildable index.

    store = ExperienceStore("runs/memory.db")            # created on first use (embedder: minilm)
    store.add(experience)                                # one atomic transaction, no embedding
    hits = store.search("put the bowl on the plate Objects: ...", k=3, partitions=(FAILURES,))

Every write is one `BEGIN IMMEDIATE` transaction that also bumps a `generation` counter, so any
number of processes may write at once (SQLite serialises them; `busy_timeout` waits instead of
failing) and a process killed mid-write leaves the last committed state (WAL rollback). Each
experience row holds its JSON record and the float32 embedding of its key text.

Embedding is deferred: a write never needs the embedder (loading MiniLM costs seconds), so
`add` stores a row without its vector (an empty blob: *pending*) unless the caller passes one.
The row is the truth at once; its vector is computed, for every pending row in one batch, before
the next search (by any process) or by `rebuild_index` (`tether memory rebuild-index`), and
written back in its own transaction. Only what searches loads the embedder.

A read-then-write (search for a near-duplicate, then merge into it or add) is one transaction
too: `with store.transaction():` holds the write lock from before the read, and every write and
search inside it joins it (a nested write is a savepoint), so two processes doing it at once
take turns and the second sees what the first wrote.

    with store.transaction():
        hits = store.search(vector, k=1, partitions=(SUCCESSES,), threshold=0.97)[SUCCESSES]
        if hits:
            store.modify(hits[0].experience.id, merge)
        else:
            store.add(experience, vector)

The faiss index (one `VectorIndex` per partition) is derived data. It is kept current by this
process's own writes; when another process has written (the generation moved on) it is rebuilt
from SQLite before the next search. Rebuilds are saved next to the database (`PATH.index`, one
atomically replaced file stamped with its generation) so a large store opens without re-indexing.

The embedder is recorded in the store at creation; opening a store with another embedder is an
error, so a store is never searched with vectors from a different model.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tether.errors import TetherError
from tether.files import write_whole
from tether.memory.experience import PARTITIONS, Experience
from tether.memory.index import VectorIndex
from tether.models.embedders import Embedder, get_embedder

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS experiences (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    partition TEXT NOT NULL,
    task TEXT NOT NULL,
    updated REAL NOT NULL,
    data TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS experiences_partition ON experiences (partition);
CREATE INDEX IF NOT EXISTS experiences_task ON experiences (task);
CREATE INDEX IF NOT EXISTS experiences_pending ON experiences (seq) WHERE length(vector) = 0;
"""
PENDING = b""  # the vector of a row not embedded yet
BUSY_TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class Hit:
    """A search result: the experience and its cosine similarity to the query."""

    experience: Experience
    similarity: float


@dataclass(frozen=True)
class Change:
    """How one committed write changes the index: add or remove a vector in a partition."""

    op: str  # "add" or "remove"
    seq: int
    partition: str
    vector: np.ndarray | None = None  # None for an added row that is pending


class ExperienceStore:
    """A long-term memory file (see the module docstring)."""

    def __init__(self, path: Path | str, embedder: Embedder | str | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                    isolation_level=None, check_same_thread=False)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.lock = threading.RLock()
        self._embedder = embedder if not isinstance(embedder, str) else get_embedder(embedder)
        self._init_schema()
        self.indexes: dict[str, VectorIndex] | None = None
        self.index_generation = -1
        self.depth = 0  # transactions open on this connection (1: BEGIN, more: savepoints)
        self.rebuilt_in_transaction = False
        self.pending = False  # this connection added rows without a vector since it embedded

    # --- schema and embedder ----------------------------------------------------------------
    def _init_schema(self) -> None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, SCHEMA.split(";")):
                    self.conn.execute(statement)
                meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
                if "embedder" not in meta:
                    embedder = self._embedder or get_embedder("minilm")
                    self._embedder = embedder
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                        ("embedder", embedder.name), ("dim", str(embedder.dim)),
                        ("generation", "0"), ("created", str(time.time()))])
                    meta = {"embedder": embedder.name, "dim": str(embedder.dim)}
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        self.embedder_name, self.dim = meta["embedder"], int(meta["dim"])
        if self._embedder is not None and (self._embedder.name, self._embedder.dim) != (
                self.embedder_name, self.dim):
            raise TetherError(
                f"memory store {self.path} was built with embedder '{self.embedder_name}' "
                f"({self.dim}-d), not '{self._embedder.name}' ({self._embedder.dim}-d)")

    @property
    def embedder(self) -> Embedder:
        """The store's embedder, loaded on first use (listing a store never loads a model)."""
        if self._embedder is None:
            self._embedder = get_embedder(self.embedder_name)
        return self._embedder

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    # --- transactions -------------------------------------------------------------------------
    def generation(self) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE key = 'generation'")
                   .fetchone()[0])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One `BEGIN IMMEDIATE` transaction: what runs inside commits together or not at all.

        The generation moves on at its start, and the in-memory index follows every write inside
        it (and is dropped on rollback). Nested, it is a savepoint of the enclosing transaction.
        """
        with self.lock:
            if self.depth:
                yield from self._savepoint()
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self.depth, self.rebuilt_in_transaction = 1, False
            try:
                before = self.generation()
                self.conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'",
                                  (str(before + 1),))
                if self.indexes is not None and self.index_generation == before:
                    self.index_generation = before + 1  # no write of this one yet: still true
                else:
                    self.indexes = None  # another process wrote: rebuild when searched
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                self.indexes, self.index_generation = None, -1
                raise
            finally:
                self.depth = 0
            if self.rebuilt_in_transaction and self.indexes is not None:
                self._save_index()  # saved once committed, never with uncommitted rows

    def _savepoint(self) -> Iterator[None]:
        """The body of a nested `transaction`: undone alone when it raises."""
        name = f"nested{self.depth}"
        self.conn.execute(f"SAVEPOINT {name}")
        self.depth += 1
        try:
            yield
        except BaseException:
            self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
            self.indexes, self.index_generation = None, -1  # it may hold the undone writes
            raise
        else:
            self.conn.execute(f"RELEASE {name}")
        finally:
            self.depth -= 1

    def write(self, body: Callable[[sqlite3.Connection], list[Change]]) -> None:
        """Run `body` in a transaction (or the open one) and apply its changes to the index."""
        with self.transaction():
            changes = body(self.conn)
            for change in changes:
                if change.op == "add" and change.vector is None:
                    self.pending = True
                elif self.indexes is not None and change.op == "add":
                    self.indexes[change.partition].add(np.array([change.seq]),
                                                       change.vector.reshape(1, -1))
                elif self.indexes is not None:
                    self.indexes[change.partition].remove(np.array([change.seq]))

    # --- writing ------------------------------------------------------------------------------
    def add(self, experience: Experience, vector: np.ndarray | None = None) -> Experience:
        """Add one experience (pending, embedded before the next search, unless `vector` is
        the embedding of its key)."""
        self.add_many([experience], None if vector is None else vector.reshape(1, -1))
        return experience

    def add_many(self, experiences: list[Experience], vectors: np.ndarray | None = None) -> None:
        """Add experiences in one transaction (all or none); without `vectors`, pending."""
        if not experiences:
            return
        for e in experiences:
            if e.partition not in PARTITIONS:
                raise TetherError(f"unknown memory partition '{e.partition}' "
                                  f"(one of {', '.join(PARTITIONS)})")
        rows: list[np.ndarray | None] = [None] * len(experiences)
        if vectors is not None:
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            if vectors.shape != (len(experiences), self.dim):
                raise ValueError(f"expected {len(experiences)} vectors of {self.dim}, "
                                 f"got {vectors.shape}")
            rows = list(vectors)

        def insert(conn: sqlite3.Connection) -> list[Change]:
            changes = []
            for e, v in zip(experiences, rows, strict=True):
                cur = conn.execute(
                    "INSERT INTO experiences (id, partition, task, updated, data, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (e.id, e.partition, e.task, e.updated, json.dumps(e.to_dict()),
                     PENDING if v is None else v.tobytes()))
                changes.append(Change("add", int(cur.lastrowid), e.partition, v))
            return changes

        self.write(insert)

    def modify(self, id: str, edit: Callable[[Experience], None]) -> Experience:
        """Read, edit and write back one experience in one transaction (no lost updates).

        The key text (and so the vector) must not change; `edit` changes the record in place.
        """
        result: list[Experience] = []

        def update(conn: sqlite3.Connection) -> list[Change]:
            row = conn.execute("SELECT data FROM experiences WHERE id = ?", (id,)).fetchone()
            if row is None:
                raise TetherError(f"no experience '{id}' in {self.path}")
            e = Experience.from_dict(json.loads(row[0]))
            key = e.key
            edit(e)
            if e.key != key:
                raise ValueError("modify() must not change an experience's key text")
            e.updated = time.time()
            conn.execute("UPDATE experiences SET data = ?, updated = ? WHERE id = ?",
                         (json.dumps(e.to_dict()), e.updated, id))
            result.append(e)
            return []

        self.write(update)
        return result[0]

    def delete(self, ids: Iterable[str]) -> int:
        ids = list(ids)
        removed: list[int] = []

        def remove(conn: sqlite3.Connection) -> list[Change]:
            changes = []
            for id in ids:
                row = conn.execute("SELECT seq, partition FROM experiences WHERE id = ?",
                                   (id,)).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM experiences WHERE seq = ?", (row[0],))
                    changes.append(Change("remove", int(row[0]), row[1]))
            removed.append(len(changes))
            return changes

        self.write(remove)
        return removed[0]

    # --- reading ------------------------------------------------------------------------------
    def get(self, id: str) -> Experience:
        row = self.conn.execute("SELECT data FROM experiences WHERE id = ?", (id,)).fetchone()
        if row is None:
            raise TetherError(f"no experience '{id}' in {self.path}")
        return Experience.from_dict(json.loads(row[0]))

    def find(self, prefix: str) -> Experience:
        """The experience whose id starts with `prefix` (as `tether memory show` takes it)."""
        rows = self.conn.execute("SELECT data FROM experiences WHERE id LIKE ? LIMIT 2",
                                 (prefix.replace("%", "") + "%",)).fetchall()
        if len(rows) != 1:
            raise TetherError(f"{'no' if not rows else 'more than one'} experience with id "
                              f"'{prefix}' in {self.path}")
        return Experience.from_dict(json.loads(rows[0][0]))

    def all(self, partition: str | None = None, task: str | None = None) -> Iterator[Experience]:
        """Experiences, oldest first, optionally of one partition and/or task."""
        sql, args = "SELECT data FROM experiences WHERE 1 = 1", []
        if partition is not None:
            sql, args = sql + " AND partition = ?", [*args, partition]
        if task is not None:
            sql, args = sql + " AND task = ?", [*args, task]
        for (data,) in self.conn.execute(sql + " ORDER BY seq", args).fetchall():
            yield Experience.from_dict(json.loads(data))

    def ids(self) -> set[str]:
        """Every experience's id."""
        return {row[0] for row in self.conn.execute("SELECT id FROM experiences")}

    def counts(self) -> dict[str, int]:
        rows = dict(self.conn.execute(
            "SELECT partition, COUNT(*) FROM experiences GROUP BY partition").fetchall())
        return {p: int(rows.get(p, 0)) for p in PARTITIONS}

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM experiences").fetchone()[0])

    def vectors(self, ids: list[str]) -> np.ndarray:
        """The embeddings of the experiences `ids`, one row each (pending rows embedded first)."""
        with self.lock:
            self.embed_pending()
            found = dict(self.conn.execute(
                f"SELECT id, vector FROM experiences WHERE id IN ({','.join('?' * len(ids))})",
                ids).fetchall())
        missing = [id for id in ids if id not in found]
        if missing:
            raise TetherError(f"no experience '{missing[0]}' in {self.path}")
        return np.stack([np.frombuffer(found[id], dtype=np.float32) for id in ids]) if ids \
            else np.zeros((0, self.dim), np.float32)

    def embed_pending(self) -> int:
        """Embed every pending row (see the module docstring) in one batch; how many."""
        with self.lock:
            rows = self.conn.execute("SELECT seq, partition, data FROM experiences "
                                     "WHERE length(vector) = 0").fetchall()
            self.pending = False
            if not rows:
                return 0
            vectors = self.embed([Experience.from_dict(json.loads(d)).key for _, _, d in rows])
            filled: list[int] = []

            def fill(conn: sqlite3.Connection) -> list[Change]:
                changes = []
                for (seq, partition, _), v in zip(rows, vectors, strict=True):
                    cur = conn.execute("UPDATE experiences SET vector = ? "
                                       "WHERE seq = ? AND length(vector) = 0", (v.tobytes(), seq))
                    if cur.rowcount:  # not embedded (or deleted) by another process meanwhile
                        changes.append(Change("add", seq, partition, v))
                filled.append(len(changes))
                return changes

            self.write(fill)
        return filled[0]

    # --- the index ----------------------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        return self.path.with_name(self.path.name + ".index")

    def rebuild_index(self, *, save: bool = True) -> float:
        """Rebuild every partition's index from SQLite (and save it), embedding the pending rows
        first; returns the seconds taken."""
        start = time.perf_counter()
        with self.lock:
            self.embed_pending()
            generation = self.generation()
            indexes = {}
            for partition in PARTITIONS:
                rows = self.conn.execute(
                    "SELECT seq, vector FROM experiences WHERE partition = ? "
                    "AND length(vector) > 0 ORDER BY seq", (partition,))
                ids, blobs = [], []
                for seq, blob in rows:
                    ids.append(seq)
                    blobs.append(blob)
                vectors = (np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, self.dim)
                           if blobs else np.zeros((0, self.dim), np.float32))
                indexes[partition] = VectorIndex.build(self.dim, np.array(ids, np.int64), vectors)
            self.indexes, self.index_generation = indexes, generation
            if save and self.depth:
                self.rebuilt_in_transaction = True  # saved when it commits
            elif save:
                self._save_index()
        return time.perf_counter() - start

    def _save_index(self) -> None:
        assert self.indexes is not None
        indexes = self.indexes

        def save(tmp: Path) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, generation=np.array(self.index_generation),
                         embedder=np.array(self.embedder_name),
                         **{p: idx.to_bytes() for p, idx in indexes.items()})

        write_whole(self.index_path, save)

    def _load_index(self, generation: int) -> bool:
        try:
            with np.load(self.index_path) as saved:
                if int(saved["generation"]) != generation or str(saved["embedder"]) != \
                        self.embedder_name:
                    return False
                self.indexes = {p: VectorIndex.from_bytes(self.dim, saved[p]) for p in PARTITIONS}
        except (OSError, KeyError, ValueError, RuntimeError):
            return False
        self.index_generation = generation
        return True

    def ensure_index(self) -> None:
        """Make the in-memory index match the database, every row embedded (pending rows are
        embedded, then the index follows, is loaded as saved, or is rebuilt)."""
        with self.lock:
            if self.pending or self.indexes is None or self.index_generation != self.generation():
                self.embed_pending()
            generation = self.generation()
            if self.indexes is not None and self.index_generation == generation:
                return
            if not self._load_index(generation):
                self.rebuild_index(save=len(self) > 0)

    def search(self, query: str | np.ndarray, *, k: int, partitions: Iterable[str] = PARTITIONS,
               threshold: float = -1.0) -> dict[str, list[Hit]]:
        """Top-`k` experiences per partition with similarity >= `threshold`, best first."""
        vector = self.embed([query])[0] if isinstance(query, str) else np.asarray(query)
        with self.lock:
            self.ensure_index()
            assert self.indexes is not None
            found = {p: [(seq, s) for seq, s in self.indexes[p].search(vector, k) if s >= threshold]
                     for p in partitions}
            seqs = [seq for hits in found.values() for seq, _ in hits]
            records: dict[int, Experience] = {}
            for start in range(0, len(seqs), 500):
                chunk = seqs[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self.conn.execute(
                    f"SELECT seq, data FROM experiences WHERE seq IN ({marks})", chunk).fetchall()
                records.update({seq: Experience.from_dict(json.loads(d)) for seq, d in rows})
        return {p: [Hit(records[seq], s) for seq, s in hits if seq in records]
                for p, hits in found.items()}

    def export(self, path: Path | str) -> int:
        """Write every experience as one JSON line (no vectors: an import embeds them again)."""
        n = 0
        with open(path, "w", encoding="utf-8") as f:
            for e in self.all():
                f.write(json.dumps(e.to_dict()) + "\n")
                n += 1
        return n

    def import_(self, path: Path | str) -> tuple[int, int]:
        """Add the experiences of an export file whose ids are new; (added, skipped)."""
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            records = [Experience.from_dict(json.loads(line)) for line in lines if line.strip()]
        except (OSError, ValueError, TypeError) as exc:
            raise TetherError(f"cannot import {path}: {exc}") from None
        with self.transaction():  # the check for known ids and the adding are one write
            known = self.ids()
            fresh = [e for e in records if e.id not in known]
            self.add_many(fresh)  # pending: embedded before the next search
        return len(fresh), len(records) - len(fresh)

    def check(self) -> str:
        """SQLite's integrity check ('ok' when the file is consistent)."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ExperienceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
