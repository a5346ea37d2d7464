"""The node types of the tree language, registered by name.

Each `NodeType` says what kind of node it is (composite, decorator, leaf), which parameters it
takes (type, default, doc), an example, and how to build the real py_trees object. The compiler,
`tether check`, and the language reference all read this registry, so adding a node type here is
all it takes to make it usable in YAML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import py_trees
from py_trees.common import OneShotPolicy, ParallelPolicy

from tether.behaviours.conditions import Check, GraspLeft, Guard
from tether.behaviours.interventions import Erase, Paint, Rewrite
from tether.behaviours.localize import VANTAGES, Localize
from tether.behaviours.memory import Remember, Retrieve
from tether.behaviours.monitor import Monitor
from tether.behaviours.plan_to import PlanGrasp, PlanTo
from tether.behaviours.primitives import MoveTo, PushDoor, Release, Rotate, SetGripper, Wait
from tether.behaviours.recovery import ErrorIs, Replan
from tether.behaviours.sim_timeout import SimTimeout
from tether.behaviours.stuck import StuckConfig
from tether.behaviours.verifier import VERIFIER_CHOICES, Expectation
from tether.behaviours.verify import Verify
from tether.behaviours.vla import VLA
from tether.blackboard.references import as_ref, deref
from tether.memory.retrieval import DEFAULT_QUERY
from tether.models.perception import perception_for
from tether.registry import Registry
from tether.trees.values import (
    ANY,
    BOOL,
    ENTITIES,
    ENTITY,
    ERROR_CODE,
    FLOAT,
    KEY_TYPE,
    MAPPING,
    STR,
    TARGET,
    TEXT,
    Choice,
    Float,
    Int,
    Type,
)

REQUIRED = object()
COMPOSITE, DECORATOR, LEAF = "composite", "decorator", "leaf"


@dataclass(frozen=True)
class Spec:
    type: Type
    default: Any = REQUIRED
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class NodeType:
    name: str
    kind: str
    doc: str
    build: Callable[..., py_trees.behaviour.Behaviour]
    params: dict[str, Spec] = field(default_factory=dict)
    primary: str | None = None  # the parameter a scalar body sets: `wait: 10`
    predicate: bool = False  # takes `predicate:` plus that predicate's arguments
    label: Callable[[dict], str] | None = None


NODE_TYPES: Registry[NodeType] = Registry("node type")


def register(node_type: NodeType) -> None:
    NODE_TYPES.register(node_type.name, node_type)


# --- composites: real py_trees composites ----------------------------------------------------
def _composite(cls: type, memory: bool) -> Callable[..., py_trees.behaviour.Behaviour]:
    return lambda name, children: cls(name=name, memory=memory, children=children)


register(NodeType("sequence", COMPOSITE, "Tick children in order; resume the RUNNING child next "
                  "tick (memory). SUCCESS when all succeed, FAILURE at the first failure.",
                  _composite(py_trees.composites.Sequence, True)))
register(NodeType("selector", COMPOSITE, "Try children in order until one does not fail; resume "
                  "the RUNNING child next tick (memory). FAILURE when all fail.",
                  _composite(py_trees.composites.Selector, True)))
register(NodeType("reactive_sequence", COMPOSITE, "A sequence that restarts from its first child "
                  "every tick, so earlier conditions are re-checked; a failure stops the running "
                  "child.", _composite(py_trees.composites.Sequence, False)))
register(NodeType("reactive_selector", COMPOSITE, "A selector that restarts from its first child "
                  "every tick, so a higher-priority child that stops failing preempts the running "
                  "one (which is stopped).", _composite(py_trees.composites.Selector, False)))


def _parallel(name: str, children: list, success_on: Any, synchronise: bool):
    if success_on == "all":
        policy = ParallelPolicy.SuccessOnAll(synchronise=synchronise)
    elif success_on == "one":
        policy = ParallelPolicy.SuccessOnOne()
    else:
        policy = ParallelPolicy.SuccessOnSelected(children=success_on, synchronise=synchronise)
    return py_trees.composites.Parallel(name=name, policy=policy, children=children)


register(NodeType(
    "parallel", COMPOSITE,
    "Tick every child every tick. FAILURE as soon as one fails; SUCCESS when all succeed "
    "(`all`), any one succeeds (`one`), or the named children succeed (a list of names).",
    _parallel,
    params={"success_on": Spec(ANY, "all", "`all`, `one`, or a list of child names"),
            "synchronise": Spec(BOOL, True, "finished children are not re-ticked until the "
                                "policy is met")},
))

# --- decorators: py_trees' own where it has them ---------------------------------------------
register(NodeType("retry", DECORATOR, "Re-run a failing child; FAILURE only on its n-th failure.",
                  lambda name, child, n: py_trees.decorators.Retry(name, child, num_failures=n),
                  params={"n": Spec(Int(1), doc="attempts")}, label=lambda p: f"retry x{p['n']}"))
register(NodeType("repeat", DECORATOR, "Re-run a succeeding child; SUCCESS on its n-th success, "
                  "FAILURE at its first failure.",
                  lambda name, child, n: py_trees.decorators.Repeat(name, child, num_success=n),
                  params={"n": Spec(Int(1), doc="successes")}, label=lambda p: f"repeat x{p['n']}"))
register(NodeType(
    "timeout", DECORATOR, "FAILURE (error TIMEOUT) when the child is still RUNNING after `steps` "
    "control steps or `seconds` of simulated time; the child is stopped before it can command.",
    lambda name, child, steps, seconds: SimTimeout(name, child, steps=steps, seconds=seconds),
    params={"steps": Spec(Int(1), None, "budget in control steps"),
            "seconds": Spec(Float(0.0), None, "budget in simulated seconds")},
    label=lambda p: f"timeout {p['steps']} steps" if p["steps"] is not None
    else f"timeout {p['seconds']:g} s"))
register(NodeType("invert", DECORATOR, "Swap SUCCESS and FAILURE.",
                  lambda name, child: py_trees.decorators.Inverter(name, child)))
register(NodeType("force_success", DECORATOR, "FAILURE becomes SUCCESS (RUNNING stays RUNNING).",
                  lambda name, child: py_trees.decorators.FailureIsSuccess(name, child)))
register(NodeType("force_failure", DECORATOR, "SUCCESS becomes FAILURE (RUNNING stays RUNNING).",
                  lambda name, child: py_trees.decorators.SuccessIsFailure(name, child)))
register(NodeType("once", DECORATOR, "Run the child to completion once per episode, then return "
                  "that result without ticking it again.",
                  lambda name, child: py_trees.decorators.OneShot(
                      name, child, policy=OneShotPolicy.ON_COMPLETION)))
register(NodeType(
    "guard", DECORATOR, "Re-check a predicate before every tick of the child; the first time it "
    "does not hold the child is stopped (the robot holds) and the guard fails (CONDITION_FAILED).",
    lambda name, child, call: Guard(name, child, call), predicate=True,
    label=lambda p: f"guard {p['call']}"))

# --- leaves ------------------------------------------------------------------------------------
MOVE_TO_PARAMS = {  # `move_to`'s, and `plan_to`'s with its planning ones
    "target": Spec(TARGET, doc="[x, y, z] (world), {object, offset, at} or {relative}"),
    "tolerance": Spec(Float(0.0), 0.01, "success radius (m)"),
    "max_steps": Spec(Int(1), 300, "step cap"),
    "stuck_steps": Spec(Int(1), 20, "steps without 2 mm of progress that mean STUCK"),
    "yaw": Spec(FLOAT, None, "wrist yaw to hold (rad, world z); default: keep current")}
PLANNING_CHECKS = Spec(Int(1), 20000, "collision checks the path search may spend")
register(NodeType(
    "move_to", LEAF, "Servo the end effector to a target, keeping its orientation. FAILURE with "
    "UNREACHABLE after `max_steps`, STUCK when no progress for `stuck_steps`, TARGET_MOVED when "
    "the object it grasps jumps (more than 5 cm in a tick).",
    lambda name, target, tolerance, max_steps, stuck_steps, yaw: MoveTo(
        name, target, tolerance=tolerance, max_steps=max_steps, stuck_steps=stuck_steps, yaw=yaw),
    params=MOVE_TO_PARAMS, primary="target", label=lambda p: f"move_to {p['target']}"))
register(NodeType(
    "plan_to", LEAF, "Move the end effector to a target along a collision-free path planned "
    "when the node starts (touching only the target's entity and `allow`). FAILURE with "
    "UNREACHABLE on its first tick when no path exists, STUCK when no progress for `stuck_steps`.",
    lambda name, target, tolerance, max_steps, stuck_steps, yaw, allow, planning_checks: PlanTo(
        name, target, tolerance=tolerance, max_steps=max_steps, stuck_steps=stuck_steps, yaw=yaw,
        allow=allow, planning_checks=planning_checks),
    params={**MOVE_TO_PARAMS,
            "allow": Spec(ENTITIES, (), "entities the motion may touch besides the target's"),
            "planning_checks": PLANNING_CHECKS},
    primary="target", label=lambda p: f"plan_to {p['target']}"))
register(NodeType(
    "plan_grasp", LEAF, "Bring the open fingers onto the object's best feasible grasp (the next "
    "one each time the node starts again) along a planned collision-free path, then straight in. "
    "FAILURE with UNREACHABLE on its first tick when it has none.",
    lambda name, object, approach, tolerance, max_steps, stuck_steps, allow, planning_checks:
    PlanGrasp(name, object, approach=approach, tolerance=tolerance, max_steps=max_steps,
              stuck_steps=stuck_steps, allow=allow, planning_checks=planning_checks),
    params={"object": Spec(ENTITY, doc="the object to grasp"),
            "approach": Spec(Float(0.0), 0.10, "length of the straight way in (m)"),
            "tolerance": Spec(Float(0.0), 0.008, "success radius (m)"),
            "max_steps": Spec(Int(1), 300, "step cap"),
            "stuck_steps": Spec(Int(1), 40, "steps without 2 mm of progress that mean STUCK"),
            "allow": Spec(ENTITIES, (), "entities the path to the way in may touch"),
            "planning_checks": PLANNING_CHECKS},
    primary="object", label=lambda p: f"plan_grasp {p['object']}"))
register(NodeType(
    "rotate", LEAF, "Turn the wrist about a world axis (`axis`, default z) by `yaw` radians (to "
    "`yaw` when `relative: false`), holding the position. Later `move_to`s keep the new "
    "orientation.",
    lambda name, yaw, relative, tolerance, max_steps, axis, along, closing, either_way, handle:
    Rotate(name, yaw, relative=relative, tolerance=tolerance, max_steps=max_steps, axis=axis,
           along=along, closing=closing, either_way=either_way, handle=handle),
    params={"yaw": Spec(FLOAT, doc="radians (about `axis`; yaw for the default z)"),
            "relative": Spec(BOOL, True, "turn by `yaw`; false: turn to `yaw`"),
            "tolerance": Spec(Float(0.0), 0.03, "radians"),
            "max_steps": Spec(Int(1), 100, "step cap"),
            "axis": Spec(Choice("x", "y", "z"), "z", "world axis to turn about"),
            "along": Spec(ENTITY, None, "turn about the axes of this entity's joint frame "
                          "(+y the way its part opens) instead of the world's"),
            "closing": Spec(BOOL, False, "with `along`: +y the way its part closes"),
            "either_way": Spec(BOOL, False, "with `relative: false`: to `yaw` or `yaw` + pi, "
                               "whichever is nearer (a closed gripper looks the same)"),
            "handle": Spec(ENTITY, None, "a held object: turn about z until its handle points "
                           "at heading `yaw` (rad from +x)")},
    primary="yaw", label=lambda p: f"rotate {p['yaw']:+.2f} rad"
    + ("" if p["axis"] == "z" else f" about {p['axis']}")))
register(NodeType(
    "push_door", LEAF, "Swing a hinged door (a microwave's) shut with the closed fingers against "
    "its outer face, their target running `ahead` rad ahead of the door. SUCCESS when it is "
    "closed; FAILURE with STUCK when it stops turning, UNREACHABLE after `max_steps`.",
    lambda name, door, radius, press, height, ahead, max_steps, stuck_steps: PushDoor(
        name, door, radius=radius, press=press, height=height, ahead=ahead,
        max_steps=max_steps, stuck_steps=stuck_steps),
    params={"door": Spec(ENTITY, doc="the fixture whose door it is, e.g. microwave_1"),
            "radius": Spec(Float(0.0), 0.12, "how far from the hinge the fingers push (m)"),
            "press": Spec(FLOAT, 0.01, "fingers' offset out of the door's middle plane (m)"),
            "height": Spec(FLOAT, 0.075, "fingers' height above the hinge's middle (m)"),
            "ahead": Spec(Float(0.0), 0.15, "how far the target runs ahead of the door (rad)"),
            "max_steps": Spec(Int(1), 300, "step cap"),
            "stuck_steps": Spec(Int(1), 20, "steps without the door turning that mean STUCK")},
    primary="door", label=lambda p: f"push_door {p['door']}"))
register(NodeType(
    "set_gripper", LEAF, "Open or close the gripper, holding the arm; SUCCESS when the fingers "
    "stop moving.", lambda name, state: SetGripper(name, state),
    params={"state": Spec(Choice("open", "close"), doc="what the fingers do")}, primary="state",
    label=lambda p: f"set_gripper {p['state']}"))
register(NodeType(
    "release", LEAF, "Open the gripper, then retreat `lift` m straight up.",
    lambda name, lift: Release(name, lift=lift),
    params={"lift": Spec(Float(0.0), 0.05, "retreat height (m)")}, primary="lift",
    label=lambda p: "release"))
register(NodeType(
    "wait", LEAF, "Let `steps` control steps pass; the robot holds.",
    lambda name, steps: Wait(name, steps),
    params={"steps": Spec(Int(0), doc="control steps to let pass")}, primary="steps",
    label=lambda p: f"wait {p['steps']}"))
register(NodeType(
    "localize", LEAF, "Look at the scene again (camera perception; privileged perception always "
    "knows): SUCCESS when `objects` are seen, else FAILURE with OBJECT_NOT_FOUND. With `vantage: "
    "start` the hand first goes back to where the episode started (RUNNING), out of the camera's "
    "way.",
    lambda name, objects, vantage: Localize(name, objects, vantage=vantage),
    params={"objects": Spec(ENTITIES, (), "the objects to find (none: all the task's objects)"),
            "vantage": Spec(Choice(*VANTAGES), "here", "`here`, or `start`: look from the "
                            "episode's start pose")},
    primary="vantage", label=lambda p: f"localize from {p['vantage']}"))
register(NodeType(
    "check", LEAF, "Test a named predicate: SUCCESS if it holds, else FAILURE (writing `error` "
    "to /errors/last when given). Never RUNNING.",
    lambda name, call, error: Check(name, call, error=error),
    params={"error": Spec(ERROR_CODE, None, "error code to write on FAILURE")},
    predicate=True, primary="predicate", label=lambda p: f"check {p['call']}"))

register(NodeType(
    "grasp_left", LEAF, "SUCCESS when `object` still has a grasp from above whose way down has not "
    "stalled this episode (`/grasps/stalled/OBJECT`); else FAILURE with UNREACHABLE saying so. "
    "Never RUNNING, never commands.",
    lambda name, object: GraspLeft(name, object),
    params={"object": Spec(ENTITY, doc="the object to grasp")},
    primary="object", label=lambda p: f"grasp of {p['object']} left"))


_VERIFIER = Spec(Choice(*VERIFIER_CHOICES), "auto", "`sim` (the predicate), `vlm` (the run's VLM "
                 "verifier, asked about the camera image) or `auto` (the VLM when the run has one)")
_QUESTION = Spec(TEXT, None, "the yes/no question for a VLM (`${/key}` filled in); default: "
                 "made from the predicate")


def _expectation(call: Any, question: Any, holds: bool = True) -> Expectation:
    return Expectation(call, holds=holds, question=None if question is None else str(question))


register(NodeType(
    "verify", LEAF, "Check an expected effect once through a verifier (the sim's predicate, or a "
    "VLM asked about the camera image): SUCCESS if it holds, else FAILURE writing `error`; "
    "VERIFIER_ERROR when the verifier gives no usable answer. Never RUNNING.",
    lambda name, call, verifier, question, error: Verify(
        name, _expectation(call, question), verifier=verifier, error=error),
    params={"verifier": _VERIFIER, "question": _QUESTION,
            "error": Spec(ERROR_CODE, "CONDITION_FAILED", "error code written when it does not "
                          "hold")},
    predicate=True, primary="predicate", label=lambda p: f"verify {p['call']}"))
register(NodeType(
    "monitor", DECORATOR, "Every `every` steps check that a predicate keeps holding (or, with "
    "`holds: false`, has not become true) while the child runs, acting on each verdict `lag` "
    "steps after the observation it judged; a contradiction stops the child and fails "
    "(PREEMPTED).",
    lambda name, child, call, every, lag, holds, verifier, question: Monitor(
        name, child, expectation=_expectation(call, question, holds), every=every, lag=lag,
        verifier=verifier),
    params={"every": Spec(Int(1), 10, "check period in control steps"),
            "lag": Spec(Int(0), 0, "steps from an observation to acting on its verdict"),
            "holds": Spec(BOOL, True, "true: the predicate must keep holding; false: it must "
                          "not become true"),
            "verifier": _VERIFIER, "question": _QUESTION},
    predicate=True,
    label=lambda p: f"monitor {'' if p['holds'] else 'not '}{p['call']} every {p['every']}"))


def _set(name: str, key: str, value: Any) -> py_trees.behaviour.Behaviour:
    ref = as_ref(value)
    source = (lambda: deref(ref)) if ref is not None else value
    return py_trees.behaviours.SetBlackboardVariable(
        name=name, variable_name=key, variable_value=source, overwrite=True)


register(NodeType(
    "set", LEAF, "Write a value to a blackboard key (relative keys live under /user); a value "
    "`${/key}` copies that key's value at run time.", _set,
    params={"key": Spec(KEY_TYPE, doc="blackboard key; relative keys live under /user"),
            "value": Spec(ANY, doc="any YAML value, or `${/key}` to copy that key's value")},
    label=lambda p: f"set {p['key']} = {p['value']}"))

register(NodeType(
    "retrieve", LEAF, "Search long-term memory (top `k` per partition at similarity >= "
    "`threshold`) with the rendered `query`; write /memory/retrieved, /memory/advice and "
    "/memory/params/NAME for every NAME in `defaults`. SUCCESS in the same tick.",
    lambda name, query, k, threshold, defaults: Retrieve(
        name, query=query, k=k, threshold=threshold, defaults=defaults),
    params={"query": Spec(TEXT, DEFAULT_QUERY, "text with ${/key} placeholders"),
            "k": Spec(Int(1), 3, "hits per partition"),
            "threshold": Spec(Float(-1.0), 0.8, "minimum cosine similarity of a hit"),
            "defaults": Spec(MAPPING, {}, "parameters memory may choose, with their defaults")},
    label=lambda p: f"retrieve {', '.join(p['defaults']) or 'memory'}"))
register(NodeType(
    "remember", LEAF, "Add a note (`${/key}` placeholders filled in) to the episode's "
    "short-term event log; `boundary` closes the current segment. SUCCESS in the same tick.",
    lambda name, note, boundary: Remember(name, note=note, boundary=boundary),
    params={"note": Spec(TEXT, doc="the text"),
            "boundary": Spec(BOOL, False, "the note ends a sub-task (compression folds here)")},
    primary="note", label=lambda p: f"remember {p['note'][:30]}"))

register(NodeType(
    "vla", LEAF, "Run a learned policy (named in the policies registry) in chunks, one action per "
    "tick, until the stop `predicate` holds. FAILURE with BUDGET_EXHAUSTED after `max_steps` "
    "actions or `max_chunks` chunks (continued up to `continue_steps` more while the robot still "
    "moves, and closes in on `toward` when given), STUCK when the stuck detector fires, "
    "POLICY_ERROR when the policy raises or returns NaN/inf (never executed).",
    lambda name, call, policy, instruction, max_steps, max_chunks, n_action_steps,
    continue_steps, toward, stuck: VLA(
        name, policy=policy, instruction=instruction, stop=call, max_steps=max_steps,
        max_chunks=max_chunks, n_action_steps=n_action_steps, continue_steps=continue_steps,
        stuck=StuckConfig() if stuck else None, toward=toward),
    params={"policy": Spec(STR, doc="a named policy (`grasp_act`, `expert`, or one from "
                           "`--policies FILE`)"),
            "instruction": Spec(TEXT, "${/task/instruction}", "what the policy is told; "
                                "`${/key}` placeholders are filled in when a chunk is requested"),
            "max_steps": Spec(Int(0), 200, "budget in actions (0: fails at once without "
                              "acting, unless the predicate already holds)"),
            "max_chunks": Spec(Int(1), None, "budget in chunks (default: none)"),
            "n_action_steps": Spec(Int(1), None, "actions executed per chunk (default: all)"),
            "continue_steps": Spec(Int(0), 40, "extra actions allowed past the budget while "
                                   "the robot keeps moving"),
            "toward": Spec(ENTITY, None, "the continuation also needs the end effector to close "
                           "in on this entity (1 cm nearer its bounding box over 10 steps) or to "
                           "be at it (within 3 cm)"),
            "stuck": Spec(BOOL, True, "fail with STUCK when the last 8 actions barely move or "
                          "oscillate")},
    predicate=True, label=lambda p: f"vla {p['policy']} until {p['call']}"))

register(NodeType(
    "error_is", LEAF, "SUCCESS when the last recorded error has code `code`, else FAILURE; a "
    "recovery branch starts with it to handle only its error. Never RUNNING.",
    lambda name, code: ErrorIs(name, (code,)),
    params={"code": Spec(ERROR_CODE, doc="the error code to handle")},
    primary="code", label=lambda p: f"error is {p['code']}"))
register(NodeType(
    "replan", LEAF, "Ask the planner again (with the errors and the event log) and run the plan "
    "it returns, up to `attempts` plans; FAILURE (BUDGET_EXHAUSTED) when they are used up or no "
    "planner was given (`tether do` gives one).",
    lambda name, attempts: Replan(name, attempts),
    params={"attempts": Spec(Int(1), 1, "plans to ask for")}, primary="attempts",
    label=lambda p: f"replan x{p['attempts']}"))

# --- input interventions: decorators over a `vla` leaf ----------------------------------------
PERCEPTION_DOC = ("where the masks come from: `privileged` (the simulator's segmentation) or a "
                  "mapping of local model directories, `{detector: DIR, segmenter: DIR}` or "
                  "`{detector: DIR, tracker: DIR}` (docs/perception.md)")
register(NodeType(
    "erase", DECORATOR, "Inpaint the `objects` (distractors) away, with OpenCV's Telea method, in "
    "every image the `vla` leaf below shows its policy.",
    lambda name, child, objects, perception: Erase(
        name, child, objects=list(objects), perception=perception_for(perception)),
    params={"objects": Spec(ANY, doc="entity names or aliases to erase"),
            "perception": Spec(ANY, "privileged", PERCEPTION_DOC)},
    label=lambda p: f"erase {', '.join(map(str, p['objects']))}"))
register(NodeType(
    "paint", DECORATOR, "Overlay `colour` at opacity `alpha` on `object` (the target) in every "
    "image the `vla` leaf below shows its policy.",
    lambda name, child, object, colour, alpha, perception: Paint(
        name, child, objects=[object], colour=colour, alpha=alpha,
        perception=perception_for(perception)),
    params={"object": Spec(ENTITY, doc="the entity to paint"),
            "colour": Spec(ANY, [255, 0, 0], "RGB, 0-255"),
            "alpha": Spec(Float(0.0), 0.5, "opacity of the overlay, 0-1"),
            "perception": Spec(ANY, "privileged", PERCEPTION_DOC)},
    label=lambda p: f"paint {p['object']}"))
register(NodeType(
    "rewrite", DECORATOR, "Change the instruction the `vla` leaf below gives its policy: "
    "`template` replaces it (`${/key}` filled in), then each phrase of `replace` becomes its "
    "value (whole words, any case, longest first).",
    lambda name, child, template, replace: Rewrite(
        name, child, template=template, replace={str(k): str(v) for k, v in replace.items()}),
    params={"template": Spec(TEXT, None, "the new instruction"),
            "replace": Spec(ANY, {}, "phrase -> replacement")},
    label=lambda p: "rewrite instruction"))

SUBTREE = "subtree"
ALL_NODE_NAMES = sorted([*NODE_TYPES, SUBTREE])
