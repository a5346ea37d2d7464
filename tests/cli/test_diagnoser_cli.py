"""`--diagnoser llm` on `tether run` and `tether do`: a failed episode is diagnosed for memory by
an LLM behind a real chat-completions HTTP server (tests/models/chat_server.py)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.models.chat_server import serving
from tests.trees.harness import BOWL, PLATE
from tether.cli.main import app
from tether.memory.store import ExperienceStore

CAUSE = "the bowl was never picked up"


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    """A server whose every answer is a diagnosis without a remedy; yields its URL and log."""
    log = tmp_path_factory.mktemp("diagnoser") / "requests.jsonl"
    with serving(log, [json.dumps({"cause": CAUSE, "remedy": {}})]) as url:
        yield url, log


def test_an_llm_diagnoser_needs_a_chat_backend_and_a_known_name():
    runner = CliRunner()
    res = runner.invoke(app, ["do", "put the bowl on the plate", "--task", "libero_goal/8",
                              "--diagnoser", "llm"])
    assert res.exit_code == 2
    assert "--diagnoser llm needs a chat backend (openai, transformers)" in res.output
    res = runner.invoke(app, ["run", "trees/library/pick_place.yaml", "--task", "libero_goal/8",
                              "--diagnoser", "lmm"])
    assert res.exit_code == 2 and "unknown diagnoser 'lmm'" in res.output
    assert "did you mean 'llm'" in res.output


@pytest.mark.slow
def test_tether_run_consolidates_with_the_llm_diagnosis(tmp_path, llm):
    url, log = llm
    tree = tmp_path / "look.yaml"
    tree.write_text(f"tree: look\nroot:\n  verify: {{predicate: on, object: {BOWL}, "
                    f"target: {PLATE}}}\n")
    res = CliRunner().invoke(app, ["run", str(tree), "--task", "libero_goal/8", "--lines",
                                   "--no-record", "--memory", str(tmp_path / "m.db"), "--runs",
                                   str(tmp_path), "--diagnoser", "llm", "--base-url", url,
                                   "--model", "diagnoser"])
    assert res.exit_code == 1, res.output  # the bowl is not on the plate at init state 0
    assert f"diagnosis: {CAUSE}" in res.output
    [failure] = ExperienceStore(tmp_path / "m.db").all("failures")
    assert failure.diagnosis == CAUSE
    prompt = json.loads(log.read_text().splitlines()[-1])["messages"][-1]["content"]
    assert "Outcome: failure" in prompt and "At step " in prompt
