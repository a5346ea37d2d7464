"""Every exit code of `tether run`, through the installed `tether` console script in a subprocess:
0 the task succeeded, 1 it failed, 2 a user error (one `error:` line), 130 interrupted (one
`interrupted` line). Never a traceback. Slow: LIBERO episodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tether.trees.compiler import LIBRARY

TETHER = str(Path(sys.executable).parent / "tether")
TASK = "libero_goal/put_the_bowl_on_the_plate"

pytestmark = pytest.mark.slow


def tether_run(runs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TETHER, "run", *args, "--runs", str(runs), "--memory", "none",
                           "--lines"], capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize(("budget", "code", "verdict"), [((), 0, "SUCCESS"),
                                                         (("--budget", "5"), 1, "FAILURE")])
def test_run_exits_0_when_the_task_succeeds_and_1_when_it_fails(tmp_path, budget, code, verdict):
    done = tether_run(tmp_path, str(LIBRARY / "pick_place.yaml"), "--task", TASK, "--seed", "0",
                      "--no-record", *budget)
    assert done.returncode == code, done.stdout + done.stderr
    assert f"{verdict}  task {TASK} (init state 0)" in done.stdout
    assert "Traceback" not in done.stderr


def test_run_until_goal_stops_when_the_goal_holds_before_the_tree_finishes(tmp_path):
    """LIBERO's protocol: the bowl is on the plate while the tree still lets go and verifies."""
    done = tether_run(tmp_path, str(LIBRARY / "pick_place.yaml"), "--task", TASK, "--seed", "0",
                      "--no-record", "--until-goal")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS  task {TASK} (init state 0)" in done.stdout
    assert "tree RUNNING (stopped: the goal holds)" in done.stdout


def test_run_exits_2_with_one_error_line_for_a_malformed_tree(tmp_path):
    tree = tmp_path / "broken.yaml"
    tree.write_text("root:\n  sequence: [\n")
    done = tether_run(tmp_path, str(tree), "--task", TASK)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "broken.yaml:3:1: YAML: expected the node content" in done.stderr


def test_run_exits_2_with_one_error_line_for_an_unknown_task(tmp_path):
    done = tether_run(tmp_path, str(LIBRARY / "pick_place.yaml"), "--task", "libero_goal/nope")
    assert done.returncode == 2
    assert done.stderr == ("error: suite 'libero_goal' has no task 'nope'; `tether scenes list` "
                           "lists them\n")


def at_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a test run started in the background (CI, `cmd &`)
    ignores SIGINT, and a child would inherit that and never be interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_run_exits_130_on_ctrl_c_and_the_trace_says_why_it_ended(tmp_path):
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as err:
        proc = subprocess.Popen([TETHER, "run", str(LIBRARY / "pick_place.yaml"), "--task", TASK,
                                 "--runs", str(tmp_path / "runs"), "--memory", "none", "--lines"],
                                stdout=subprocess.PIPE, stderr=err, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                preexec_fn=at_a_terminal)
        assert proc.stdout is not None
        for line in proc.stdout:  # TipLines prints `step ...` once the episode ticks
            if line.startswith("step"):
                break
        proc.send_signal(signal.SIGINT)
        proc.stdout.read()
        code = proc.wait(timeout=300)
    assert code == 130
    printed = stderr.read_text()
    assert printed.splitlines()[-1] == "interrupted" and printed.count("interrupted") == 1
    assert "Traceback" not in printed
    (run_dir,) = (tmp_path / "runs").iterdir()
    end = json.loads((run_dir / "trace.jsonl").read_text().splitlines()[-1])
    assert end["k"] == "end" and end["aborted"].startswith("KeyboardInterrupt")


def test_run_exits_2_with_one_located_line_for_an_error_raised_while_ticking(tmp_path):
    """A tree that reads a blackboard key nobody wrote is a tree error (2), not a failed task (1):
    one line naming the node's path and its file:line, and the trace ends aborted with it."""
    tree = tmp_path / "nobody.yaml"
    tree.write_text("tree: nobody\nroot:\n  sequence:\n    - wait: {steps: 2}\n"
                    "    - move_to: {target: {object: '${/user/nobody}'}}\n")
    done = tether_run(tmp_path / "runs", str(tree), "--task", TASK)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (f"error: {tree}:5: in 'sequence/move_to ${{/user/nobody}}': "
                           "blackboard key '/user/nobody' has not been written\n")
    (run_dir,) = (tmp_path / "runs").iterdir()
    end = json.loads((run_dir / "trace.jsonl").read_text().splitlines()[-1])
    assert end["aborted"] == "TickError: " + done.stderr.removeprefix("error: ").strip()
