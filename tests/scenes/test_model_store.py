"""`tether.scenes.model_store`: a compiled model is stored on its second compile, read back array
for array, keyed by the files it names, trimmed to its size, and never costs a run."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes import model_store

MESH = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"


def _xml(mesh_file) -> str:
    return (f'<mujoco><asset><mesh name="m" file="{mesh_file}"/></asset><worldbody><body>'
            '<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')


def _arrays(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    return {n: getattr(model, n) for n in dir(model)
            if not n.startswith("_") and isinstance(getattr(model, n), np.ndarray)}


@pytest.fixture
def store(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("TETHER_MODEL_CACHE", str(folder))
    mesh = tmp_path / "tetra.obj"
    mesh.write_text(MESH)
    return folder, _xml(mesh)


def _compiles(monkeypatch) -> list[str]:
    calls: list[str] = []
    compile_xml = mujoco.MjModel.from_xml_string
    monkeypatch.setattr(mujoco.MjModel, "from_xml_string",
                        lambda xml: calls.append(xml) or compile_xml(xml))
    return calls


def test_a_model_is_stored_on_its_second_compile_and_read_back_equal(store, monkeypatch):
    folder, xml = store
    calls = _compiles(monkeypatch)
    first = model_store.load_or_compile(xml)
    assert not list(folder.glob("*.mjb")) and len(list(folder.glob("*.seen"))) == 1
    model_store.load_or_compile(xml)
    assert len(list(folder.glob("*.mjb"))) == 1 and not list(folder.glob("*.seen"))
    read = model_store.load_or_compile(xml)
    assert len(calls) == 2  # the third came from the store
    arrays = _arrays(first)
    assert len(arrays) > 50
    for name, value in _arrays(read).items():
        assert np.array_equal(value, arrays[name]), name


def test_the_key_changes_with_a_named_file_and_with_the_xml(store, tmp_path):
    _, xml = store
    key = model_store.model_key(xml)
    assert model_store.model_key(xml) == key
    assert model_store.model_key(xml.replace("<freejoint/>", "")) != key
    (tmp_path / "tetra.obj").write_text(MESH + "v 1 1 1\n")
    assert model_store.model_key(xml) != key


def test_an_unreadable_stored_model_is_compiled_again(store, monkeypatch):
    folder, xml = store
    model_store.load_or_compile(xml)
    model_store.load_or_compile(xml)
    (stored,) = folder.glob("*.mjb")
    stored.write_bytes(stored.read_bytes()[:100])  # a file cut short
    calls = _compiles(monkeypatch)
    model = model_store.load_or_compile(xml)
    assert len(calls) == 1 and model.nmesh == 1
    assert not stored.exists()  # removed: the next compile stores it afresh


def test_off_compiles_and_writes_nothing(store, monkeypatch, tmp_path):
    folder, xml = store
    monkeypatch.setenv("TETHER_MODEL_CACHE", "off")
    for _ in range(3):
        assert model_store.load_or_compile(xml).nmesh == 1
    assert not folder.exists()


def test_the_least_recently_used_models_go_beyond_the_limit(store, monkeypatch):
    folder, xml = store
    other = xml.replace("<freejoint/>", "")
    for each in (xml, xml, other, other):
        model_store.load_or_compile(each)
    sizes = sorted(p.stat().st_size for p in folder.glob("*.mjb"))
    assert len(sizes) == 2
    monkeypatch.setenv("TETHER_MODEL_CACHE_GB", str(max(sizes) * 1.5 / 1e9))
    model_store.load_or_compile(xml.replace("<freejoint/>", '<joint type="hinge"/>'))  # trims
    (kept,) = folder.glob("*.mjb")
    assert kept.name == model_store.model_key(other) + model_store.SUFFIX


@pytest.mark.parametrize("setting", ["four", "-1", "nan"])
def test_a_bad_size_limit_is_a_located_error(store, monkeypatch, setting):
    _, xml = store
    monkeypatch.setenv("TETHER_MODEL_CACHE_GB", setting)
    with pytest.raises(TetherError, match=r"\$TETHER_MODEL_CACHE_GB: .* is not a size in GB"):
        model_store.load_or_compile(xml)


def test_an_unwritable_folder_costs_the_store_not_the_run(store, monkeypatch, tmp_path):
    _, xml = store
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TETHER_MODEL_CACHE", str(blocker / "models"))
    assert model_store.load_or_compile(xml).nmesh == 1
