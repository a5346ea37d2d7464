"""Session fixtures shared by the test packages.

`minilm` is the real MiniLM embedder, loaded once per test process (tests that use it are grouped
onto one xdist worker with `@pytest.mark.xdist_group("minilm")`).
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def minilm():
    from tether.models.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder
