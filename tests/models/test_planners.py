"""Planner backends: `openai` against a real HTTP server process speaking chat-completions, and
`transformers` with a tiny randomly initialised Qwen2.5-VL (slow)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from tests.models.chat_server import free_port, header_log, serving
from tether.errors import TetherError
from tether.models.planners import BackendConfig, ChatMessage, get_backend

PLAN = json.dumps({"subtasks": [{"goal": "g", "steps": [{"wait": 1}]}]})


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("chat") / "requests.jsonl"
    with serving(log, ["not a plan", PLAN]) as url:
        yield url, log


def requests(log: Path) -> list[dict]:
    """The requests the server has logged so far (none before the first one)."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_openai_backend_sends_text_and_images_as_data_urls(server):
    url, log = server
    backend = get_backend("openai", BackendConfig(model="qwen", base_url=url))
    image = np.zeros((8, 8, 3), np.uint8)
    reply = backend.complete([ChatMessage("system", "plan"), ChatMessage("user", "go", [image])])
    assert reply == "not a plan"
    body = requests(log)[-1]
    assert body["model"] == "qwen" and body["messages"][0] == {"role": "system",
                                                               "content": "plan"}
    parts = body["messages"][1]["content"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert parts[1] == {"type": "text", "text": "go"}


def test_openai_backend_sends_the_api_key_as_a_bearer_header(server):
    url, log = server
    config = BackendConfig(model="qwen", base_url=url, api_key="sk-given")
    get_backend("openai", config).complete([ChatMessage("user", "go")])
    assert header_log(log).read_text().splitlines()[-1] == "Bearer sk-given"
    assert "sk-given" not in repr(config)


@pytest.mark.parametrize(("env", "sent"), [("sk-from-env", "Bearer sk-from-env"),
                                           (None, "Bearer EMPTY")])
def test_the_api_key_defaults_to_OPENAI_API_KEY_else_EMPTY(server, monkeypatch, env, sent):
    url, log = server
    if env is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", env)
    get_backend("openai", BackendConfig(model="qwen", base_url=url)).complete(
        [ChatMessage("user", "go")])
    assert header_log(log).read_text().splitlines()[-1] == sent


def test_openai_backend_times_out_and_retries_then_says_so(server):
    url, log = server
    before = len(requests(log))
    backend = get_backend("openai", BackendConfig(model="slow", base_url=url, timeout=0.5,
                                                  retries=1))
    with pytest.raises(TetherError, match=r"did not answer within 0.5 s \(1 retries\)"):
        backend.complete([ChatMessage("user", "go")])
    time.sleep(0.2)
    assert len(requests(log)) - before == 2  # the first try and one retry


def test_openai_backend_reports_a_server_error(server):
    url, _ = server
    backend = get_backend("openai", BackendConfig(model="broken", base_url=url, retries=0))
    with pytest.raises(TetherError, match="answered 500"):
        backend.complete([ChatMessage("user", "go")])


def test_openai_backend_reports_an_unreachable_server():
    backend = get_backend("openai", BackendConfig(model="m", base_url=f"http://127.0.0.1:"
                                                  f"{free_port()}/v1", retries=0, timeout=2))
    with pytest.raises(TetherError, match="cannot reach the planner server"):
        backend.complete([ChatMessage("user", "go")])


def test_an_unknown_backend_is_a_clear_error():
    with pytest.raises(TetherError, match="unknown planner backend 'opneai' .*did you mean "
                                          "'openai'"):
        get_backend("opneai")


# --- transformers: a tiny random Qwen2.5-VL through `tether plan` -----------------------------
@pytest.mark.slow
def test_tether_plan_with_a_tiny_random_qwen_vl_repairs_n_times_then_fails_cleanly(
        tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from tests.models.tiny_qwen_vl import build_tiny_qwen_vl
    from tether.cli.main import app
    from tether.models.qwen_vl import QwenVLChat
    from tether.planning.prompt import system_prompt

    model = build_tiny_qwen_vl(tmp_path / "qwen", [system_prompt()])
    calls: list[list[ChatMessage]] = []
    complete = QwenVLChat.complete

    def spy(self, messages):
        calls.append(list(messages))
        return complete(self, messages)

    monkeypatch.setattr(QwenVLChat, "complete", spy)
    work = tmp_path / "work"
    work.mkdir()
    output = work / "plan.yaml"
    result = CliRunner().invoke(app, [
        "plan", "put the black bowl on the plate", "--task", "libero_goal/8", "-o", str(output),
        "--backend", "transformers", "--model", str(model), "--attempts", "2",
        "--max-tokens", "8"])
    assert result.exit_code == 2, result.output
    assert "no usable plan after 2 replies from the transformers planner; the last one had " \
           "these problems:" in result.output
    assert len(calls) == 2
    assert [m.role for m in calls[1]] == ["system", "user", "assistant", "user"]
    assert calls[1][3].text.startswith("Your plan cannot be used:")
    [image] = calls[0][1].images  # the agentview frame goes with the first user turn
    assert image.shape == (256, 256, 3)
    assert list(work.iterdir()) == []  # no tree file, not even a partial one
