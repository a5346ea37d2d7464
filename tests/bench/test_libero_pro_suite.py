"""The libero_pro suite: sets and globs as tasks, step caps as budgets, planning arms, declared
arms that cannot run yet, and its report (sets, Wilson intervals, published numbers, causes)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tether.bench.report import summarize, write_markdown
from tether.bench.suite import Arm, load_suite
from tether.errors import TetherError
from tether.scenes.catalogue import suite_tasks
from tether.scenes.libero_pro import installed
from tether.session.session import DEFAULT_BUDGET, Session, SessionConfig
from tether.trees.source import TreeError

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not installed(), reason="LIBERO-PRO's wheel is not unpacked "
                                "(make install)")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_suite_is_every_official_set_with_two_init_states_and_step_caps():
    suite = load_suite("libero_pro", ROOT)
    sets = list(dict.fromkeys(t.partition("/")[0] for t in suite.tasks))
    assert sets[:4] == ["libero_spatial_swap", "libero_object_swap", "libero_goal_swap",
                        "libero_10_swap"]
    assert len(sets) == 25 and len(suite.tasks) == 250
    assert suite.seeds == (0, 1) and suite.budget is None
    assert [a.name for a in suite.arms] == ["planned", "planned_camera", "harness", "bare",
                                            "harness_goal", "bare_goal", "harness_spatial",
                                            "bare_spatial"]
    assert suite.skipped == {}
    episodes = suite.episodes()
    # the planned arms run every task; harness and bare drive the baseline trained on
    # libero_object, so only its 6 sets (4 variants, 2 environment sets) run; harness_goal and
    # bare_goal libero_goal's 7 (4 variants, 3 environment sets), harness_spatial and
    # bare_spatial libero_spatial's 7 (4 variants, 3 environment sets)
    assert len(episodes) == 2 * 250 * 2 + 2 * 60 * 2 + 2 * 70 * 2 + 2 * 70 * 2
    for arm, suite_name, policy in (("bare", "libero_object", "object_act"),
                                    ("bare_goal", "libero_goal", "goal_act"),
                                    ("bare_spatial", "libero_spatial", "spatial_act")):
        assert {e.task.partition("/")[0] for e in episodes if e.arm.name == arm} == {
            s for s in sets if s.startswith(suite_name + "_")}
        assert {e.arm.given["policy"] for e in episodes if e.arm.name == arm} == {policy}
    assert {e.arm.grasp["policy"] for e in episodes if e.arm.name == "harness"} == {"object_act"}
    assert {e.arm.grasp["policy"] for e in episodes
            if e.arm.name == "harness_goal"} == {"goal_act"}
    assert {e.arm.grasp["policy"] for e in episodes
            if e.arm.name == "harness_spatial"} == {"spatial_act"}
    assert {e.arm.perception for e in episodes if e.arm.name == "planned_camera"} == {"camera"}
    budgets = {(e.task.partition("/")[0], e.budget) for e in episodes}
    assert ("libero_goal_swap", 300) in budgets and ("libero_spatial_task", 220) in budgets
    assert ("libero_object_lan", 280) in budgets and ("libero_10_with_mug", 520) in budgets
    assert len({s for s, _ in budgets}) == len(budgets)  # one budget per set
    planned = suite.arms[0]
    assert (planned.plan, planned.tree, planned.perception) == ("memory", "", "privileged")
    assert [p.rate for p in suite.published] == [82.4, 50.0, 62.0, 2.3, 57.2]


def test_set_names_and_globs_expand_to_their_tasks_in_order(tmp_path):
    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal_swap, libero_*_lan, "libero_goal/put_the_*", libero_goal_swap/3]
arms: {planned: {plan: memory}}
"""), tmp_path)
    swap = [t.id for t in suite_tasks("libero_goal_swap")]
    lan = [t.id for s in ("libero_spatial_lan", "libero_object_lan", "libero_goal_lan",
                          "libero_10_lan") for t in suite_tasks(s)]
    goal = [t.id for t in suite_tasks("libero_goal") if t.name.startswith("put_the_")]
    assert len(goal) == 6
    assert list(suite.tasks) == swap + lan + goal  # libero_goal_swap/3 is there once already


def test_unknown_sets_and_empty_globs_are_located_errors(tmp_path):
    with pytest.raises(TreeError) as err:
        load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal_swp, libero_*_nothing, libero_goal/zzz_*]
arms: {planned: {plan: memory}}
"""), tmp_path)
    text = str(err.value)
    assert "suite.yaml:3:9: tasks[0]: " in text and "did you mean 'libero_goal_swap'" in text
    assert "tasks[1]: no suite or set matches 'libero_*_nothing'" in text
    assert "tasks[2]: no task of 'libero_goal' matches 'zzz_*'" in text


def test_budget_is_the_arm_s_else_the_suite_s_else_the_task_cap(tmp_path):
    text = """
suite: t
tasks: [libero_goal_swap/8, libero_spatial/0, tether/chain_bowl_ramekin_cream_cheese]
arms:
  planned: {plan: memory}
  short: {plan: memory, budget: 40}
"""
    suite = load_suite(write(tmp_path, text), tmp_path)
    assert [(e.arm.name, e.budget) for e in suite.episodes()] == [
        ("planned", 300), ("planned", 220), ("planned", DEFAULT_BUDGET),
        ("short", 40), ("short", 40), ("short", 40)]
    suite = load_suite(write(tmp_path, "budget: 500\n" + text), tmp_path)
    assert [e.budget for e in suite.episodes()] == [500, 500, 500, 40, 40, 40]


def test_a_session_with_budget_none_runs_to_the_task_s_step_cap():
    def budget(task: str, steps: int | None) -> int:
        return Session(SessionConfig(task=task, budget=steps), name="t").budget

    assert budget("libero_goal_swap/8", None) == 300
    assert budget("libero_spatial/0", None) == 220
    assert budget("tether/chain_bowl_ramekin_cream_cheese", None) == DEFAULT_BUDGET
    assert budget("libero_goal/8", 40) == 40
    assert Session(SessionConfig(task="libero_goal/8"), name="t").budget == DEFAULT_BUDGET


@pytest.mark.slow
def test_tether_run_without_budget_stops_at_the_set_s_step_cap(tmp_path):
    from typer.testing import CliRunner

    from tether.cli.main import app

    tree = tmp_path / "idle.yaml"
    tree.write_text("root:\n  wait: 1000\n")
    result = CliRunner().invoke(app, ["run", str(tree), "--task", "libero_goal_swap/8",
                                      "--lines", "--no-record", "--memory", "none",
                                      "--runs", str(tmp_path / "runs")])
    assert result.exit_code == 1, result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    record = json.loads((run_dir / "result.json").read_text())
    assert (record["result"]["steps"], record["result"]["ended_by"]) == (300, "budget")


def test_arm_mistakes_are_located(tmp_path):
    with pytest.raises(TreeError) as err:
        load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal_swap/8]
arms:
  both: {plan: memory, tree: pick_place}
  planner: {plan: memroy}
  camera: {plan: memory, perception: camera}
  eyes: {plan: memory, perception: eyes}
"""), tmp_path)
    text = str(err.value)
    assert "arms.both: expected exactly one of 'tree'" in text
    assert "arms.planner.plan: unknown planner 'memroy'" in text and "'memory'" in text
    assert "arms.camera" not in text  # camera perception runs
    assert "arms.eyes.perception: expected one of privileged, camera, got 'eyes'" in text


def test_select_keeps_matching_tasks_and_named_arms():
    suite = load_suite("libero_pro", ROOT).select(
        ["libero_goal_swap", "libero_spatial_t*"], ["planned", "bare"])
    assert {t.partition("/")[0] for t in suite.tasks} == {"libero_goal_swap",
                                                          "libero_spatial_task"}
    assert suite.skipped == {
        "planned_camera": "arm 'planned_camera' not selected (--arms)",
        "harness": "arm 'harness' not selected (--arms)",
        "harness_goal": "arm 'harness_goal' not selected (--arms)",
        "bare_goal": "arm 'bare_goal' not selected (--arms)",
        "harness_spatial": "arm 'harness_spatial' not selected (--arms)",
        "bare_spatial": "arm 'bare_spatial' not selected (--arms)"}
    assert len(suite.episodes()) == 20 * 2  # bare runs libero_object's sets only
    with pytest.raises(TetherError, match=r"no arm 'planed' \(did you mean 'planned'\?\)"):
        load_suite("libero_pro", ROOT).select(None, ["planed"])
    with pytest.raises(TetherError, match="--tasks libero_zz matches none"):
        load_suite("libero_pro", ROOT).select(["libero_zz"])


def row(arm: str, task: str, seed: int, success: bool, codes: list[str],
        status: str | None = None) -> dict:
    return {"key": f"{arm}|{task}|none|s{seed}", "arm": arm, "task": task,
            "perturbation": "none", "seed": seed, "success": success,
            "status": status or ("passed" if success else "failed"), "error_codes": codes,
            "error": "boom" if status == "error" else None, "tree_status": "FAILURE",
            "ended_by": "budget", "trace": None}


def test_report_gives_wilson_intervals_per_set_published_numbers_and_not_run_arms(tmp_path):
    rows = ([row("planned", f"libero_goal_swap/{i % 10}", i // 10, i < 17,
                 ["EMPTY_GRASP"] if i in (17, 18) else []) for i in range(20)]
            + [row("planned", f"libero_goal_task/{i}", 0, i < 3,
                   ["EMPTY_GRASP", "OBJECT_NOT_FOUND"] if i < 9 else [],
                   "error" if i == 9 else None) for i in range(10)])
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    summary = summarize(rows, "libero_pro")
    swap, task = summary["sets"]["planned|libero_goal_swap"], summary["sets"][
        "planned|libero_goal_task"]
    assert (swap["successes"], swap["episodes"], swap["ci95"]) == (17, 20, [0.6396, 0.9476])
    assert (task["successes"], task["episodes"], task["ci95"]) == (3, 10, [0.1078, 0.6032])
    assert summary["failures"]["planned|libero_goal_swap"]["causes"] == {
        "EMPTY_GRASP": 2, "no code, ended by budget": 1}
    assert summary["failures"]["planned|libero_goal_task"]["causes"] == {
        "OBJECT_NOT_FOUND": 6, "EPISODE_ERROR": 1}
    spec = load_suite("libero_pro", ROOT)
    waiting = Arm("pi05", "vla_task", needs="a GPU machine serving pi0.5")
    spec = replace(spec, arms=(*spec.arms, waiting))
    write_markdown(summary, rows, tmp_path / "summary.md", spec)
    text = (tmp_path / "summary.md").read_text()
    assert "| planned | planned by `memory` | privileged (simulator poses) | 20/30 = 67%" in text
    assert ("| planned_camera | planned by `memory` | camera (perception models on RGB-D) | "
            "not run in this run |") in text
    assert ("| harness | planned by `memory`, grasps by `object_act` | privileged (simulator "
            "poses) | not run in this run |") in text
    assert "| bare | `vla_task` | privileged (simulator poses) | not run in this run |" in text
    assert "| pi05 | `vla_task` | privileged (simulator poses) | not run (needs a GPU machine " \
        "serving pi0.5) |" in text
    assert "| libero_goal_swap | 17/20 = 85% (64%–95%) |" in text
    assert "| libero_goal_task | 3/10 = 30% (11%–60%) |" in text
    assert ("| Harness VLA (Claude Code planner, frozen RLinf pi0.5-SFT) | LIBERO-Pro task (T) "
            "and swap (S) cells of spatial, object, goal, libero_10: 8 cells, 100 trials each | "
            "82.4% | Harness VLA paper, Table 3 (LIBERO-Pro) |") in text
    assert "| 57.2% | SOMA paper, Table II (LIBERO-PRO, pi0.5) |" in text
    assert "| planned | libero_goal_task | 7 | OBJECT_NOT_FOUND ×6, EPISODE_ERROR ×1 |" in text


@pytest.mark.slow
def test_a_planned_arm_episode_runs_end_to_end_on_a_libero_pro_task(tmp_path):
    """The planned arm plans the set's instruction in the episode's scene and runs the tree
    through the bench runner: 40 steps, ended by the budget, its plan kept."""
    from tether.bench.runner import run_episode

    suite = load_suite(write(tmp_path, """
suite: t
tasks: [libero_goal_swap/8]
seeds: [1]
arms: {planned: {plan: memory, budget: 40}}
"""), tmp_path)
    (episode,) = suite.episodes()
    result = run_episode(episode, str(tmp_path / "out"), reuse=False)
    assert (result["tree"], result["task"], result["seed"], result["budget"]) == (
        "planned by memory", "libero_goal_swap/put_the_bowl_on_the_plate", 1, 40)
    assert (result["status"], result["steps"], result["ended_by"]) == ("failed", 40, "budget")
    assert result["instruction"] == "put the bowl on the plate"
    run_dir = tmp_path / "out" / result["trace"]
    plan = json.loads((run_dir / "plan.json").read_text())
    assert plan["instruction"] == "put the bowl on the plate"
    assert [s["goal"] for s in plan["subtasks"]] == ["on(akita_black_bowl_1, plate_1)"]
    record = json.loads((run_dir / "result.json").read_text())
    assert (record["init_state"], record["result"]["steps"]) == (1, 40)
