"""The vector index over one store partition: faiss, rebuilt from the store, never the truth.

`VectorIndex` maps int64 ids (the store's row numbers) to unit vectors and answers top-k inner
product (cosine) queries. Small partitions use an exact flat index; from `IVF_FROM` vectors on,
an inverted-file index (`nlist` ~ sqrt(n) k-means cells, `NPROBE` of them searched per query)
keeps queries around a millisecond at a million entries, trading a little recall. The index can
be serialised to bytes; the store decides when it is stale and rebuilds it from SQLite.
"""

from __future__ import annotations

import math

import faiss
import numpy as np

IVF_FROM = 20_000
NPROBE = 16
TRAIN_PER_CELL = 40


class VectorIndex:
    """Top-k inner-product search over (id, vector) pairs of one dimension."""

    def __init__(self, dim: int, index: faiss.Index | None = None):
        self.dim = dim
        self.index = index if index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @classmethod
    def build(cls, dim: int, ids: np.ndarray, vectors: np.ndarray, *, seed: int = 0) -> VectorIndex:
        """An index over `vectors`: exact below `IVF_FROM` entries, IVF above."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        n = len(ids)
        if n < IVF_FROM:
            out = cls(dim)
        else:
            nlist = int(math.sqrt(n))
            quantizer = faiss.IndexFlatIP(dim)
            ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
            sample = np.random.default_rng(seed).choice(n, min(n, TRAIN_PER_CELL * nlist),
                                                        replace=False)
            ivf.train(vectors[np.sort(sample)])
            ivf.nprobe = NPROBE
            ivf.quantizer_trains_alone = 0
            out = cls(dim, ivf)
            out._quantizer = quantizer  # keep the quantizer alive as long as the index
        if n:
            out.index.add_with_ids(vectors, ids)
        return out

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                                np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        self.index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(id, similarity) of the `k` nearest entries, best first."""
        if len(self) == 0 or k <= 0:
            return []
        scores, ids = self.index.search(np.ascontiguousarray(query.reshape(1, -1),
                                                             dtype=np.float32), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def to_bytes(self) -> np.ndarray:
        return faiss.serialize_index(self.index)

    @classmethod
    def from_bytes(cls, dim: int, data: np.ndarray) -> VectorIndex:
        index = faiss.deserialize_index(data)
        if isinstance(index, faiss.IndexIVF):
            index.nprobe = NPROBE
        return cls(dim, index)
