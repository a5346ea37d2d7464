"""`tether.scenes.light_textures` and light `Cameras`: image textures reduced once per machine by
a power of two dividing both sides, drawn for trace frames that look the same."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from PIL import Image

from tether.scenes import fast_physics, light_textures
from tether.scenes.cameras import LIGHT_TEXELS, Cameras


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("TETHER_MODEL_CACHE", str(tmp_path / "models"))
    light_textures._folder.cache_clear()
    yield tmp_path
    light_textures._folder.cache_clear()


def _image(path, size, mode="RGB"):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 255, (size[1], size[0], len(mode)), dtype=np.uint8)
    Image.fromarray(pixels.squeeze(), mode).save(path)
    return path


def _xml(*files: tuple[str, str]) -> str:
    textures = "".join(f'<texture name="t{i}" type="{kind}" file="{f}"/>'
                       for i, (f, kind) in enumerate(files))
    materials = "".join(f'<material name="m{i}" texture="t{i}"/>' for i in range(len(files)))
    geoms = "".join(f'<geom type="box" size=".3 .3 .3" pos="{i} 0 0" group="1" material="m{i}"/>'
                    for i in range(len(files)))
    return (f"<mujoco><asset>{textures}{materials}</asset>"
            f"<worldbody><light pos='0 0 3'/><camera name='look' pos='0.5 -2 1' "
            f"xyaxes='1 0 0 0 0.45 0.9'/>{geoms}</worldbody></mujoco>")


def test_a_large_texture_is_halved_until_it_fits_and_a_small_one_is_kept(store):
    big = _image(store / "big.png", (2048, 1024))
    small = _image(store / "small.png", (64, 64))
    xml = light_textures.lighter(_xml((big, "2d"), (small, "2d")), 512)
    model = mujoco.MjModel.from_xml_string(xml)
    assert (model.tex_width[0], model.tex_height[0]) == (512, 256)
    assert (model.tex_width[1], model.tex_height[1]) == (64, 64)
    assert str(small) in xml and str(big) not in xml
    assert list((store / "models" / "textures").glob("*.png"))  # kept for the next process


def test_a_cube_keeps_its_faces_whole_and_an_odd_side_stops_the_halving(store):
    cube = _image(store / "cube.png", (2048, 2048))  # one face, repeated six times
    odd = _image(store / "odd.png", (1270, 1270), "RGBA")  # 2 x 635: halved once
    paletted = store / "paletted.png"
    Image.open(_image(store / "p.png", (1024, 1024))).convert("P").save(paletted)
    xml = _xml((cube, "cube"), (odd, "2d"), (paletted, "2d"))
    model = mujoco.MjModel.from_xml_string(light_textures.lighter(xml, 256))
    assert model.tex_width[0] == 256  # each face 256 texels a side
    assert (model.tex_width[1], model.tex_height[1]) == (635, 635)
    assert (model.tex_width[2], model.tex_height[2]) == (256, 256)


def test_a_grid_of_faces_is_halved_face_by_face(store):
    """A cube drawn from a 2 x 6 grid of faces 200 texels a side: halved while each face halves
    whole (200 -> 100 -> 50 -> 25), though the whole image (1200 x 400) would halve again."""
    grid = _image(store / "grid.png", (1200, 400))
    xml = (f'<mujoco><asset><texture name="box" type="cube" file="{grid}" gridsize="2 6" '
           'gridlayout="LFRBUD......"/><material name="m" texture="box"/></asset>'
           '<worldbody><geom type="box" size=".1 .1 .1" material="m"/></worldbody></mujoco>')
    assert mujoco.MjModel.from_xml_string(xml).tex_width[0] == 200
    model = mujoco.MjModel.from_xml_string(light_textures.lighter(xml, 16))
    assert model.tex_width[0] == 25


def test_a_reduced_xml_that_does_not_compile_leaves_the_textures_as_they_are(store,
                                                                             monkeypatch):
    from robosuite.utils.binding_utils import MjSim

    fast_physics.cache_compiled_models()
    xml = _xml((_image(store / "big.png", (1024, 1024)), "2d"))
    model = MjSim.from_xml_string(xml).model._model
    monkeypatch.setattr(fast_physics, "lighter", lambda xml, limit: "<mujoco><oops/></mujoco>")
    drawn = fast_physics.textured(model, 256)
    assert drawn.tex_width[0] == 1024


def test_an_unreadable_or_missing_image_is_left_as_the_xml_names_it(store):
    broken = store / "broken.png"
    broken.write_bytes(b"\x89PNG not really")
    xml = _xml((broken, "2d")) + _xml((store / "missing.png", "2d"))
    assert light_textures.lighter(xml, 64) == xml


def test_a_reduced_image_is_made_again_when_its_source_changes(store):
    image = _image(store / "wood.png", (1024, 1024))
    first = light_textures.lighter(_xml((image, "2d")), 256)
    assert light_textures.lighter(_xml((image, "2d")), 256) == first
    _image(image, (2048, 2048))
    second = light_textures.lighter(_xml((image, "2d")), 256)
    assert second != first
    assert mujoco.MjModel.from_xml_string(second).tex_width[0] == 256


def test_without_a_model_store_the_reduced_images_live_in_a_folder_of_the_process(tmp_path,
                                                                                    monkeypatch):
    monkeypatch.setenv("TETHER_MODEL_CACHE", "off")
    light_textures._folder.cache_clear()
    try:
        xml = light_textures.lighter(_xml((_image(tmp_path / "big.png", (1024, 1024)), "2d")),
                                     256)
        assert "tether-textures-" in xml
        assert mujoco.MjModel.from_xml_string(xml).tex_width[0] == 256
    finally:
        light_textures._folder.cache_clear()


def test_light_cameras_draw_a_scene_as_the_full_textures_do_to_the_eye(store, monkeypatch):
    """A model built from its XML (as robosuite builds scenes) is drawn by light cameras with
    textures of `LIGHT_TEXELS` a pixel: the frame differs from the full one by a level or two at
    most, and the drawing model holds a sixteenth of the texture bytes."""
    from robosuite.utils.binding_utils import MjSim

    fast_physics.cache_compiled_models()
    xml = _xml((_image(store / "big.png", (2048, 2048)), "2d"))
    model = MjSim.from_xml_string(xml).model._model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    light, full = Cameras(light=True), Cameras()
    try:
        frames = [cameras.render(model, data, "look", (128, 128)) for cameras in (light, full)]
        drawn = fast_physics.textured(model, LIGHT_TEXELS * 128)
        assert drawn.tex_data.nbytes * 16 == model.tex_data.nbytes
        difference = np.abs(frames[0].astype(int) - frames[1])
        assert frames[1].std() > 10 and difference.mean() < 2.0, difference.mean()
        assert fast_physics.textured(model) is model  # what a policy sees: the textures as they are
    finally:
        light.close()
        full.close()
