"""`tether/memory/llm_diagnosis.py` against a real chat-completions HTTP server process
(tests/models/chat_server.py): a usable reply is the diagnosis; anything else falls back to the
rules and says why. Also the LLM diagnoser in consolidation after a kinematic episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.models.chat_server import serving
from tether.blackboard.events import Event
from tether.memory.experience import RULES
from tether.memory.llm_diagnosis import LLMDiagnoser
from tether.memory.store import ExperienceStore
from tether.models.planners import BackendConfig, get_backend
from tether.scenes.obstacles import SHELF_INSTRUCTION, SHELF_TASK, shelf_scene
from tether.session.memory import practice
from tether.trees.compiler import LIBRARY

GOOD = {"cause": "the shelf blocks a top-down approach", "remedy": {"approach": [0, -0.1, 0]}}
REPLIES = [
    json.dumps(GOOD),
    "The approach was blocked; try from the side.",
    json.dumps({"cause": "too slow", "remedy": {"speed": 2.0}}),
    json.dumps({"cause": "one more try", "remedy": {"grasp_attempts": "3"}}),
    json.dumps({"cause": "blocked", "remedy": {"approach": [-0.1, 0, 0]}}),
    json.dumps({"cause": "blocked", "remedy": {"approach": [0, -0.1]}}),
    "```json\n" + json.dumps({"cause": "slipped", "remedy": {"grasp_attempts": 3}}) + "\n```",
    json.dumps({"cause": "blocked", "remedy": {"approach": [0, 0, 0.1]}}),
]
STUCK = {"code": "STUCK", "node": "reach grasp point", "message": "no progress", "step": 55}
PARAMS = {"approach": [0.0, 0.0, 0.1], "grasp_attempts": 2}
TRIED = {"approach": [[-0.1, 0.0, 0.0]]}
RULES_REMEDY = {"approach": [0.1, 0.0, 0.0]}  # the next untried direction
EVENTS = [Event(step=12, node="approach cheese", action="move_to", args="cheese+[0, 0, 0.1]"),
          Event(step=55, node="reach grasp point", action="move_to", outcome="FAILURE",
                feedback="no progress", error="STUCK")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The chat server; model `reply-N` answers REPLIES[N]. Yields its URL and request log."""
    log = tmp_path_factory.mktemp("diagnoser") / "requests.jsonl"
    with serving(log, REPLIES) as url:
        yield url, log


def diagnoser(server, model: str, **config) -> LLMDiagnoser:
    url, _ = server
    return LLMDiagnoser(get_backend("openai", BackendConfig(model=model, base_url=url,
                                                            **config)))


def ask(server, model: str, **config):
    return diagnoser(server, model, **config)(success=False, errors=[STUCK], ended_by="tree",
                                              params=PARAMS, tried=TRIED, events=EVENTS)


def last_prompt(log: Path) -> list[str]:
    """The texts of the last request's messages."""
    body = json.loads(log.read_text().splitlines()[-1])
    return [m["content"] if isinstance(m["content"], str)
            else " ".join(p.get("text", "") for p in m["content"]) for m in body["messages"]]


def test_a_good_reply_is_the_diagnosis_and_the_prompt_has_errors_events_and_params(server):
    d = ask(server, "reply-0")
    assert d.cause == GOOD["cause"] and d.remedy == {"approach": [0.0, -0.1, 0.0]}
    assert (d.error, d.node) == ("STUCK", "reach grasp point")
    system, user = last_prompt(server[1])
    assert '"remedy"' in system and "JSON" in system
    assert "- STUCK in 'reach grasp point' at step 55: no progress" in user
    assert "At step 55, reach grasp point (move_to) failed with STUCK: no progress." in user
    assert "- approach: [0.0, 0.0, 0.1]" in user and "- grasp_attempts: 2" in user
    assert "Already tried (and failed):\n- approach: [-0.1, 0.0, 0.0]" in user


@pytest.mark.parametrize(("model", "reason"), [
    ("reply-1", "not JSON (Expecting value)"),
    ("reply-2", "unknown parameter 'speed' (memory may change: approach, grasp_attempts)"),
    ("reply-3", 'grasp_attempts must be an integer, got "3"'),
    ("reply-4", "approach=[-0.1, 0.0, 0.0] was already tried"),
    ("reply-5", "approach must be a list of 3, got [0, -0.1]"),
    ("reply-7", "approach=[0.0, 0.0, 0.1] is the value that just failed"),
    ("broken", "the backend failed: the planner server"),
])
def test_an_unusable_reply_falls_back_to_the_rules_and_says_why(server, model, reason):
    d = ask(server, model, retries=0)
    assert d.cause.startswith(f"(LLM diagnosis unusable: {reason}")
    assert d.cause.endswith("; rule-based:) the motion was blocked in 'reach grasp point' at "
                            "step 55: no progress")
    assert d.remedy == RULES_REMEDY


def test_a_backend_timeout_falls_back_to_the_rules(server):
    d = ask(server, "slow", timeout=0.5, retries=0)
    assert d.cause.startswith("(LLM diagnosis unusable: the backend failed: ")
    assert "did not answer within 0.5 s" in d.cause and d.remedy == RULES_REMEDY


def test_a_json_reply_in_a_code_fence_is_read(server):
    assert ask(server, "reply-6").remedy == {"grasp_attempts": 3}


def test_a_success_is_not_sent_to_the_llm(server):
    _, log = server
    before = len(log.read_text().splitlines()) if log.exists() else 0
    d = diagnoser(server, "reply-0")(success=True, errors=[], ended_by="tree", params=PARAMS,
                                     tried={})
    assert d.cause == "the task succeeded" and d.remedy == {}
    assert (len(log.read_text().splitlines()) if log.exists() else 0) == before


def test_consolidation_after_a_kinematic_episode_uses_the_llm_diagnosis(server, tmp_path):
    store = ExperienceStore(tmp_path / "memory.db", "hashing")
    tree = LIBRARY / "recall_pick_place.yaml"
    result, report = practice(tree, shelf_scene(0), store, task=SHELF_TASK,
                              instruction=SHELF_INSTRUCTION, budget=600, run_id="ep0",
                              diagnoser=diagnoser(server, "reply-0"))
    assert not result.success and report.diagnosis == GOOD["cause"]
    rule = store.get(report.rule)
    assert rule.partition == RULES and rule.params == {"approach": [0.0, -0.1, 0.0]}
    assert GOOD["cause"] in rule.diagnosis
    _, user = last_prompt(server[1])
    assert "At step " in user and "STUCK" in user and "- approach: [0.0, 0.0, 0.1]" in user
    # the next episode follows the LLM's rule: from -y the cheese is reachable
    result, report = practice(tree, shelf_scene(1), store, task=SHELF_TASK,
                              instruction=SHELF_INSTRUCTION, budget=600, run_id="ep1",
                              diagnoser=diagnoser(server, "reply-0"))
    assert result.success and report.evidence == [rule.id]
