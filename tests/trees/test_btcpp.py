"""BehaviorTree.CPP XML: round trips of the library and of plans, imports shaped like BT.CPP's
examples, and a located error for every construct without a counterpart."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import py_trees
import pytest
from typer.testing import CliRunner

from tests.planning.test_planner_offline import FACTS, PARTS
from tether.cli.main import app
from tether.planning.compile import plan_document
from tether.planning.offline import MemoryPlanner
from tether.planning.request import PlanRequest
from tether.replay.recorder import describe
from tether.trees.btcpp import (
    attr_text,
    attr_value,
    convert,
    document_to_xml,
    tree_to_xml,
    xml_to_documents,
)
from tether.trees.compiler import LIBRARY, compile_document, compile_tree
from tether.trees.nodes import NODE_TYPES
from tether.trees.source import TreeError

FIXTURES = Path(__file__).parent / "btcpp"
LIBRARY_TREES = sorted(LIBRARY.glob("*.yaml"))
INSTRUCTIONS = ["put the bowl closest to the robot on the plate",
                "put the ramekin in the middle bowl, then the right bowl into the basket",
                "put the middle bowl in the bottom drawer of the cabinet and close it",
                "open the top drawer of the cabinet"]


def shape(node: py_trees.behaviour.Behaviour) -> dict[str, Any]:
    """What a compiled tree is, without where it was written: class, name, type, parameters
    and children."""
    seen = describe(node)
    return {"class": seen["class"], "name": seen["name"], "type": seen["type"],
            "params": seen.get("params"), "bindings": seen.get("bindings"),
            "children": [shape(c) for c in node.children]}


@pytest.mark.parametrize("path", LIBRARY_TREES, ids=lambda p: p.stem)
def test_a_library_tree_round_trips_to_the_same_py_trees_tree(path: Path, tmp_path: Path):
    xml = tmp_path / f"{path.stem}.xml"
    back = tmp_path / "back" / path.name
    back.parent.mkdir()
    assert convert(path, xml) == [xml]
    written = convert(xml, back)
    assert written[0] == back
    before = compile_tree(path, placeholders=True)
    after = compile_tree(back, placeholders=True)
    assert shape(after.root) == shape(before.root)
    assert after.nodes == before.nodes


def test_every_node_type_round_trips_to_the_same_py_trees_tree(tmp_path: Path):
    source = FIXTURES / "every_node.yaml"
    used = {kind for kind in NODE_TYPES if f"{kind}:" in source.read_text(encoding="utf-8")}
    assert used == set(NODE_TYPES)  # a new node type belongs in the fixture
    convert(source, tmp_path / "every_node.xml")
    convert(tmp_path / "every_node.xml", tmp_path / "every_node.yaml")
    before = compile_tree(source)
    after = compile_tree(tmp_path / "every_node.yaml")
    assert shape(after.root) == shape(before.root)
    assert after.nodes == before.nodes == 41


def test_trees_with_one_name_cannot_both_be_behavior_trees(tmp_path: Path):
    (tmp_path / "main.yaml").write_text("tree: same\nroot: {subtree: other}\n", encoding="utf-8")
    (tmp_path / "other.yaml").write_text("tree: same\nroot: {wait: 1}\n", encoding="utf-8")
    with pytest.raises(TreeError, match="other.yaml: two trees are named 'same'; BehaviorTree "
                                        "IDs must differ"):
        tree_to_xml(tmp_path / "main.yaml")


def test_a_broken_tree_file_is_reported_where_it_is_broken(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text("root:\n  sequence:\n    - wiat: 1\n", encoding="utf-8")
    with pytest.raises(TreeError, match="t.yaml:3:7: root.sequence\\[0\\].wiat: unknown node type "
                                        "'wiat' \\(did you mean 'wait'\\?\\)"):
        convert(tmp_path / "t.yaml", tmp_path / "t.xml")
    assert not (tmp_path / "t.xml").exists()


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
def test_a_planned_tree_round_trips_to_the_same_py_trees_tree(instruction: str, tmp_path: Path):
    document = plan_document(MemoryPlanner().plan(PlanRequest(instruction, FACTS, parts=PARTS)))
    xml = tmp_path / "plan.xml"
    xml.write_text(document_to_xml(document, "plan"), encoding="utf-8")
    main, documents = xml_to_documents(xml)
    assert main == "plan"
    back = tmp_path / "back"
    back.mkdir()
    for tid, doc in documents.items():  # the subtrees beside the plan, as `convert` writes them
        compile_document(doc, tid, here=back, placeholders=True)
    convert(xml, back / "plan.yaml")
    before = compile_document(document, "plan", placeholders=True)
    after = compile_tree(back / "plan.yaml", placeholders=True)
    assert shape(after.root) == shape(before.root)


def test_the_xml_uses_bt_cpp_built_ins_and_subtree_remapping():
    root = ET.fromstring(tree_to_xml(LIBRARY / "pick_place.yaml"))
    assert root.attrib == {"BTCPP_format": "4", "main_tree_to_execute": "pick_place"}
    assert [t.get("ID") for t in root.findall("BehaviorTree")] == ["pick_place", "grasp",
                                                                   "reach_grasp", "place"]
    retry = root.find("BehaviorTree[@ID='pick_place']/RetryUntilSuccessful")
    assert retry.attrib == {"name": "pick {object}, place on {target}",
                            "num_attempts": "{attempts}"}
    grasp_call = retry.find("Sequence/SubTree[@ID='grasp']")
    assert grasp_call.attrib == {"ID": "grasp", "object": "{object}"}
    over = root.find(".//move_to[@name='over {object}']")
    assert over.get("offset") == "[0, 0, '{over}']"
    assert root.find(".//Fallback[@name='verify grasp']/ForceFailure/release").attrib == {
        "lift": "{approach}"}


def test_the_nodes_model_is_generated_from_the_node_registry():
    model = ET.fromstring(tree_to_xml(LIBRARY / "grasp.yaml")).find("TreeNodesModel")
    declared = {e.get("ID"): e for e in model if e.tag != "SubTree"}
    assert set(declared) == set(NODE_TYPES)
    assert declared["sequence"].tag == "Control" and declared["retry"].tag == "Decorator"
    move_to = declared["move_to"]
    assert move_to.tag == "Action"
    ports = {p.get("name"): p.attrib for p in move_to.findall("input_port")}
    assert set(ports) == {*NODE_TYPES["move_to"].params, "object", "offset", "at", "carrying",
                          "rise", "closing", "avoid", "room", "clear_of"}
    assert ports["tolerance"] == {"name": "tolerance", "type": "float", "default": "0.01"}
    assert "default" not in ports["target"]
    grasp = model.find("SubTree[@ID='grasp']")
    assert grasp.find("input_port[@name='attempts']").attrib == {
        "name": "attempts", "type": "int", "default": "3"}


@pytest.mark.parametrize("value", ["on", "10", "{object}", "pick {object}", "a: b", 0.5, 3,
                                   True, [0, 0, "{over}"], {"relative": [0, 0, 0.04]},
                                   {"object": "{o}", "at": "top"}, "${/task/instruction}"])
def test_an_attribute_reads_back_as_the_value_it_was_written_from(value: Any):
    assert attr_value(attr_text(value)) == value


def test_an_unquoted_port_inside_a_list_is_the_port():
    assert attr_value("[0, 0, {height}]") == [0, 0, "{height}"]


def test_a_tree_shaped_like_bt_cpps_examples_imports_and_compiles(tmp_path: Path):
    out = tmp_path / "fetch.yaml"
    assert convert(FIXTURES / "fetch_and_place.xml", out) == [out, tmp_path / "Pick.yaml"]
    params = xml_to_documents(FIXTURES / "fetch_and_place.xml")[1]["FetchAndPlace"]["params"]
    assert params == {"object": {"type": "str", "doc": "what to fetch"},
                      "target": {"type": "entity", "doc": "where to put it"}}
    compiled = compile_tree(out, {"object": "akita_black_bowl_1", "target": "plate_1"})
    root = compiled.root
    assert (type(root).__name__, root.name, root.memory) == ("Sequence", "fetch and place", True)
    once, retry, timeout, parallel, fallback = root.children
    assert type(once).__name__ == "OneShot"
    assert (type(retry).__name__, retry.num_failures) == ("Retry", 3)
    pick = retry.decorated
    assert (type(pick).__name__, pick.memory, pick.bindings) == (
        "Selector", True, {"item": "akita_black_bowl_1", "height": 0.12})
    assert pick.children[1].children[0].params["target"].offset == (0.0, 0.0, 0.12)
    assert (type(timeout).__name__, timeout.params) == ("SimTimeout", {"steps": None,
                                                                      "seconds": 2.5})
    reactive = timeout.decorated
    assert (type(reactive).__name__, reactive.memory) == ("Sequence", False)
    assert type(parallel.policy).__name__ == "SuccessOnAll"
    assert type(parallel.children[1]).__name__ == "Inverter"
    assert (type(fallback).__name__, fallback.memory) == ("Selector", False)
    repeat = fallback.children[1]
    assert (type(repeat).__name__, repeat.num_success) == ("Repeat", 2)


def write(tmp_path: Path, body: str, model: str = "") -> Path:
    path = tmp_path / "tree.xml"
    path.write_text(f'<root BTCPP_format="4">\n  <BehaviorTree ID="T">\n{body}\n  </BehaviorTree>'
                    f"{model}\n</root>\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("body,message", [
    ('    <Script code="x:=1"/>', "tree.xml:3:5: 'Script' has no counterpart in tether: tether "
     "never evaluates strings as code"),
    ('    <wait steps="3" _skipIf="x == 1"/>', "tree.xml:3:5: '_skipIf' (a scripted pre/post "
     "condition) has no counterpart"),
    ("    <SequenceWithMemory>\n      <wait steps=\"1\"/>\n    </SequenceWithMemory>",
     "tree.xml:3:5: 'SequenceWithMemory' has no counterpart in tether: it keeps its place"),
    ('    <Sequence>\n      <OpenGripper/>\n    </Sequence>', "tree.xml:4:7: node type "
     "'OpenGripper' has no counterpart in tether"),
    ('    <Sequence>\n      <move_too/>\n    </Sequence>', "(did you mean 'move_to'?)"),
    ('    <Parallel success_count="2">\n      <wait steps="1"/>\n      <wait steps="2"/>\n'
     '      <wait steps="3"/>\n    </Parallel>', "tree.xml:3:5: Parallel: success_count=2 of 3 "
     "children"),
    ('    <Sequence nmae="x">\n      <wait steps="1"/>\n    </Sequence>',
     "tree.xml:3:5: Sequence: unknown port 'nmae' (did you mean 'name'?)"),
    ('    <RunOnce>\n      <wait steps="1"/>\n    </RunOnce>', "tree.xml:3:5: RunOnce: "
     "then_skip=true"),
    ('    <Inverter>\n      <wait steps="1"/>\n      <wait steps="2"/>\n    </Inverter>',
     "tree.xml:3:5: <Inverter> (a decorator) needs exactly one child, found 2"),
    ('    <SubTree ID="X" goal="{@goal}"/>', "tree.xml:3:5: goal: '{@goal}' (the root "
     "blackboard) has no counterpart"),
    ('    <SubTree ID="X" _autoremap="true"/>', "'_autoremap' on <SubTree> has no counterpart; "
     "name each remapped port"),
    ('    <Timeout msec="{t}">\n      <wait steps="1"/>\n    </Timeout>', "tree.xml:3:5: "
     "Timeout: Timeout needs a number in 'msec'"),
    ("    <Sequence>\n      <wait steps='1'>\n    </Sequence>",
     "tree.xml:5:7: XML: mismatched tag"),
])
def test_a_construct_without_counterpart_is_a_located_error(tmp_path: Path, body: str,
                                                             message: str):
    with pytest.raises(TreeError) as caught:
        convert(write(tmp_path, body), tmp_path / "out.yaml")
    assert message in str(caught.value)
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("text,message", [
    ('<root BTCPP_format="3"><BehaviorTree ID="T"><wait steps="1"/></BehaviorTree></root>',
     "tree.xml:1:1: BTCPP_format=\"3\": only format 4 is read"),
    ('<!DOCTYPE r [<!ENTITY a "aaaa">]><root/>', "tree.xml:1:13: a DOCTYPE (DTD) is not read"),
    ('<root BTCPP_format="4"><BehaviorTree ID="A"><wait steps="1"/></BehaviorTree>'
     '<BehaviorTree ID="B"><wait steps="1"/></BehaviorTree></root>',
     "tree.xml: 2 trees and no main_tree_to_execute"),
    ('<root BTCPP_format="4" main_tree_to_execute="Mian"><BehaviorTree ID="Main"><wait '
     'steps="1"/></BehaviorTree></root>', "(did you mean 'Main'?)"),
    ('<root BTCPP_format="4">\n  <include path="missing.xml"/>\n</root>',
     "tree.xml:2:3: include: no file missing.xml"),
    ('<root BTCPP_format="4">\n  <include path="tree.xml"/>\n</root>',
     "tree.xml:2:3: cyclic include of tree.xml"),
    ('<root BTCPP_format="4"><BehaviorTree ID="T"><wait steps="1"/></BehaviorTree>\n'
     '<BehaviorTree ID="T"><wait steps="2"/></BehaviorTree></root>',
     'tree.xml:2:1: a second <BehaviorTree ID="T">'),
    ('<root BTCPP_format="4"><BehaviorTree ID="T"><wait steps="1"/></BehaviorTree>'
     '<TreeNodesModel><SubTree ID="T"><input_port name="p" type="Pose2D"/></SubTree>'
     '</TreeNodesModel></root>', "port type 'Pose2D' has no counterpart"),
])
def test_a_file_level_problem_is_a_located_error(tmp_path: Path, text: str, message: str,
                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tree.xml").write_text(text, encoding="utf-8")
    with pytest.raises(TreeError) as caught:
        xml_to_documents(tmp_path / "tree.xml")
    assert message in str(caught.value)


def test_a_converted_tree_that_does_not_check_is_reported_in_the_written_file(
        tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TreeError) as caught:
        convert(write(tmp_path, '    <wait stesp="3"/>'), tmp_path / "t.yaml")
    assert str(caught.value) == (
        "t.yaml: written from tree.xml, but it does not check:\n"
        "t.yaml:3:10: root.wait.stesp: unknown parameter 'stesp' of wait (did you mean 'steps'?); "
        "valid: steps\n"
        "t.yaml:3:3: root.wait: missing required parameter 'steps' of wait (control steps to let "
        "pass)")


def test_an_undeclared_port_becomes_a_required_str_param(tmp_path: Path):
    _, documents = xml_to_documents(write(tmp_path, '    <check predicate="grasped" '
                                                    'object="{item}"/>'))
    assert documents["T"]["params"] == {"item": {
        "type": "str", "doc": "a port of the BehaviorTree.CPP tree (no TreeNodesModel entry)"}}


def test_convert_never_overwrites_a_different_file_beside_the_output(tmp_path: Path):
    (tmp_path / "Pick.yaml").write_text("tree: mine\n", encoding="utf-8")
    with pytest.raises(TreeError, match="Pick.yaml: exists; the subtree 'Pick' would overwrite"):
        convert(FIXTURES / "fetch_and_place.xml", tmp_path / "fetch.yaml")
    assert (tmp_path / "Pick.yaml").read_text(encoding="utf-8") == "tree: mine\n"
    assert not (tmp_path / "fetch.yaml").exists()


def test_tether_convert_goes_both_ways_and_refuses_other_suffixes(tmp_path: Path):
    runner = CliRunner()
    xml = tmp_path / "grasp.xml"
    result = runner.invoke(app, ["convert", str(LIBRARY / "grasp.yaml"), "-o", str(xml)])
    assert result.exit_code == 0, result.output
    assert f"wrote {xml}" in result.output
    result = runner.invoke(app, ["convert", str(xml), "-o", str(tmp_path / "grasp.yaml")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["convert", str(xml), "-o", str(tmp_path / "grasp.json")])
    assert result.exit_code == 2
    assert "convert goes from .yaml to .xml or from .xml to .yaml" in result.output
