"""Malformed tree files (tests/trees/malformed/*.yaml) each produce their own located error.

Each file's first lines declare what it must produce:

    # scene: kinematic                  (optional: compile with the KinematicScene's names)
    # expect: 7:9: root.sequence[1].move_to.tolerance: expected a number, got 'close'

An expectation starting with a line number is located in the file itself; otherwise it names the
file (relative to malformed/) where the mistake is, e.g. a subtree the file includes. `compile_tree`
must raise a `TreeError` with exactly that one problem, and `tether check FILE` must print it and
exit with code 1, without a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.trees.harness import BOXES, node_file, scene, tree_file
from tether.cli.main import app
from tether.errors import TetherError
from tether.trees.compiler import compile_tree
from tether.trees.source import TreeError

HERE = Path(__file__).parent
MALFORMED = HERE / "malformed"
REPO = HERE.parent.parent
FILES = sorted(MALFORMED.glob("*.yaml"))


def expectation(path: Path) -> tuple[str, bool]:
    """(the located text the file must produce, whether it needs the kinematic scene)."""
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    expects = [line.removeprefix("# expect: ") for line in header if line.startswith("# expect:")]
    assert len(expects) == 1, f"{path.name} must declare one '# expect: ...' line"
    expect = expects[0]
    located = f"{path.name}:{expect}" if re.match(r"\d+:\d+: ", expect) else expect
    return f"tests/trees/malformed/{located}", "# scene: kinematic" in header


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # messages show paths relative to the working directory


def test_there_are_at_least_24_malformed_files():
    assert len(FILES) >= 24


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_malformed_file_raises_its_located_error(path):
    expected, needs_scene = expectation(path)
    resolve = scene().resolve if needs_scene else None
    with pytest.raises(TreeError) as caught:
        compile_tree(path.relative_to(REPO), resolve=resolve)
    assert caught.value.problems == [expected]
    assert isinstance(caught.value, TetherError)


CLI_FILES = [p for p in FILES if not expectation(p)[1]]  # `check` without --task knows no objects


@pytest.mark.parametrize("path", CLI_FILES, ids=[p.stem for p in CLI_FILES])
def test_tether_check_prints_the_error_and_exits_1_without_a_traceback(path):
    expected, _ = expectation(path)
    result = CliRunner().invoke(app, ["check", str(path.relative_to(REPO))],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # not an exception escaping the command
    assert "Traceback" not in result.output
    assert " ".join(expected.split()) in " ".join(result.output.split())


def test_tether_check_reports_every_file_and_fails_if_any_has_errors():
    good = "tests/trees/malformed/parts/approach.yaml"  # a well-formed subtree
    bad = "tests/trees/malformed/07_unknown_node_type.yaml"
    result = CliRunner().invoke(app, ["check", good, bad], env={"COLUMNS": "300"})
    assert result.exit_code == 1
    assert "✓ tests/trees/malformed/parts/approach.yaml" in result.output
    assert "did you mean 'sequence'?" in result.output


# --- problems not tied to one malformed file ---------------------------------------------------
def test_every_problem_in_a_file_is_reported_not_just_the_first(tmp_path):
    path = node_file(tmp_path, """
        sequence:
          - wait: -1
          - rotate: {yaw: big}
          - set_gripper: half
        """)
    with pytest.raises(TreeError) as caught:
        compile_tree(path)
    assert [p.split(": ", 1)[0].rsplit(":", 2)[1:] for p in caught.value.problems] == [
        ["3", "7"], ["4", "16"], ["5", "7"]]


def test_an_unknown_subtree_suggests_the_closest_file_next_to_it(tmp_path):
    tree_file(tmp_path, "root: {wait: 1}", "approach.yaml")
    with pytest.raises(TreeError, match=r"no tree file 'aproach' .* \(did you mean 'approach'\?\)"):
        compile_tree(node_file(tmp_path, "subtree: aproach"))


def test_an_ambiguous_object_name_lists_the_candidates(tmp_path):
    boxes = {**BOXES, "akita_black_bowl_2": ([0.0, 0.2, 0.02], [0.02, 0.02, 0.02])}
    from tether.scenes.kinematic import KinematicScene

    robot = KinematicScene(boxes)
    with pytest.raises(TreeError, match="'bowl' is ambiguous: it could be akita_black_bowl_1, "
                                        "akita_black_bowl_2"):
        compile_tree(node_file(tmp_path, "move_to: {object: bowl}"), resolve=robot.resolve)


def test_an_unknown_object_bound_to_a_param_is_located_at_its_binding(tmp_path):
    tree_file(tmp_path, "params: {object: entity}\nroot: {move_to: {object: '{object}'}}",
              "reach.yaml")
    path = node_file(tmp_path, "subtree: reach\nwith: {object: saucer}")
    with pytest.raises(TreeError) as caught:
        compile_tree(path, resolve=scene().resolve)
    assert caught.value.problems == [
        f"{path}:3:10: root.with.object: parameter 'object' of 'reach': no entity 'saucer' in "
        "this scene"]


def test_a_given_binding_the_tree_does_not_declare_is_an_error(tmp_path):
    path = tree_file(tmp_path, "params: {height: float}\nroot: {wait: 1}")
    with pytest.raises(TreeError, match="'tree' has no parameter 'hieght' \\(did you mean "
                                        "'height'\\?\\); its parameters: height"):
        compile_tree(path, {"hieght": 0.1, "height": 0.1})


def test_a_missing_tree_file_is_a_user_error(tmp_path):
    with pytest.raises(TreeError, match="no such tree file"):
        compile_tree(tmp_path / "nope.yaml")


def test_an_empty_tree_file_says_so(tmp_path):
    with pytest.raises(TreeError, match="1:1: a tree file is a mapping with a 'root:' node; "
                                        "this one is empty"):
        compile_tree(tree_file(tmp_path, ""))
