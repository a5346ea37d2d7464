"""A user's policies given only on the command line or in a suite: `tether run` and `tether
bench` with the committed lerobot checkpoint by its folder, and with the same checkpoint served
by `tether serve-policy` in another process (an openpi server, `ws://HOST:PORT`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tests.models.test_remote import free_port
from tether.cli.main import app
from tether.models.policies import POLICIES
from tether.trees.compiler import LIBRARY

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO / "models" / "checkpoints" / "grasp_act"
TASK = "libero_goal/put_the_bowl_on_the_plate"
STEPS = 10  # the vla leaf's budget in the bare tree: it fails with BUDGET_EXHAUSTED after them
runner = CliRunner()


@pytest.fixture(scope="module")
def served():
    """`tether serve-policy CHECKPOINT` in another process; its URL once it listens."""
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "tether"), "serve-policy",
                             str(CHECKPOINT), "--port", str(port)], cwd=REPO,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.5)
        yield f"ws://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(20)


def run_bare(tmp_path: Path, *options: str) -> dict:
    result = runner.invoke(app, ["run", str(LIBRARY / "vla_bare.yaml"), "--task", TASK,
                                 "--with", "policy=mine", "--with", f"steps={STEPS}",
                                 "--budget", "50", "--lines", "--no-record", "--memory", "none",
                                 "--runs", str(tmp_path), *options])
    assert result.exit_code == 1, result.output  # ten steps do not lift the bowl
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    return json.loads((run_dir / "result.json").read_text())["result"]


def test_bad_policy_options_are_usage_errors(tmp_path):
    result = runner.invoke(app, ["run", str(LIBRARY / "vla_bare.yaml"), "--task", TASK,
                                 "--policy", f"mine={tmp_path}"])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: --policy mine={tmp_path}: {tmp_path} is not a "
                                     "lerobot checkpoint (no config.json)")


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["checkpoint", "server"])
def test_run_drives_the_vla_leaf_with_a_policy_named_on_the_command_line(tmp_path, spec,
                                                                         request):
    url = request.getfixturevalue("served") if spec == "server" else str(CHECKPOINT)
    result = run_bare(tmp_path, "--policy", f"mine={url}", "--device", "cpu")
    assert result["steps"] == STEPS
    assert [(e["code"], e["node"]) for e in result["errors"]] == [
        ("BUDGET_EXHAUSTED", "mine end to end")]
    assert "mine" not in POLICIES  # named for the run only


@pytest.mark.slow
def test_bench_runs_a_suites_checkpoint_and_a_served_policy_from_the_command_line(tmp_path,
                                                                                  served):
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"""
suite: policies
budget: 50
tasks: [{TASK}]
policies:
  local: {CHECKPOINT}
arms:
  local: {{tree: vla_bare, with: {{policy: local, steps: {STEPS}}}}}
  served: {{tree: vla_bare, with: {{policy: remote, steps: {STEPS}}}}}
""", encoding="utf-8")
    result = runner.invoke(app, ["bench", str(suite), "--workers", "1", "--out",
                                 str(tmp_path / "out"), "--policy", f"remote={served}"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in
            (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    assert [(r["arm"], r["status"], r["steps"], r["error_codes"]) for r in rows] == [
        ("local", "failed", STEPS, ["BUDGET_EXHAUSTED"]),
        ("served", "failed", STEPS, ["BUDGET_EXHAUSTED"])]
