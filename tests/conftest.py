"""Session fixtures shared by the test packages.

`minilm` is the real MiniLM embedder, loaded once per test process (tests that use it are grouped
onto one xdist worker with `@pytest.mark.xdist_group("minilm")`).
Camera tests render offscreen through EGL and nothing is fetched from the hub, as under `make
test`, also when pytest is started by hand.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def minilm():
    from tether.models.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    return embedder
