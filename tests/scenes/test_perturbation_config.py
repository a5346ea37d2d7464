"""`tether.scenes.perturbation_config`: LIBERO-PRO's `:perturbation_config` section read into
typed configs, every key and value checked with a located error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.errors import TetherError
from tether.scenes.bddl import parse_problem, read_problem
from tether.scenes.perturbation_config import (
    Appearance,
    Camera,
    InitialPose,
    Lighting,
    Observation,
    Placement,
    RuntimeMove,
    Shape,
)

FIXTURES = Path(__file__).parent / "liberopro"
OCCLUSION = (FIXTURES / "05_view_occlusion.bddl").read_text()


def test_each_case_file_reads_into_its_enabled_sections_only():
    active = {path.stem: read_problem(path).perturbation_config.active()
              for path in sorted(FIXTURES.glob("*.bddl"))}
    assert active == {
        "01_visual_noise_glare": [Lighting(0.02, 0.16, 0.01), Observation(0.68, 12.0)],
        "02_camera_view_angle": [Camera("agentview", (0.48, 0.24, 1.62),
                                        (0.6099232, 0.3594558, 0.3594558, 0.6099232))],
        "03_runtime_object_move": [RuntimeMove(
            object="akita_black_bowl_1", step=80, trigger="near_grasp", distance_threshold=0.09,
            fallback_step=160, delta_xy=(0.17, 0.06), min_delta_norm=0.18)],
        "04_object_texture": [Appearance(("plate_1",), (0.72, 0.63, 0.5, 1.0), True, True,
                                         True)],
        "05_view_occlusion": [Placement(
            reference="akita_black_bowl_1", targets=("black_book_occluder_1",),
            offsets_xy=((0.08, 0.0),), mesh_scale=(1.6, 1.6, 1.6), min_reference_distance=0.02,
            pin_targets=True, avoid_targets=("plate_1",), min_avoid_distance=0.08)],
        "06_object_shape": [Shape("akita_black_bowl_1", (0.5, 0.5, 0.5))],
        "07_initial_pose_position_angle": [InitialPose("akita_black_bowl_1", (0.17, -0.06), 0.18,
                                                       0.7853981633974483)],
    }


def test_the_facts_are_kept_and_a_file_without_the_section_has_no_config():
    config = read_problem(FIXTURES / "05_view_occlusion.bddl").perturbation_config
    assert (config.case, config.source_suite) == ("view_occlusion", "tether_tests")
    plain = parse_problem(Path("scenes/tasks/put_the_middle_bowl_on_the_plate.bddl").read_text())
    assert plain.perturbation_config is None


def test_an_enabled_section_may_name_a_region_as_upstreams_files_do():
    text = OCCLUSION.replace("(:avoid_targets plate_1)", "(:avoid_targets main_table_plate_region)")
    placement = parse_problem(text).perturbation_config.object_placement
    assert placement.avoid_targets == ("main_table_plate_region",)


def test_absent_keys_take_upstreams_defaults():
    text = OCCLUSION.replace("(:offsets_xy ((0.080 0.000)))", "").replace(
        "(:mesh_scale 1.6 1.6 1.6)", "")
    placement = parse_problem(text).perturbation_config.object_placement
    assert placement.offsets_xy == ((0.0, -0.14),)
    assert placement.mesh_scale == (1.0, 1.0, 1.0)


def test_the_section_is_not_written_back():
    problem = read_problem(FIXTURES / "06_object_shape.bddl")
    assert ":perturbation_config" not in problem.to_bddl()
    assert parse_problem(problem.to_bddl()).perturbation_config is None


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("(:pin_targets true)", "(:pin_target true)",
         ":object_placement has no key ':pin_target' (did you mean 'pin_targets'?)"),
        ("(:case view_occlusion)", "(:cas view_occlusion)",
         "unknown key ':cas' in :perturbation_config (did you mean 'case'?)"),
        ("(:mode front_occlusion)", "(:mode front_occlusoin)",
         "tether does not apply mode 'front_occlusoin' (did you mean 'front_occlusion'?)"),
        ("(:mesh_scale 1.6 1.6 1.6)", "(:mesh_scale 1.6 1.6)", "takes 3 numbers, got 2"),
        ("(:mesh_scale 1.6 1.6 1.6)", "(:mesh_scale 1.6 0 1.6)", "must be > 0"),
        ("(:min_avoid_distance 0.08)", "(:min_avoid_distance -0.08)", "must be >= 0"),
        ("(:min_avoid_distance 0.08)", "(:min_avoid_distance far)", "'far' is not a number"),
        ("(:reference akita_black_bowl_1)", "(:reference akita_black_bowl_2)",
         "'akita_black_bowl_2' is not an object, fixture or region of this task (did you mean "
         "'akita_black_bowl_1'?)"),
        ("(:pin_targets true)", "(:pin_targets yes)", "expected true or false, found 'yes'"),
        ("(:target_quat 1.0 0.0 0.0 0.0)", "(:target_quat 0 0 0 0)", "zero quaternion"),
        ("(:targets black_book_occluder_1)", "", "is enabled but names no (:targets ...)"),
        ("(:pin_targets true)", "(:pin_targets true) (:pin_targets false)", "appears twice"),
    ],
)
def test_a_bad_key_or_value_is_a_located_error(tmp_path, old, new, message):
    assert old in OCCLUSION
    path = tmp_path / "bad.bddl"
    path.write_text(OCCLUSION.replace(old, new, 1))
    with pytest.raises(TetherError) as err:
        read_problem(path)
    text = str(err.value)
    assert message in text
    line = next(i for i, row in enumerate(path.read_text().splitlines(), 1)
                if (new or "(:object_placement") in row)
    assert text.startswith(f"{path}:{line}:")


def test_a_disabled_section_is_not_checked_for_its_mode_or_names_but_its_keys_are():
    off = OCCLUSION.replace("(:enabled true) (:mode front_occlusion)",
                            "(:enabled false) (:mode anything)").replace(
        "(:targets black_book_occluder_1)", "(:targets black_book_occluder_9)")
    assert parse_problem(off).perturbation_config.active() == []
    with pytest.raises(TetherError, match="has no key ':offset'"):
        parse_problem(off.replace(":offsets_xy", ":offset"))
