"""The vector index over one store partition: faiss, rebuilt from the store, never the truth.

`VectorIndex` maps int64 ids (the store's row numbers) to unit vectors and answers top-k inner
product (cosine) queries. Two kinds, chosen by size (numbers: docs/memory.md, measured with
benchmarks/retrieval.py):

* below `EXACT_BELOW` entries, exact search (`IndexFlatIP`): a flat scan of 10,000 vectors takes
  about 0.5 ms, and it needs no training, so small stores rebuild instantly;
* from `EXACT_BELOW` on, candidates then exact re-ranking: 4-bit product-quantised codes (one
  per 2 dimensions: 96 bytes a 384-d vector instead of 1,536) propose `K_FACTOR` * k
  candidates, and `IndexRefineFlat` re-scores them with the full vectors, so the similarities
  returned are exact and only the candidate list is approximate. The codes are scanned
  exhaustively (`IndexPQFastScan`: recall@5 0.99) below `IVF_FROM` entries, and through an
  inverted file (`IndexIVFPQFastScan`, sqrt(n) cells, `NPROBE` searched) from there on, where
  an exhaustive scan would cost milliseconds.

faiss runs on one OpenMP thread here (`one_thread`): a single query has nothing to parallelise,
and on a machine whose cores are busy a second OpenMP thread costs far more than it brings
(measured on the 2 shared cores: a 50k flat scan p95 35 ms on 2 threads, 5 ms on one; building
a 10k IVF-PQ index 40 s on 2 threads, 2.3 s on one). The index can be serialised to bytes;
the store decides when it is stale and rebuilds it from SQLite.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import faiss
import numpy as np

EXACT_BELOW = 10_000
IVF_FROM = 200_000
NPROBE = 128
K_FACTOR = 20
TRAIN_PER_CELL = 40
PQ_TRAIN_ITER, PQ_TRAIN_PER_CODE = 10, 64  # 4x faster training than faiss' 25, 256; same recall


def describe() -> str:
    """The index choice and its parameters, as the benchmark and docs print them."""
    return (f"exact IndexFlatIP below {EXACT_BELOW:,} entries a partition; from there 4-bit "
            f"PQ fast-scan codes (one per 2 dims), scanned exhaustively below {IVF_FROM:,} and "
            f"through an inverted file (sqrt(n) cells, nprobe {NPROBE}) above, proposing "
            f"{K_FACTOR}*k candidates, re-ranked exactly (IndexRefineFlat)")


@contextmanager
def one_thread() -> Iterator[None]:
    """Run faiss on one OpenMP thread in this thread (see the module docstring)."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)


def _tune(index: faiss.Index) -> faiss.Index:
    """Set the search parameters, which faiss does not serialise."""
    if isinstance(index, faiss.IndexIDMap2):
        inner = faiss.downcast_index(index.index)
        if isinstance(inner, faiss.IndexRefine):
            inner.k_factor = K_FACTOR
            base = faiss.downcast_index(inner.base_index)
            if isinstance(base, faiss.IndexIVF):
                base.nprobe = NPROBE
    return index


class VectorIndex:
    """Top-k inner-product search over (id, vector) pairs of one dimension."""

    def __init__(self, dim: int, index: faiss.Index | None = None):
        self.dim = dim
        self.index = _tune(index if index is not None
                           else faiss.IndexIDMap2(faiss.IndexFlatIP(dim)))

    @classmethod
    def build(cls, dim: int, ids: np.ndarray, vectors: np.ndarray, *, seed: int = 0) -> VectorIndex:
        """An index over `vectors`: exact below `EXACT_BELOW` entries, PQ codes + re-rank above."""
        with one_thread():
            return cls._build(dim, np.ascontiguousarray(ids, dtype=np.int64),
                              np.ascontiguousarray(vectors, dtype=np.float32), seed)

    @classmethod
    def _build(cls, dim: int, ids: np.ndarray, vectors: np.ndarray, seed: int) -> VectorIndex:
        n = len(ids)
        if n < EXACT_BELOW:
            out = cls(dim)
        else:
            codes = dim // 2 if dim % 2 == 0 else dim  # one 4-bit code per 2 dimensions
            if n < IVF_FROM:
                base = faiss.IndexPQFastScan(dim, codes, 4, faiss.METRIC_INNER_PRODUCT)
                train = min(n, 16 * PQ_TRAIN_PER_CODE)  # 16 centroids per 4-bit code
            else:
                nlist = int(math.sqrt(n))
                base = faiss.IndexIVFPQFastScan(faiss.IndexFlatIP(dim), dim, nlist, codes, 4,
                                                faiss.METRIC_INNER_PRODUCT)
                train = min(n, TRAIN_PER_CELL * nlist)
            base.pq.cp.niter, base.pq.cp.max_points_per_centroid = (PQ_TRAIN_ITER,
                                                                    PQ_TRAIN_PER_CODE)
            sample = np.random.default_rng(seed).choice(n, train, replace=False)
            base.train(vectors[np.sort(sample)])
            # the python wrappers keep the quantizer and the inner indexes alive
            out = cls(dim, faiss.IndexIDMap2(faiss.IndexRefineFlat(base)))
        if n:
            out.index.add_with_ids(vectors, ids)
        return out

    def kind(self) -> str:
        """This index's kind and parameters, e.g. 'IVF707,PQ192x4fs nprobe 128, re-rank 20k'."""
        inner = faiss.downcast_index(self.index.index)
        if not isinstance(inner, faiss.IndexRefine):
            return "exact (flat)"
        base = faiss.downcast_index(inner.base_index)
        pq = f"PQ{base.pq.M}x{base.pq.nbits}fs"
        scan = (f"IVF{base.nlist},{pq} nprobe {base.nprobe}" if isinstance(base, faiss.IndexIVF)
                else f"{pq} exhaustive")
        return f"{scan}, re-rank {inner.k_factor:g}k"

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def ids(self) -> np.ndarray:
        """The ids held, in insertion order."""
        return faiss.vector_to_array(self.index.id_map)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        with one_thread():
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                                    np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        inner = faiss.downcast_index(self.index.index)
        if not isinstance(inner, faiss.IndexRefine):
            self.index.remove_ids(ids)
            return
        # faiss cannot remove from a re-ranked index: re-add the rest (the training is kept)
        kept_ids = self.ids()
        vectors = faiss.downcast_index(inner.refine_index).reconstruct_n(0, len(kept_ids))
        keep = ~np.isin(kept_ids, ids)
        self.index.reset()
        self.add(kept_ids[keep], vectors[keep])

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(id, similarity) of the `k` nearest entries, best first."""
        if len(self) == 0 or k <= 0:
            return []
        with one_thread():
            scores, ids = self.index.search(
                np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def to_bytes(self) -> np.ndarray:
        return faiss.serialize_index(self.index)

    @classmethod
    def from_bytes(cls, dim: int, data: np.ndarray) -> VectorIndex:
        return cls(dim, faiss.deserialize_index(data))
