"""Whole-task demonstrations (`tether collect --tree`, `tether/datasets/demos.py`): the
recording order, resuming from the ledger, and the mistakes refused before a scene opens; the
slow tests record real episodes from the start pose."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from tether.cli.main import app
from tether.datasets.demos import (
    LEDGER,
    Attempt,
    DemoConfig,
    collect_demos,
    merge_demos,
    read_ledger,
    schedule,
    tasks_of,
    tree_file,
)
from tether.datasets.rollouts import append_episode, rollout_features
from tether.errors import TetherError
from tether.models.language import FEATURE, Language
from tether.models.observation import CameraSpec
from tether.scenes.catalogue import get_task

runner = CliRunner()
TASK = "libero_object/3"
SIZE = 16
CAMERAS = (CameraSpec("agentview", (SIZE, SIZE), "image"),)


def tether(*args: str):
    return runner.invoke(app, list(args))


def test_attempts_go_in_blocks_of_five_init_states_task_by_task():
    a, b = tasks_of(["libero_object/0", "libero_object/1"])
    order = [(t.id, k) for t, k in schedule([a, b], 3, 7)]
    assert order == [(a.id, 3), (a.id, 4), (a.id, 5), (a.id, 6), (a.id, 7),
                     (b.id, 3), (b.id, 4), (b.id, 5), (b.id, 6), (b.id, 7),
                     (a.id, 8), (a.id, 9), (b.id, 8), (b.id, 9)]


def test_a_suite_name_is_all_its_tasks():
    assert [t.id for t in tasks_of(["libero_object"])] == [
        get_task(f"libero_object/{i}").id for i in range(10)]


def test_a_kept_episode_the_dataset_does_not_hold_is_attempted_again(tmp_path):
    """The ledger line of a success is written before its episode is appended: a run killed in
    between leaves a line whose episode index the dataset does not reach."""
    root = tmp_path / "demos"
    frame = {"observation.images.image": np.zeros((SIZE, SIZE, 3), np.uint8),
             "observation.state": np.zeros(8, np.float32), "action": np.zeros(7, np.float32),
             "task": "t", "tree.node": "move"}
    append_episode(root, [frame, frame], True, rollout_features(CAMERAS))
    lines = [Attempt(TASK, 0, True, 2, 1.0, 0), Attempt(TASK, 1, False, 9, 1.0, None),
             Attempt(TASK, 2, True, 2, 1.0, 1)]  # episode 1 never reached the dataset
    (root / "meta" / LEDGER).write_text(
        "".join(json.dumps(a.__dict__) + "\n" for a in lines), encoding="utf-8")
    assert [(a.init_state, a.episode) for a in read_ledger(root)] == [(0, 0), (1, None)]


def recorded_part(root, first: int, lengths: list[int], **recipe) -> None:
    """A dataset as `tether collect --tree` leaves it: one kept episode of each length from
    init state `first` on (its state filled with its init state), each followed by a failed
    attempt."""
    def frames(n: int, k: int) -> list[dict]:
        return [{"observation.images.image": np.full((SIZE, SIZE, 3), k, np.uint8),
                 "observation.state": np.full(8, k, np.float32),
                 "action": np.zeros(7, np.float32), "task": "t", "tree.node": "m"}] * n

    attempts = []
    for k, n in enumerate(lengths):
        append_episode(root, frames(n, first + 2 * k), True, rollout_features(CAMERAS))
        attempts += [Attempt(TASK, first + 2 * k, True, n, 1.0, k),
                     Attempt(TASK, first + 2 * k + 1, False, 9, 1.0, None)]
    config = DemoConfig(tasks=[TASK], root=root, cameras=CAMERAS, language=None, **recipe)
    (root / "meta" / "tether_demos.json").write_text(json.dumps(config.recipe()),
                                                     encoding="utf-8")
    (root / "meta" / LEDGER).write_text(
        "".join(json.dumps(a.__dict__) + "\n" for a in attempts), encoding="utf-8")


def test_parts_merge_into_one_dataset_whose_ledger_points_at_its_episodes(tmp_path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    recorded_part(tmp_path / "a", 0, [3, 4])
    recorded_part(tmp_path / "b", 20, [5, 2])
    result = tether("merge-demos", str(tmp_path / "all"), str(tmp_path / "a"),
                    str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert "holds the 4 episodes of 2 parts" in result.output
    merged = LeRobotDataset("tether/all", root=tmp_path / "all")
    assert list(merged.meta.episodes["length"]) == [3, 4, 5, 2]
    ledger = read_ledger(tmp_path / "all")
    assert [(a.init_state, a.episode) for a in ledger] == [
        (0, 0), (1, None), (2, 1), (3, None), (20, 2), (21, None), (22, 3), (23, None)]
    for attempt in ledger:  # each kept attempt's episode is the one its part recorded
        if attempt.episode is not None:
            first = merged.meta.episodes["dataset_from_index"][attempt.episode]
            assert merged[int(first)]["observation.state"][0] == attempt.init_state
    assert (tmp_path / "all" / "meta" / "tether_demos.json").read_text(encoding="utf-8") == (
        tmp_path / "a" / "meta" / "tether_demos.json").read_text(encoding="utf-8")


def test_parts_of_other_recipes_or_overlapping_attempts_do_not_merge(tmp_path):
    recorded_part(tmp_path / "a", 0, [3])
    recorded_part(tmp_path / "b", 20, [3], budget=50)
    recorded_part(tmp_path / "c", 0, [2])
    with pytest.raises(TetherError, match=r"b was recorded with other settings than .*a "
                                          r"\(meta/tether_demos.json differs\)"):
        merge_demos(tmp_path / "out", [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(TetherError, match=rf"{TASK} init state 0 is in both .*a and .*c"):
        merge_demos(tmp_path / "out", [tmp_path / "a", tmp_path / "c"])
    with pytest.raises(TetherError, match=r"notes is not a dataset recorded by `tether collect "
                                          r"--tree` \(no meta/tether_demos.json\)"):
        merge_demos(tmp_path / "out", [tmp_path / "a", tmp_path / "notes"])
    assert not (tmp_path / "out").exists()
    result = tether("merge-demos", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "c"))
    assert result.exit_code == 2 and "exists; give the merged dataset a new folder" in result.output


def test_tree_with_episodes_is_a_clear_error(tmp_path):
    result = tether("collect", TASK, "--tree", "pick_place", "--episodes", "3",
                    "--out", str(tmp_path / "d"))
    assert result.exit_code == 2
    assert "--episodes counts staged grasps; with --tree give --init-states" in result.output
    assert not (tmp_path / "d").exists()


def test_a_tree_option_without_tree_is_a_clear_error(tmp_path):
    result = tether("collect", TASK, "--budget", "50", "--out", str(tmp_path / "d"))
    assert result.exit_code == 2
    assert "--budget applies to whole-task demonstrations; give --tree TREE too" in result.output
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--tree", "pick_plac"], "--tree pick_plac: no such file and no library tree of that "
                              "name (did you mean 'pick_place'?)"),
    (["--tree", "pick_place", "--first-init-state", "45", "--init-states", "10"],
     f"{get_task(TASK).id} has initial states 0..49, not 45..54"),
    (["--tree", "pick_place", "--language", "minilmm"],
     "unknown embedder 'minilmm' (did you mean 'minilm'?)"),
])
def test_mistakes_are_one_error_before_anything_is_written(tmp_path, args, message):
    out = tmp_path / "demos"
    result = tether("collect", TASK, *args, "--out", str(out))
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output and not out.exists()


def test_a_folder_that_is_not_a_dataset_is_refused_as_out(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        collect_demos(DemoConfig(tasks=[TASK], root=tmp_path, cameras=CAMERAS, language=None))
    assert str(caught.value) == (f"{tmp_path} exists and is not a LeRobotDataset; give --out a "
                                 "new folder or one tether recorded")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_resuming_with_other_settings_is_a_clear_error(tmp_path):
    root = tmp_path / "demos"
    (root / "meta").mkdir(parents=True)
    first = DemoConfig(tasks=[TASK], root=root, cameras=CAMERAS, language=None)
    (root / "meta" / "tether_demos.json").write_text(json.dumps(first.recipe()),
                                                     encoding="utf-8")
    with pytest.raises(TetherError, match=r"recorded with other settings \(budget: None\)"):
        collect_demos(DemoConfig(tasks=[TASK], root=root, cameras=CAMERAS, language=None,
                                 budget=50))
    drafts = tuple(replace(c, draft=True) for c in CAMERAS)  # full frames and drafts never mix
    with pytest.raises(TetherError, match=r"recorded with other settings \(cameras: "):
        collect_demos(DemoConfig(tasks=[TASK], root=root, cameras=drafts, language=None))


def test_a_library_tree_is_recorded_by_name_so_another_checkout_resumes(tmp_path):
    own = tmp_path / "mine.yaml"
    assert DemoConfig(tasks=[TASK], root=tmp_path).recipe()["tree"] == "pick_place"
    assert DemoConfig(tasks=[TASK], root=tmp_path, tree=own).recipe()["tree"] == str(own)


def test_reference_is_each_tasks_own_solution_and_recorded_so(tmp_path):
    assert tree_file("reference") is None
    assert DemoConfig(tasks=[TASK], root=tmp_path, tree=None).recipe()["tree"] == "reference"
    with pytest.raises(TetherError, match="did you mean 'reference'"):
        tree_file("referense")


def kept(output: str) -> tuple[int, int, int]:
    match = re.search(r"(\d+) of (\d+) attempts kept \((\d+) made before", output)
    assert match, output
    return int(match[1]), int(match[2]), int(match[3])


@pytest.mark.slow
def test_only_successful_start_pose_episodes_are_kept_and_a_rerun_adds_no_duplicate(tmp_path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = tmp_path / "demos"
    base = ["collect", TASK, "--tree", "pick_place", "--first-init-state", "40", "--size",
            str(SIZE), "--language", "hashing", "--out", str(root)]
    assert kept(tether(*base, "--init-states", "1").output) == (1, 1, 0)
    assert kept(tether(*base, "--init-states", "2").output) == (1, 1, 1)  # only #41 is new
    assert kept(tether(*base, "--init-states", "2").output) == (0, 0, 2)  # nothing left to do
    ledger = read_ledger(root)
    assert [(a.init_state, a.success, a.episode) for a in ledger] == [(40, True, 0),
                                                                       (41, True, 1)]
    dataset = LeRobotDataset(f"tether/{root.name}", root=root)
    assert dataset.num_episodes == 2
    assert list(dataset.meta.episodes["length"]) == [a.steps for a in ledger]
    first = dataset[0]
    assert np.allclose(first[FEATURE].numpy(), Language("hashing").vector(first["task"]))
    assert all(first[f"observation.images.{k}"].std() > 0 for k in ("image", "image2"))
    # from the start pose: the first frame's gripper is where a fresh scene puts it
    from tether.models.observation import libero_state
    from tether.scenes.libero_scene import LiberoScene

    scene = LiberoScene(TASK, init_state=40)
    try:
        assert np.allclose(first["observation.state"].numpy()[:3], libero_state(scene)[:3],
                           atol=1e-3)
    finally:
        scene.close()


@pytest.mark.slow
def test_a_failed_episode_is_recorded_in_the_ledger_and_not_in_the_dataset(tmp_path):
    root = tmp_path / "demos"
    result = tether("collect", TASK, "--tree", "pick_place", "--first-init-state", "40",
                    "--init-states", "1", "--budget", "20", "--size", str(SIZE), "--language",
                    "none", "--out", str(root))
    assert kept(result.output) == (0, 1, 0)
    assert [(a.success, a.steps, a.episode) for a in read_ledger(root)] == [(False, 20, None)]
    info = json.loads((root / "meta" / "info.json").read_text(encoding="utf-8"))
    assert (info["total_episodes"], info["total_frames"]) == (0, 0)


@pytest.mark.slow
def test_a_task_the_tree_cannot_do_is_a_failed_attempt_not_the_end_of_the_recording(tmp_path):
    """libero_goal/0's goal is open(...): nothing binds pick_place's object and target."""
    root = tmp_path / "demos"
    report = collect_demos(DemoConfig(tasks=["libero_goal/0"], root=root, init_states=1,
                                      cameras=CAMERAS, language=None))
    [attempt] = report.attempts
    assert (attempt.success, attempt.steps, attempt.episode) == (False, 0, None)
    assert "missing required parameter 'object' of 'pick_place'" in attempt.errors[0]
    assert report.episodes == 0 and read_ledger(root) == [attempt]



@pytest.mark.slow
def test_reference_records_each_task_through_the_trees_its_goal_needs(tmp_path):
    """libero_goal/0 (open a drawer) and libero_object/3 (a pick and place) in one dataset."""
    root = tmp_path / "demos"
    result = tether("collect", "libero_goal/0", TASK, "--tree", "reference", "--first-init-state",
                    "40", "--init-states", "1", "--size", str(SIZE), "--language", "none",
                    "--out", str(root))
    assert kept(result.output) == (2, 2, 0), result.output
    assert [(a.task, a.success) for a in read_ledger(root)] == [
        (get_task("libero_goal/0").id, True), (get_task(TASK).id, True)]
    recipe = json.loads((root / "meta" / "tether_demos.json").read_text(encoding="utf-8"))
    assert recipe["tree"] == "reference"
