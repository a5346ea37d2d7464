"""Suite files: shipped suites load, and every mistake is reported at once with its location."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tether.bench.suite import SUITES_DIR, load_suite, resolve_suite
from tether.errors import TetherError
from tether.trees.compiler import LIBRARY
from tether.trees.source import TreeError

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_suites_load():
    names = sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))
    assert {"smoke", "perturbed", "long_horizon", "learning"} <= set(names)
    for name in names:
        suite = load_suite(name, ROOT)
        assert suite.episodes() or suite.skipped


def test_shipped_suites_name_library_trees_so_they_load_from_any_directory(tmp_path):
    suite = load_suite("perturbed", tmp_path)
    assert {a.name: a.file for a in suite.arms} == {
        name: LIBRARY / f"{tree}.yaml" for name, tree in [
            ("analytic", "pick_place"), ("memory", "recall_pick_place"),
            ("harness", "vla_pick_place"), ("bare", "vla_bare"),
            ("analytic_camera", "pick_place"), ("harness_camera", "vla_pick_place")]}
    assert {a.name for a in suite.arms if a.perception == "camera"} == {"analytic_camera",
                                                                       "harness_camera"}
    assert suite.skipped == {}
    assert load_suite("long_horizon", tmp_path).skipped == {
        "planned": "arm 'planned' skipped: chain_pick_place does not exist yet"}


def test_an_arm_tree_is_a_path_from_the_root_or_a_library_name(tmp_path):
    (tmp_path / "mine.yaml").write_text("root: {wait: 1}\n", encoding="utf-8")
    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate]
arms:
  path: {tree: mine.yaml}
  library: {tree: grasp}
"""), tmp_path)
    assert {a.name: (a.tree, a.file) for a in suite.arms} == {
        "path": ("mine.yaml", tmp_path / "mine.yaml"), "library": ("grasp", LIBRARY / "grasp.yaml")}


def test_smoke_is_small_and_perturbed():
    episodes = load_suite("smoke", ROOT).episodes()
    assert 3 <= len(episodes) <= 4
    assert any(ep.perturb for ep in episodes)


def test_episodes_are_the_product_in_a_fixed_order(tmp_path):
    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate, libero_spatial/0]
seeds: [3, 4]
perturbations: {none: [], noisy: [pose_noise]}
arms:
  a: {tree: trees/library/pick_place.yaml}
  b: {tree: trees/library/pick_place.yaml, memory: persistent, budget: 50}
"""), ROOT)
    eps = suite.episodes()
    assert len(eps) == 2 * 2 * 2 * 2
    assert eps[0].key == "a|libero_goal/put_the_bowl_on_the_plate|none|s3"
    assert eps[-1].key.startswith("b|libero_spatial/")
    assert {ep.budget for ep in eps if ep.arm.name == "b"} == {50}


def test_an_arm_runs_only_the_tasks_its_globs_name(tmp_path):
    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate, libero_object_swap/0, libero_object/1]
arms:
  every: {tree: pick_place}
  object_only: {tree: vla_task, with: {policy: p}, tasks: ['libero_object*']}
"""), ROOT)
    runs = {}
    for ep in suite.episodes():
        runs.setdefault(ep.arm.name, []).append(ep.task.partition("/")[0])
    assert runs == {"every": ["libero_goal", "libero_object_swap", "libero_object"],
                    "object_only": ["libero_object_swap", "libero_object"]}
    narrowed = suite.select(tasks=["libero_goal"])
    assert [ep.arm.name for ep in narrowed.episodes()] == ["every"]


def test_until_goal_reaches_every_episode_and_is_checked(tmp_path):
    text = "suite: t\ntasks: [libero_goal/0]\narms: {a: {tree: pick_place}}\n"
    assert not any(ep.until_goal for ep in load_suite(write(tmp_path, text), ROOT).episodes())
    suite = load_suite(write(tmp_path, text + "until_goal: true\n"), ROOT)
    assert [ep.until_goal for ep in suite.episodes()] == [True]
    with pytest.raises(TreeError, match=r"suite.yaml:4:1: until_goal: expected true or false, "
                                        r"got 'yes please'"):
        load_suite(write(tmp_path, text + "until_goal: yes please\n"), ROOT)


def test_an_arm_tasks_glob_that_matches_nothing_is_located(tmp_path):
    path = write(tmp_path, """suite: t
tasks: [libero_goal/0]
arms:
  a: {tree: pick_place, tasks: [libero_objet_*]}
  b: {tree: pick_place, tasks: libero_goal}
""")
    with pytest.raises(TreeError) as info:
        load_suite(path, ROOT)
    text = "\n".join(info.value.problems)
    assert "suite.yaml:4:25: arms.a.tasks: matches none of the suite's 1 tasks" in text
    assert "suite.yaml:5:25: arms.b.tasks: expected a list of task globs" in text


def test_every_mistake_is_located(tmp_path):
    path = write(tmp_path, """suite: bad
tasks: [libero_goal/no_such_task]
seeds: -1
perturbations:
  p: [no_such_kind]
arms:
  a: {tree: trees/library/nope.yaml, memory: sometimes, withh: {}}
budgett: 5
headline: {arm: a, baseline: bare}
""")
    with pytest.raises(TreeError) as info:
        load_suite(path, ROOT)
    problems = info.value.problems
    text = "\n".join(problems)
    assert "suite.yaml:8:1: budgett: unknown key; did you mean 'budget'?" in text
    assert "suite.yaml:2:9: tasks[0]: suite 'libero_goal' has no task" in text
    assert "suite.yaml:3:1: seeds: expected a positive integer, got -1" in text
    assert "suite.yaml:5:7: perturbations.p[0]: unknown perturbation" in text
    assert "suite.yaml:7:38: arms.a.memory: expected one of none, fresh, persistent" in text
    assert "arms.a.withh: unknown key; did you mean 'with'?" in text
    assert "arms.a.tree: no tree file trees/library/nope.yaml" in text
    assert "headline.baseline: no arm 'bare' (arms: a)" in text


def test_perturbed_leads_with_harness_against_the_bare_policy():
    assert load_suite("perturbed", ROOT).headline == ("harness", "bare")


def test_an_arm_whose_pieces_are_missing_is_skipped(tmp_path):
    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate]
arms:
  later: {tree: trees/library/not_yet.yaml, requires: [models/checkpoints/not_yet]}
  now: {tree: trees/library/pick_place.yaml}
"""), ROOT)
    assert "models/checkpoints/not_yet does not exist yet" in suite.skipped["later"]
    assert {ep.arm.name for ep in suite.episodes()} == {"now"}


def test_unknown_suite_name_suggests():
    with pytest.raises(TetherError, match="did you mean 'smoke'"):
        resolve_suite("smok")


def test_numbers_that_are_not_finite_are_located(tmp_path):
    path = write(tmp_path, """suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate]
timeout: .inf
perturbations:
  noisy: [pose_noise:sigma=nan]
arms:
  a:
    tree: trees/library/pick_place.yaml
    with: {height: 0.1, offset: [0, 1e999, 0]}
""")
    with pytest.raises(TreeError) as info:
        load_suite(path, ROOT)
    assert [p.removeprefix(f"{tmp_path}/") for p in info.value.problems] == [
        "suite.yaml:3:1: timeout: expected a positive integer, got inf",
        "suite.yaml:5:11: perturbations.noisy[0]: perturbation 'pose_noise': sigma must be a "
        "finite number, got nan",
        "suite.yaml:9:37: arms.a.with.offset[1]: must be a finite number, got inf",
    ]


def test_a_suites_policies_reach_every_episode_on_the_device(tmp_path):
    checkpoint = ROOT / "models" / "checkpoints" / "grasp_act"
    suite = load_suite(write(tmp_path, f"""
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate]
seeds: 2
policies:
  local: {checkpoint}
  served: {{type: openpi, host: gpu-box, port: 8000}}
arms:
  bare: {{tree: vla_bare, with: {{policy: local}}}}
"""), tmp_path, device="cuda")
    from tether.models.lerobot_policy import LerobotConfig
    from tether.models.remote import OpenpiConfig

    expected = {"local": LerobotConfig(path=str(checkpoint), device="cuda"),
                "served": OpenpiConfig(host="gpu-box", port=8000)}
    assert suite.policies == expected
    assert [(ep.policies, ep.gpus) for ep in suite.episodes()] == [(expected, 1)] * 2


def test_a_bad_policy_in_a_suite_is_located(tmp_path):
    path = write(tmp_path, """
suite: t
tasks: [libero_goal/put_the_bowl_on_the_plate]
policies:
  expert: ws://h:1
  fine: ws://h:2
  odd: ws://h:3/x
arms:
  a: {tree: grasp}
""")
    with pytest.raises(TreeError) as caught:
        load_suite(path, tmp_path)
    assert caught.value.problems == [
        f"{path}:5:3: policies.expert: a policy of that name exists already",
        f"{path}:7:3: policies.odd: expected an openpi server as ws://HOST:PORT, got "
        "'ws://h:3/x'"]


def test_a_planning_arm_hands_its_grasps_to_a_policy_and_a_wrong_grasp_is_located(tmp_path):
    path = write(tmp_path, """suite: t
tasks: [libero_goal/0]
arms:
  harness: {plan: memory, grasp: {policy: goal_act, unstaged: 70, approach: 0}}
""")
    [ep] = load_suite(path, ROOT).episodes()
    assert ep.arm.grasp == {"policy": "goal_act", "unstaged": 70, "approach": 0}
    assert type(ep.arm.grasp["approach"]) is int  # not ruamel's ScalarInt: plans are dumped
    assert yaml.safe_load(yaml.safe_dump(ep.arm.grasp)) == ep.arm.grasp
    path = write(tmp_path, """suite: t
tasks: [libero_goal/0]
arms:
  a: {tree: pick_place, grasp: {policy: goal_act}}
  b: {plan: memory, grasp: goal_act}
  c: {plan: memory, grasp: {policy: goal_act, unstaged: .inf}}
""")
    with pytest.raises(TreeError) as info:
        load_suite(path, ROOT)
    text = "\n".join(info.value.problems)
    assert "suite.yaml:4:25: arms.a.grasp: only a planning arm ('plan') has grasps" in text
    assert "suite.yaml:5:21: arms.b.grasp: expected {policy: NAME, unstaged: STEPS}" in text
    assert "suite.yaml:6:47: arms.c.grasp.unstaged: must be a finite number, got inf" in text
