"""`tether plan --backend openai` against a real chat-completions server process
(tests/models/chat_server.py): `--api-key` reaches it as the bearer header, and `-q`/`-v` choose
which of the library's log lines show (slow: each plan opens a LIBERO scene)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.models.chat_server import header_log, serving
from tether.cli.main import app

PLAN = json.dumps({"subtasks": [{"goal": "wait a moment", "steps": [{"wait": 1}]}]})
REPAIRED = "reply 1 of 3 from the openai planner"  # INFO, from tether.planning.llm
ASKED = "tether.models.openai_chat: asking"  # DEBUG, from tether.models.openai_chat


@pytest.fixture
def server(tmp_path):
    """A fresh server whose first reply is no plan (so the planner repairs) and then a plan."""
    log = tmp_path / "requests.jsonl"
    with serving(log, ["not a plan", PLAN]) as url:
        yield url, log


def plan(tmp_path, url: str, *, app_options: tuple[str, ...] = (),
         options: tuple[str, ...] = (), env: dict[str, str | None] | None = None):
    """`tether APP_OPTIONS plan ... OPTIONS` with the given environment changes."""
    return CliRunner().invoke(app, [*app_options, "plan", "put the bowl on the plate", "--task",
                                    "libero_goal/8", "--backend", "openai", "--model", "m",
                                    "--base-url", url, "-o", str(tmp_path / "plan.yaml"),
                                    *options], env=env, terminal_width=200)


@pytest.mark.slow
def test_the_api_key_reaches_the_server_from_the_flag_before_the_environment(tmp_path, server):
    url, log = server
    res = plan(tmp_path, url, options=("--api-key", "sk-flag"),
               env={"OPENAI_API_KEY": "sk-env"})
    assert res.exit_code == 0, res.output
    assert header_log(log).read_text().splitlines() == ["Bearer sk-flag", "Bearer sk-flag"]


@pytest.mark.slow
def test_the_api_key_reaches_the_server_from_the_environment(tmp_path, server):
    url, log = server
    res = plan(tmp_path, url, env={"OPENAI_API_KEY": "sk-env"})
    assert res.exit_code == 0, res.output
    assert header_log(log).read_text().splitlines() == ["Bearer sk-env", "Bearer sk-env"]


@pytest.mark.slow
@pytest.mark.parametrize(("app_options", "info", "debug"), [
    ((), True, False), (("-q",), False, False), (("-v",), True, True)])
def test_quiet_silences_info_and_verbose_shows_debug(tmp_path, server, app_options, info, debug):
    url, _ = server
    res = plan(tmp_path, url, app_options=app_options)
    assert res.exit_code == 0, res.output
    assert (REPAIRED in res.stderr, ASKED in res.stderr) == (info, debug)
    assert res.stdout.startswith("planned by openai: wait a moment\n")
