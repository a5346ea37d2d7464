"""Embedders: unit vectors, registered by name; MiniLM ranks paraphrases above unrelated tasks."""

from __future__ import annotations

import numpy as np
import pytest

from tether.errors import TetherError
from tether.models.embedders import Embedder, HashingEmbedder, get_embedder


def test_hashing_embedder_is_deterministic_and_unit_length():
    a = HashingEmbedder().embed(["put the bowl on the plate", "open the drawer"])
    b = HashingEmbedder().embed(["put the bowl on the plate", "open the drawer"])
    assert a.dtype == np.float32 and a.shape == (2, 256)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)


def test_embedders_satisfy_the_protocol():
    assert isinstance(HashingEmbedder(), Embedder)


def test_unknown_embedder_is_a_user_error_with_a_suggestion():
    with pytest.raises(TetherError, match="did you mean 'minilm'"):
        get_embedder("minlm")


@pytest.mark.xdist_group("minilm")
def test_minilm_ranks_a_paraphrase_above_an_unrelated_task(minilm):
    v = minilm.embed(["put the black bowl on the plate", "place the bowl onto the plate",
                      "turn on the stove"])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.8 > v[0] @ v[2]
