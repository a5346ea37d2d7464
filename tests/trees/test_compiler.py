"""The tree language as the compiler reads it (`trees/compiler.py`): node syntax and shorthands,
names and labels, params and `{param}` substitution, subtrees and their search path, goal
bindings, and command-line bindings. Tick semantics are in test_semantics.py; malformed files and
their messages in test_malformed.py."""

from __future__ import annotations

import py_trees
import pytest

import tether.trees.compiler
from tests.trees.harness import (
    BOWL,
    PLATE,
    compile_node,
    compile_path,
    node_file,
    run,
    scene,
    tree_file,
)
from tether.blackboard.episode import storage
from tether.blackboard.references import Ref
from tether.errors import TetherError
from tether.trees.compiler import (
    compile_document,
    compile_tree,
    goal_bindings,
    parse_binding,
    read_tree_file,
)
from tether.trees.source import TreeError


def leaf_of(root: py_trees.behaviour.Behaviour) -> py_trees.behaviour.Behaviour:
    return root if not root.children else leaf_of(root.children[0])


# --- node syntax -------------------------------------------------------------------------------
@pytest.mark.parametrize(("node", "attribute", "value"), [
    ("wait: 3", "steps", 3),
    ("rotate: 0.5", "yaw", 0.5),
    ("set_gripper: close", "value", 1.0),
    ("release: 0.1", "lift", 0.1),
    ("move_to: [0.1, 0.2, 0.3]", "target.world", (0.1, 0.2, 0.3)),
    ("check: task_success", "call.predicate", "task_success"),
])
def test_a_scalar_body_sets_the_primary_parameter(tmp_path, node, attribute, value):
    built = compile_node(tmp_path, node)
    for part in attribute.split("."):
        built = getattr(built, part)
    assert built == value


def test_move_to_shorthand_mixes_target_keys_with_the_nodes_own_parameters(tmp_path):
    built = compile_node(tmp_path, f"""
        move_to: {{object: {BOWL}, offset: [0, 0, 0.1], tolerance: 0.02, max_steps: 9, name: up}}
        """)
    assert built.name == "up"
    assert (built.target.object, built.target.offset) == (BOWL, (0.0, 0.0, 0.1))
    assert (built.tolerance, built.max_steps) == (0.02, 9)


def test_move_to_long_form_names_the_target(tmp_path):
    built = compile_node(tmp_path, f"move_to: {{target: {{object: {BOWL}, at: top}}, yaw: 1.0}}")
    assert (built.target.object, built.target.at, built.yaw) == (BOWL, "top", 1.0)


def test_parameters_take_their_defaults(tmp_path):
    built = compile_node(tmp_path, "move_to: [0, 0, 0.1]")
    assert (built.tolerance, built.max_steps, built.stuck_steps, built.yaw) == (0.01, 300, 20, None)


def test_a_composite_is_a_list_of_children_or_a_mapping_with_children_and_a_name(tmp_path):
    listed = compile_node(tmp_path, "sequence: [{wait: 1}, {wait: 2}]")
    assert listed.name == "sequence" and [c.name for c in listed.children] == ["wait 1", "wait 2"]
    named = compile_node(tmp_path, "sequence: {name: steps, children: [{wait: 1}]}")
    assert named.name == "steps"


def test_a_node_is_named_beside_or_inside_its_type(tmp_path):
    beside = compile_node(tmp_path, "wait: 2\nname: pause")
    inside = compile_node(tmp_path, "wait: {steps: 2, name: pause}")
    assert beside.name == inside.name == "pause"


@pytest.mark.parametrize(("node", "label"), [
    ("retry: {n: 3, child: {wait: 1}}", "retry x3"),
    ("repeat: {n: 2, child: {wait: 1}}", "repeat x2"),
    ("timeout: {steps: 5, child: {wait: 1}}", "timeout 5 steps"),
    ("timeout: {seconds: 0.5, child: {wait: 1}}", "timeout 0.5 s"),
    (f"guard: {{predicate: grasped, object: {BOWL}, child: {{wait: 1}}}}",
     f"guard grasped({BOWL})"),
    ("check: {predicate: lifted, object: plate_1}", "check lifted(plate_1, 0.05)"),
    ("set: {key: x, value: 1}", "set /user/x = 1"),
    ("rotate: -0.5", "rotate -0.50 rad"),
    ("move_to: {relative: [0, 0, 0.05]}", "move_to here+[0, 0, 0.05]"),
    ("move_to: {object: plate_1, at: top, offset: [0, 0, 0.1]}", "move_to plate_1.top+[0, 0, 0.1]"),
])
def test_unnamed_nodes_are_labelled_by_what_they_do(tmp_path, node, label):
    assert compile_node(tmp_path, node).name == label


def test_composites_and_decorators_are_py_trees_own_classes(tmp_path):
    root = compile_node(tmp_path, """
        sequence:
          - selector: [{wait: 1}]
          - reactive_sequence: [{wait: 1}]
          - reactive_selector: [{wait: 1}]
          - parallel: [{wait: 1}]
          - retry: {n: 2, child: {wait: 1}}
          - repeat: {n: 2, child: {wait: 1}}
          - invert: {wait: 1}
          - force_success: {wait: 1}
          - force_failure: {wait: 1}
          - once: {wait: 1}
        """)
    c, d = py_trees.composites, py_trees.decorators
    kinds = [type(n) for n in root.children]
    assert kinds == [c.Selector, c.Sequence, c.Selector, c.Parallel, d.Retry, d.Repeat,
                     d.Inverter, d.FailureIsSuccess, d.SuccessIsFailure, d.OneShot]
    assert type(root) is c.Sequence and root.memory
    assert root.children[0].memory and not root.children[1].memory
    assert not root.children[2].memory


def test_every_node_records_its_type_and_where_it_was_written(tmp_path):
    root = compile_node(tmp_path, "sequence:\n  - wait: 1\n  - invert: {wait: 2}")
    assert (root.node_type, root.children[1].node_type) == ("sequence", "invert")
    assert root.children[1].origin == f"{tmp_path / 'tree.yaml'}:4"


def test_a_mapping_in_memory_compiles_and_is_located_by_its_logical_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # subtrees of a mapping come from the library, not the cwd
    (tmp_path / "grasp.yaml").write_text("root: {wait: 1}\n")
    doc = {"tree": "plan", "root": {"sequence": [
        {"subtree": "grasp", "with": {"object": BOWL}},
        {"move_to": {"object": PLATE, "tolerance": "high"}}]}}
    robot = scene()
    with pytest.raises(TreeError) as exc:
        compile_document(doc, "plan 'x'", resolve=robot.resolve)
    assert exc.value.problems == [
        "plan 'x': root.sequence[1].move_to.tolerance: expected a number, got 'high'"]
    doc["root"]["sequence"][1]["move_to"]["tolerance"] = 0.02
    compiled = compile_document(doc, "plan 'x'", resolve=robot.resolve)
    assert compiled.root.tree_file == "plan 'x'"
    assert compiled.root.children[1].origin == "plan 'x' root.sequence[1].move_to"
    assert compiled.root.children[0].tree_file.endswith("trees/library/grasp.yaml")


def test_the_compiled_tree_counts_its_nodes(tmp_path):
    compiled = compile_path(node_file(tmp_path, "sequence: [{wait: 1}, {invert: {wait: 2}}]"))
    assert compiled.nodes == 4


def test_object_names_and_aliases_resolve_to_the_scenes_canonical_names(tmp_path):
    robot = scene()
    built = compile_node(tmp_path, """
        sequence:
          - move_to: {object: black bowl, offset: [0, 0, 0.1]}
          - check: {predicate: on, object: the black bowl, target: plate}
        """, robot)
    move, check = built.children
    assert move.target.object == BOWL
    assert check.call.args == {"object": BOWL, "target": PLATE}


def test_without_a_scene_object_names_are_kept_as_written(tmp_path):
    assert compile_node(tmp_path, "move_to: {object: black bowl}").target.object == "black bowl"


def test_strings_are_never_evaluated(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, """
        set: {key: note, value: "__import__('os').getcwd()"}
        """, robot)
    run(root, robot)
    assert storage()["/user/note"] == "__import__('os').getcwd()"
    with pytest.raises(TreeError, match="unknown predicate"):
        compile_node(tmp_path, "check: {predicate: \"__import__('os')\"}")


def test_a_tree_file_is_parsed_once_per_text_and_again_when_edited(tmp_path, monkeypatch):
    path = tmp_path / "tree.yaml"
    path.write_text("root: {wait: 1}\n")
    parsed = []
    load = tether.trees.compiler.load_source
    monkeypatch.setattr(tether.trees.compiler, "load_source",
                        lambda *args: parsed.append(args[0]) or load(*args))
    first = read_tree_file(path)
    assert read_tree_file(path) is first and parsed == [path]
    path.write_text("root: {wait: 2}\n")
    edited = read_tree_file(path)
    assert parsed == [path, path] and edited.root == {"wait": 2} and first.root == {"wait": 1}


# --- params ------------------------------------------------------------------------------------
PARAM_TREE = """
    tree: reach
    doc: Reach above an object.
    params:
      object: {type: entity, doc: what to reach}
      height: {type: float, default: 0.1}
      steps: {type: int, default: 50}
      offset: {type: vec3, default: [0, 0, 0]}
      label: {type: str, default: reach}
      careful: {type: bool, default: false}
    root:
      sequence:
        name: "{label} {object}"
        children:
          - move_to:
              target: {object: "{object}", offset: "{offset}"}
              max_steps: "{steps}"
              tolerance: "{height}"
              name: "go to {object} ({height} m)"
          - check:
              {predicate: near, object: gripper, target: "{object}", distance: "{height}"}
    """


def test_declared_params_are_bound_converted_and_defaulted(tmp_path):
    robot = scene()
    compiled = compile_path(tree_file(tmp_path, PARAM_TREE), robot,
                            {"object": "black bowl", "steps": 20})
    assert compiled.file.name == "reach" and compiled.file.doc == "Reach above an object."
    assert compiled.bindings["height"] == 0.1
    move = compiled.root.children[0]
    assert move.target.object == BOWL and move.max_steps == 20


def test_whole_value_param_references_keep_the_params_type(tmp_path):
    compiled = compile_path(tree_file(tmp_path, PARAM_TREE), None,
                            {"object": BOWL, "height": 0.25, "offset": [0, 0, 1]})
    move = compiled.root.children[0]
    assert move.tolerance == 0.25 and isinstance(move.max_steps, int)
    assert move.target.offset == (0.0, 0.0, 1.0)
    assert compiled.root.children[1].call.args["distance"] == 0.25


def test_a_vec3_param_may_be_a_whole_move_to_target(tmp_path):
    path = tree_file(tmp_path, """
        params: {point: {type: vec3, default: [0.1, 0.2, 0.3]}}
        root: {move_to: "{point}"}
        """)
    assert compile_path(path).root.target.world == (0.1, 0.2, 0.3)


def test_param_references_inside_strings_are_substituted_as_text(tmp_path):
    compiled = compile_path(tree_file(tmp_path, PARAM_TREE), None, {"object": BOWL})
    assert compiled.root.name == f"reach {BOWL}"
    assert compiled.root.children[0].name == f"go to {BOWL} (0.1 m)"


def test_a_given_value_is_converted_to_the_declared_type(tmp_path):
    compiled = compile_path(tree_file(tmp_path, PARAM_TREE), None, {"object": BOWL, "height": 1})
    assert compiled.root.children[0].tolerance == 1.0
    assert isinstance(compiled.root.children[0].tolerance, float)


def test_a_param_declared_by_type_name_alone_is_required(tmp_path):
    path = tree_file(tmp_path, "params:\n  n: int\nroot:\n  wait: '{n}'\n")
    assert compile_path(path, None, {"n": 4}).root.steps == 4
    with pytest.raises(TreeError, match="missing required parameter 'n' of 'tree'"):
        compile_path(path)


def test_placeholders_stand_in_for_unbound_required_params(tmp_path):
    compiled = compile_tree(tree_file(tmp_path, PARAM_TREE), placeholders=True)
    assert compiled.root.children[0].target.object == "<object>"


def test_a_blackboard_reference_is_kept_as_a_reference_until_run_time(tmp_path):
    built = compile_node(tmp_path, "move_to: {object: '${/user/target}'}", scene())
    assert built.target.object == Ref("/user/target")


# --- subtrees ----------------------------------------------------------------------------------
APPROACH = """
    params:
      object: entity
      height: {type: float, default: 0.1}
    root:
      move_to: {object: "{object}", offset: [0, 0, "{height}"], name: "approach {object}"}
    """


def test_a_subtree_is_found_next_to_the_including_file_and_bound_with_with(tmp_path):
    robot = scene()
    tree_file(tmp_path, APPROACH, "approach.yaml")
    root = compile_node(tmp_path, "subtree: approach\nwith: {object: black bowl, height: 0.2}",
                        robot)
    assert root.name == f"approach {BOWL}"
    assert root.target.offset == (0.0, 0.0, 0.2)
    assert root.node_type == "subtree"


def test_a_subtree_param_left_out_takes_its_default(tmp_path):
    tree_file(tmp_path, APPROACH, "approach.yaml")
    root = compile_node(tmp_path, f"subtree: approach\nwith: {{object: {BOWL}}}")
    assert root.target.offset == (0.0, 0.0, 0.1)


def test_a_subtree_may_be_named_with_its_file_name_and_renamed_beside_it(tmp_path):
    tree_file(tmp_path, APPROACH, "approach.yaml")
    root = compile_node(tmp_path, f"subtree: approach.yaml\nname: first\nwith: {{object: {BOWL}}}")
    assert root.name == "first"


def test_a_subtree_passes_its_callers_params_through_with(tmp_path):
    tree_file(tmp_path, APPROACH, "approach.yaml")
    path = tree_file(tmp_path, """
        params:
          thing: entity
        root:
          sequence:
            - subtree: approach
              with: {object: "{thing}", height: 0.05}
        """)
    compiled = compile_path(path, scene(), {"thing": "plate"})
    assert compiled.root.children[0].target.object == PLATE


def test_a_blackboard_reference_passes_through_with_into_a_subtree(tmp_path):
    robot = scene()
    tree_file(tmp_path, APPROACH, "approach.yaml")
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: goal_object, value: {PLATE}}}
          - subtree: approach
            with: {{object: "${{/user/goal_object}}"}}
        """, robot)
    assert root.children[1].target.object == Ref("/user/goal_object")
    result, _ = run(root, robot)
    assert result.tree_status == "SUCCESS"
    assert robot.eef_pose().pos == pytest.approx([0.25, 0.0, 0.105], abs=0.01)


def test_subtrees_are_searched_next_to_the_file_first_then_in_the_library(tmp_path, monkeypatch):
    library = tmp_path / "library"
    library.mkdir()
    monkeypatch.setattr(tether.trees.compiler, "LIBRARY", library)
    tree_file(library, "root: {wait: 7}", "pause.yaml")
    tree_file(library, "root: {wait: 9}", "nap.yaml")
    tree_file(tmp_path, "root: {wait: 1}", "nap.yaml")
    root = compile_node(tmp_path, "sequence: [{subtree: pause}, {subtree: nap}]")
    assert [c.steps for c in root.children] == [7, 1]


def test_the_same_subtree_may_be_included_twice(tmp_path):
    tree_file(tmp_path, APPROACH, "approach.yaml")
    root = compile_node(tmp_path, f"""
        sequence:
          - subtree: approach
            with: {{object: {BOWL}}}
          - subtree: approach
            with: {{object: {PLATE}}}
        """)
    assert [c.name for c in root.children] == [f"approach {BOWL}", f"approach {PLATE}"]


# --- goal bindings and command-line bindings ---------------------------------------------------
GOAL_TREE = """
    goal: [on, in]
    params:
      object: {type: entity, from_goal: 1}
      target: {type: entity, from_goal: 2}
      lift: {type: float, default: 0.1}
    root:
      check: {predicate: on, object: "{object}", target: "{target}"}
    """


def test_goal_bindings_bind_from_goal_params_from_the_first_goal_literal_the_tree_achieves(
        tmp_path):
    tf = read_tree_file(tree_file(tmp_path, GOAL_TREE))
    assert tf.goal == ("on", "in")
    goal = [("open", "drawer_1"), ("in", BOWL, "basket_1"), ("on", "cup_1", PLATE)]
    assert goal_bindings(tf, goal) == {"object": BOWL, "target": "basket_1"}
    assert goal_bindings(tf, [("open", "drawer_1")]) == {}


def test_a_tree_bound_from_its_tasks_goal_compiles_against_that_scene(tmp_path):
    robot = scene()
    path = tree_file(tmp_path, GOAL_TREE)
    compiled = compile_path(path, robot, goal_bindings(read_tree_file(path), robot.goal()))
    assert compiled.root.call.args == {"object": BOWL, "target": PLATE}


@pytest.mark.parametrize(("text", "pair"), [
    ("height=0.2", ("height", 0.2)),
    ("steps=3", ("steps", 3)),
    ("offset=[0, 0, 0.1]", ("offset", [0, 0, 0.1])),
    ("object=black bowl", ("object", "black bowl")),
    ("careful=true", ("careful", True)),
    ("label=a=b", ("label", "a=b")),
])
def test_parse_binding_reads_key_equals_a_yaml_value(text, pair):
    assert parse_binding(text) == pair


def test_parse_binding_without_equals_is_a_user_error():
    with pytest.raises(TetherError, match="KEY=VALUE"):
        parse_binding("height")


@pytest.mark.parametrize(("text", "message"), [
    ("height=.nan", "--with height: must be a finite number, got nan"),
    ("height=-.inf", "--with height: must be a finite number, got -inf"),
    ("offset=[0, 1.0e+999, 0]", "--with offset[1]: must be a finite number, got inf"),
])
def test_parse_binding_rejects_a_number_that_is_not_finite(text, message):
    with pytest.raises(TetherError) as caught:
        parse_binding(text)
    assert str(caught.value) == message


def test_a_nan_written_as_a_word_is_not_a_number(tmp_path):
    path = tree_file(tmp_path, "params: {height: float}\nroot: {wait: 1}")
    with pytest.raises(TreeError, match="parameter 'height' of 'tree': expected a number, got "
                                        "'nan'"):
        compile_tree(path, dict([parse_binding("height=nan")]))


def test_a_subtree_chain_deeper_than_the_limit_is_located_where_it_passes_it(tmp_path):
    from tether.trees.compiler import MAX_DEPTH

    for i in range(MAX_DEPTH):  # part{i} includes part{i + 1}: each file is one node deep
        tree_file(tmp_path, f"root: {{subtree: part{i + 1}}}", f"part{i}.yaml")
    tree_file(tmp_path, "root: {wait: 1}", f"part{MAX_DEPTH}.yaml")
    with pytest.raises(TreeError) as caught:
        compile_tree(tmp_path / "part0.yaml")
    assert caught.value.problems == [
        f"{tmp_path / 'part100.yaml'}:1:1: nodes nest more than 100 deep here (subtrees included)"]
    compile_tree(tmp_path / "part1.yaml")  # 100 deep
