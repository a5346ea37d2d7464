"""The `tether` command: help texts, the version, the error boundary's exit codes, and no
traceback for user mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tether
from tether.cli.main import app
from tether.trees.compiler import LIBRARY

runner = CliRunner()
VERBS = ["run", "check", "tasks", "doctor", "view", "export", "render", "memory", "scenes", "bench",
         "plan", "do", "collect", "train", "serve-policy", "convert", "collect-perception",
         "train-perception"]
GROUP_VERBS = ["memory list", "memory search", "memory show", "memory stats", "memory export",
               "memory import", "memory rebuild-index", "scenes list", "scenes show"]


def test_help_lists_every_verb():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for verb in VERBS:
        assert verb in result.output


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("verb", ["", *VERBS, *GROUP_VERBS])
def test_the_app_each_group_and_each_verb_have_help(verb: str, flag: str):
    result = runner.invoke(app, [*verb.split(), flag])
    assert result.exit_code == 0, result.output
    assert f"Usage: tether {verb}".rstrip() in result.output


def test_version_is_the_package_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"tether {tether.__version__}\n"


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_with_a_base_url_takes_an_api_key(verb: str):
    shown = runner.invoke(app, [verb, "--help"], terminal_width=200).output
    assert ("--base-url" in shown) == ("--api-key" in shown)


def test_a_tether_error_is_one_plain_error_line_and_exit_2():
    # `[/nope]` would be a closing tag to rich markup (which made this a MarkupError traceback)
    result = runner.invoke(app, ["run", str(LIBRARY / "pick_place.yaml"), "--task",
                                 "libero_goal/[/nope]"])
    assert result.exit_code == 2
    assert result.stderr == ("error: suite 'libero_goal' has no task '[/nope]'; `tether scenes "
                             "list` lists them\n")


def test_ctrl_c_is_one_interrupted_line_and_exit_130(monkeypatch):
    def interrupted(suites):
        raise KeyboardInterrupt

    monkeypatch.setattr("tether.scenes.catalogue.list_tasks", interrupted)
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 130
    assert result.stderr == "interrupted\n"


def test_verbose_and_quiet_together_are_a_usage_error():
    result = runner.invoke(app, ["-v", "-q", "tasks"])
    assert result.exit_code == 2
    assert "-v/--verbose and -q/--quiet exclude each other" in result.stderr


def test_check_passes_on_every_library_tree():
    result = runner.invoke(app, ["check", *map(str, sorted(LIBRARY.glob("*.yaml")))])
    assert result.exit_code == 0, result.output
    assert "✓" in result.output


def test_run_unknown_task_is_a_usage_error_without_traceback():
    result = runner.invoke(app, ["run", str(LIBRARY / "pick_place.yaml"), "--task",
                                 "libero_goal/put_the_bowl_on_the_plat"])
    assert result.exit_code == 2
    assert "did you mean 'put_the_bowl_on_the_plate'" in result.output
    assert "Traceback" not in result.output


def test_run_missing_tree_file_is_a_usage_error(tmp_path: Path):
    result = runner.invoke(app, ["run", str(tmp_path / "nope.yaml"), "--task", "libero_goal/8"])
    assert result.exit_code == 2
    assert "no such tree file" in result.output


def test_run_without_task_is_a_usage_error():
    result = runner.invoke(app, ["run", str(LIBRARY / "pick_place.yaml")])
    assert result.exit_code == 2


def test_tasks_lists_libero_spatial():
    result = runner.invoke(app, ["tasks", "libero_spatial"])
    assert result.exit_code == 0
    assert result.output.count("libero_spatial/") == 10


@pytest.mark.slow
def test_run_unknown_object_names_the_alias_problem(tmp_path: Path):
    result = runner.invoke(app, ["run", str(LIBRARY / "pick_place.yaml"), "--task",
                                 "libero_goal/8", "--with", "object=purple elephant",
                                 "--runs", str(tmp_path)])
    assert result.exit_code == 2
    assert "purple elephant" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_run_exit_code_is_1_when_the_task_fails(tmp_path: Path):
    tree = tmp_path / "idle.yaml"
    tree.write_text("root:\n  wait: 3\n")
    result = runner.invoke(app, ["run", str(tree), "--task", "libero_goal/8", "--lines",
                                 "--runs", str(tmp_path)])
    assert result.exit_code == 1, result.output
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    record = json.loads((run_dir / "result.json").read_text())
    assert record["result"]["success"] is False
    assert record["result"]["tree_status"] == "SUCCESS"  # the tree finished; the task did not
    assert record["result"]["steps"] == 3
