"""`tether run --task FILE.bddl` on LIBERO-PRO robustness files: the section is applied and
reported, and a mistake in it is one located error line (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.trees.compiler import LIBRARY

TETHER = str(Path(sys.executable).parent / "tether")
FIXTURES = Path(__file__).parents[1] / "scenes" / "liberopro"

pytestmark = pytest.mark.slow


def tether_run(runs: Path, task: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TETHER, "run", str(LIBRARY / "pick_place.yaml"), "--task", str(task),
                           "--runs", str(runs), "--memory", "none", "--lines", *args],
                          capture_output=True, text=True, timeout=900)


def test_a_case_file_runs_perturbed_and_the_run_says_by_what(tmp_path):
    done = tether_run(tmp_path, FIXTURES / "01_visual_noise_glare.bddl", "--budget", "3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "perturbed by light_levels, image_noise:" in done.stdout
    (run,) = tmp_path.glob("*/trace.jsonl")
    header = json.loads(run.read_text().splitlines()[0])
    assert header["perturbations"] == ["light_levels", "image_noise"]
    result = json.loads((run.parent / "result.json").read_text())
    assert result["perturbations"] == ["light_levels", "image_noise"]


def test_a_bad_key_in_the_section_is_one_located_error_line(tmp_path):
    bad = tmp_path / "bad.bddl"
    text = (FIXTURES / "06_object_shape.bddl").read_text()
    bad.write_text(text.replace("(:mesh_scale 0.5 0.5 0.5)", "(:mesh_scael 0.5 0.5 0.5)"))
    done = tether_run(tmp_path, bad)
    line = next(i for i, row in enumerate(bad.read_text().splitlines(), 1) if "scael" in row)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad}:{line}:") and done.stderr.count("\n") == 1
    assert ":object_shape has no key ':mesh_scael' (did you mean 'mesh_scale'?)" in done.stderr
