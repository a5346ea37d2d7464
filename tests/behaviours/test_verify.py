"""Tick contract of `verify` (`behaviours/verify.py`): an expected effect checked once through
the sim's predicates or a VLM verifier, with strict answers and clear error codes."""

from __future__ import annotations

import pytest

from tests.behaviours.verifier_fakes import EyeBackend, holding_scene
from tests.trees.harness import BOWL, PLATE, compile_node, errors, run, scene
from tether.behaviours.services import Services
from tether.behaviours.verifier import VLMVerifier
from tether.models.vlm_judge import VLMJudge


def verify(tmp_path, robot, body: str, verifier=None):
    root = compile_node(tmp_path, f"verify: {{{body}, name: v}}", robot)
    result, _ = run(root, robot, services=Services(verifier=verifier))
    if verifier is not None:
        verifier.close()
    return result.tree_status, [(e["code"], e["message"]) for e in errors()]


def test_verify_succeeds_when_the_predicate_holds_in_the_sim(tmp_path):
    assert verify(tmp_path, holding_scene(), f"predicate: grasped, object: {BOWL}") == (
        "SUCCESS", [])


def test_verify_fails_with_condition_failed_by_default(tmp_path):
    assert verify(tmp_path, scene(), f"predicate: grasped, object: {BOWL}") == (
        "FAILURE", [("CONDITION_FAILED", f"grasped({BOWL}) does not hold (sim)")])


def test_verify_writes_the_given_error_code(tmp_path):
    status, errs = verify(tmp_path, scene(),
                          f"predicate: grasped, object: {BOWL}, error: EMPTY_GRASP")
    assert status == "FAILURE" and errs[0][0] == "EMPTY_GRASP"


@pytest.mark.parametrize(("held", "status"), [(True, "SUCCESS"), (False, "FAILURE")])
def test_verify_with_a_vlm_asks_it_about_the_camera_image(tmp_path, held, status):
    backend = EyeBackend()
    robot = holding_scene()
    if not held:
        robot.held = None
    got, _ = verify(tmp_path, robot, f"predicate: grasped, object: {BOWL}, verifier: vlm",
                    VLMVerifier(VLMJudge(backend)))
    assert got == status
    assert backend.questions == ["Look at the image. Is it true that both fingers touch "
                                 f"{BOWL}?\nAnswer with exactly one word, yes or no."]


def test_verify_auto_uses_the_runs_vlm_verifier_when_there_is_one(tmp_path):
    backend = EyeBackend(yes_word="no")  # the VLM disagrees with the sim
    status, errs = verify(tmp_path, holding_scene(), f"predicate: grasped, object: {BOWL}",
                          VLMVerifier(VLMJudge(backend)))
    assert status == "FAILURE" and errs == [
        ("CONDITION_FAILED", f"grasped({BOWL}) does not hold (vlm:eye)")]
    assert len(backend.questions) == 1


def test_verify_sends_its_question_with_blackboard_values_filled_in(tmp_path):
    backend = EyeBackend()
    robot = holding_scene()
    root = compile_node(tmp_path, f"""
        sequence:
          - set: {{key: thing, value: the black bowl}}
          - verify: {{predicate: on, object: {BOWL}, target: {PLATE}, verifier: vlm,
                      question: "Is ${{/user/thing}} on the plate?"}}
        """, robot)
    verifier = VLMVerifier(VLMJudge(backend))
    run(root, robot, services=Services(verifier=verifier))
    verifier.close()
    assert backend.questions[0].startswith("Is the black bowl on the plate?\n")


@pytest.mark.parametrize("reply", ["The bowl is held.", "yes, it is", "", "Yes. No."])
def test_verify_fails_with_verifier_error_on_an_unparseable_answer(tmp_path, reply):
    status, errs = verify(tmp_path, holding_scene(), f"predicate: grasped, object: {BOWL}",
                          VLMVerifier(VLMJudge(EyeBackend(yes_word=reply))))
    assert status == "FAILURE"
    assert errs == [("VERIFIER_ERROR", f"vlm:eye: unparseable verifier answer {reply!r} "
                                       f"(expected yes or no)")]


def test_verify_with_a_vlm_in_a_scene_without_camera_fails_with_verifier_error(tmp_path):
    status, errs = verify(tmp_path, scene(), f"predicate: grasped, object: {BOWL}",
                          VLMVerifier(VLMJudge(EyeBackend())))
    assert (status, errs) == ("FAILURE", [
        ("VERIFIER_ERROR", "vlm:eye: the scene has no camera 'agentview' to show the verifier")])


def test_verify_vlm_without_a_vlm_verifier_fails_with_verifier_error(tmp_path):
    assert verify(tmp_path, holding_scene(), f"predicate: grasped, object: {BOWL}, "
                                             "verifier: vlm") == (
        "FAILURE", [("VERIFIER_ERROR", "verifier: vlm, but this run has no VLM verifier")])
