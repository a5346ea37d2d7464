"""`tether.scenes.libero_registry`: LIBERO's task listing and initial states, the same as
LIBERO's benchmark module gives, read without torch once listed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tether.scenes import libero_registry
from tether.scenes.catalogue import SUITES, get_task
from tether.scenes.libero_setup import import_libero


@pytest.fixture
def config(tmp_path, monkeypatch):
    import_libero()
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path))
    return tmp_path


def _registry(suite: str) -> list[tuple[str, ...]]:
    from libero.libero import benchmark

    made = benchmark.get_benchmark_dict()[suite]()
    return [(t.name, t.language, t.problem_folder, t.bddl_file, t.init_states_file)
            for t in (made.get_task(i) for i in range(made.get_num_tasks()))]


def test_the_listing_is_the_registrys_and_is_read_back_without_it(config, monkeypatch):
    import libero.libero

    expected = {suite: _registry(suite) for suite in SUITES}
    for suite in SUITES:
        assert libero_registry.listing(suite) == expected[suite]
    assert set(json.loads((config / libero_registry.LISTING).read_text())["suites"]) == set(SUITES)
    monkeypatch.delattr(libero.libero, "benchmark", raising=False)
    monkeypatch.setitem(sys.modules, "libero.libero.benchmark", None)  # importing it now fails
    for suite in SUITES:
        assert libero_registry.listing(suite) == expected[suite]
    assert libero_registry.listing("libero_goal")[8][0] == "put_the_bowl_on_the_plate"


@pytest.mark.parametrize("kept", [b"\x00\xff binary", b'{"key": 1}', b'{"key": "another LIBERO", '
                                  b'"suites": {"libero_goal": [["a", "b", "c", "d", "e"]]}}',
                                  b'{"suites": [], "key": null}'])
def test_a_stale_or_unreadable_listing_is_made_again(config, kept):
    (config / libero_registry.LISTING).write_bytes(kept)
    assert libero_registry.listing("libero_goal") == _registry("libero_goal")
    assert json.loads((config / libero_registry.LISTING).read_text())["key"] \
        == libero_registry._registry_key()


def test_a_folder_that_cannot_be_written_lists_all_the_same(tmp_path, monkeypatch):
    import_libero()
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path / "a_file"))  # no folder to write in
    assert libero_registry.listing("libero_10") == _registry("libero_10")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_initial_states_read_as_torch_reads_them(tmp_path):
    import torch

    path = get_task("libero_goal/put_the_bowl_on_the_plate").init_states_file
    ours, theirs = libero_registry.saved_array(path), np.asarray(torch.load(path,
                                                                             weights_only=False))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == (50, 79)
    assert np.array_equal(ours, theirs)
    tensors = tmp_path / "tensors.pt"  # tensors inside: torch reads it
    torch.save(torch.arange(6.0).reshape(2, 3), tensors)
    assert np.array_equal(libero_registry.saved_array(tensors), np.arange(6.0).reshape(2, 3))


def test_a_listed_suite_needs_no_torch(config):
    libero_registry.listing("libero_goal")
    code = ("import sys; from tether.scenes.catalogue import get_task; "
            "t = get_task('libero_goal/8'); assert t.init_states().shape == (50, 79); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "LIBERO_CONFIG_PATH": str(config)}, check=True)
    assert out.stdout.strip() == "False"
