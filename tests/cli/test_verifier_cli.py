"""`--verifier vlm` on `tether run` and `tether do`: the expected effects are judged by a VLM behind
a real chat-completions HTTP server (tests/models/chat_server.py), not by the sim's predicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.models.chat_server import serving
from tests.trees.harness import BOWL, PLATE
from tether.cli.main import app


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    """A server whose every answer is `yes`; yields its /v1 URL and its request log."""
    log = tmp_path_factory.mktemp("judge") / "requests.jsonl"
    with serving(log, ["Yes."]) as url:
        yield url, log


def questions(log: Path) -> list[tuple[str, bool]]:
    """(question text, whether an image came with it) of every request the server logged."""
    found = []
    for line in log.read_text().splitlines() if log.exists() else []:
        content = json.loads(line)["messages"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = " ".join(p.get("text", "") for p in parts if p["type"] == "text")
        found.append((text, any(p["type"] == "image_url" for p in parts)))
    return found


def test_a_vlm_verifier_needs_a_chat_backend_and_a_known_name():
    runner = CliRunner()
    res = runner.invoke(app, ["do", "put the bowl on the plate", "--task", "libero_goal/8",
                              "--verifier", "vlm"])
    assert res.exit_code == 2
    assert "--verifier vlm needs a chat backend" in res.output
    res = runner.invoke(app, ["do", "put the bowl on the plate", "--task", "libero_goal/8",
                              "--verifier", "vml"])
    assert res.exit_code == 2 and "unknown verifier 'vml'" in res.output
    assert "did you mean 'vlm'" in res.output


@pytest.mark.slow
def test_tether_run_asks_the_vlm_not_the_sim(tmp_path, judge):
    url, log = judge
    before = len(questions(log))
    tree = tmp_path / "look.yaml"
    tree.write_text(f"tree: look\nroot:\n  verify: {{predicate: on, object: {BOWL}, "
                    f"target: {PLATE}}}\n")
    res = CliRunner().invoke(app, ["run", str(tree), "--task", "libero_goal/8", "--lines",
                                   "--no-record", "--memory", "none", "--runs", str(tmp_path),
                                   "--verifier", "vlm", "--base-url", url, "--model", "judge"])
    # the bowl is not on the plate at init state 0 (the task fails), but the VLM said yes
    assert res.exit_code == 1, res.output
    assert "tree SUCCESS" in res.output
    asked = questions(log)[before:]
    assert len(asked) == 1 and asked[0][1], asked
    assert "bowl" in asked[0][0] and "plate" in asked[0][0] and "yes or no" in asked[0][0]


@pytest.mark.slow
def test_tether_do_verifies_the_planned_effect_with_the_vlm(tmp_path, judge):
    url, log = judge
    before = len(questions(log))
    res = CliRunner().invoke(app, ["do", "move the black bowl onto the plate", "--task",
                                   "libero_goal/8", "--memory", "none", "--runs", str(tmp_path),
                                   "--verifier", "vlm", "--verifier-backend", "openai",
                                   "--base-url", url, "--model", "judge"])
    assert res.exit_code == 0, res.output
    assert "verified by vlm:openai" in res.output
    asked = questions(log)[before:]
    assert asked and all(image for _, image in asked)
    assert any("on" in q and "plate" in q for q, _ in asked)
