"""docs/trees.md is the language reference: it has a section for every node type, documents
every parameter, predicate and error code, and every `yaml` example in it compiles (against the
KinematicScene of tests/trees/harness.py, whose bowl and plate the examples name; subtree examples
use trees/library). Its node tables are what `tether.trees.reference` generates from the node
registry."""

from __future__ import annotations

import re
from pathlib import Path

import py_trees
import pytest

from tests.trees.harness import BOWL, node_file, scene, tree_file
from tether.blackboard.episode import ERROR_CODES
from tether.scenes.predicates import PREDICATES
from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file
from tether.trees.nodes import ALL_NODE_NAMES, NODE_TYPES
from tether.trees.reference import FIX, documented, marked, rewrite
from tether.trees.source import TreeError

REPO = Path(__file__).parents[2]
DOC = (REPO / "docs" / "trees.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
STAND_INS = {"entity": BOWL, "int": 2, "float": 0.1, "bool": False, "str": "x",
             "vec3": [0.0, 0.0, 0.0]}


def blocks(text: str, lang: str) -> list[tuple[int, str]]:
    """(line number, body) of each fenced block of `lang` in `text`."""
    return [(text[:m.start()].count("\n") + 1, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1) == lang]


def sections() -> dict[str, str]:
    """The text of each `### name` section (up to the next heading)."""
    parts = re.split(r"^(#{2,3} .*)$", DOC, flags=re.M)
    return {head[4:].strip(): body for head, body in zip(parts[1::2], parts[2::2], strict=True)
            if head.startswith("### ")}


def compile_example(folder: Path, text: str) -> py_trees.behaviour.Behaviour:
    """Compile a doc example: a whole tree file (with `root:`) or one node."""
    robot = scene()
    if re.search(r"^root:", text, re.M):
        path = tree_file(folder, text)
        tf = read_tree_file(path)
        given = goal_bindings(tf, robot.goal())
        for p in tf.params.values():
            if p.required and p.name not in given:
                given[p.name] = STAND_INS[p.type.name]
    else:
        path, given = node_file(folder, text), {}
    return compile_tree(path, given, resolve=robot.resolve).root


EXAMPLES = blocks(DOC, "yaml")


def test_there_is_a_section_for_every_node_type_and_no_other():
    assert sorted(sections()) == ALL_NODE_NAMES


def test_node_tables_are_generated_from_the_registry():
    assert DOC == rewrite(DOC), f"docs/trees.md's node tables differ from the registry: run `{FIX}`"


def test_every_node_type_with_parameters_has_its_table_in_its_section():
    want = sorted(name for name, nt in NODE_TYPES.items() if documented(nt))
    assert sorted(marked(DOC)) == want, (
        "add `<!-- params: NAME -->` and `<!-- /params -->` to the node's section, then run "
        f"`{FIX}`")
    assert [n for n in want if f"<!-- params: {n} -->" not in sections()[n]] == []


def test_every_parameter_of_a_node_type_has_a_doc():
    assert [f"{name}.{param}" for name, nt in NODE_TYPES.items()
            for param, spec in nt.params.items() if not spec.doc] == []


def test_the_scalar_shorthand_table_names_every_primary_parameter():
    table = DOC.split("**Scalar shorthand.**", 1)[1].split("\n\n")[1]
    rows = [re.findall(r"`(\w+)`", line)[:2] for line in table.splitlines()[2:]]
    assert dict(rows) == {name: nt.primary for name, nt in NODE_TYPES.items() if nt.primary}


@pytest.mark.parametrize("line,text", EXAMPLES, ids=[f"line{n}" for n, _ in EXAMPLES])
def test_yaml_example_compiles(tmp_path, line, text):
    compile_example(tmp_path, text)


@pytest.mark.parametrize("name", ALL_NODE_NAMES)
def test_node_section_has_an_example_of_that_node_type(tmp_path, name):
    examples = blocks(sections()[name], "yaml")
    assert examples, f"### {name} has no yaml example"
    types = {n.node_type for _, text in examples
             for n in compile_example(tmp_path, text).iterate()}
    assert name in types


@pytest.mark.parametrize("name", sorted(NODE_TYPES))
def test_node_section_documents_every_parameter(name):
    body = sections()[name]
    missing = [p for p in NODE_TYPES[name].params if f"`{p}`" not in body]
    assert not missing, f"### {name} does not mention {missing}"


def test_every_predicate_is_documented_with_its_arguments():
    for pred in PREDICATES.values():
        row = next((line for line in DOC.splitlines() if line.startswith(f"| `{pred.name}` |")),
                   None)
        assert row, f"predicate {pred.name} is not in the table"
        assert all(f"`{p.name}`" in row for p in pred.params), row


def test_every_error_code_is_documented():
    assert [c for c in ERROR_CODES if f"| `{c}` |" not in DOC] == []


def test_the_error_format_example_is_what_the_compiler_says(monkeypatch):
    monkeypatch.chdir(REPO)
    shown = [line for _, text in blocks(DOC, "text") for line in text.splitlines()
             if line.startswith("tests/trees/malformed/")]
    assert shown
    for line in shown:
        path = line.split(":", 1)[0]
        with pytest.raises(TreeError) as caught:
            compile_tree(path)
        assert caught.value.problems == [line]
