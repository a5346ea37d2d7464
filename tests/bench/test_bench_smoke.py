"""The `smoke` suite on real LIBERO episodes (the CI gate), determinism, and Ray equality.

The smoke run (4 episodes, 1 worker) is shared. Its one worker runs them in suite order, so
seed 1 of each perturbation runs in seed 0's scene, reset (`SceneCache`). Determinism reruns the
last of them alone in a new worker, which builds its scene afresh, and the Ray backend reruns it
again; all three rows must be identical apart from wall time.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from tether.bench.report import write_reports
from tether.bench.runner import bench
from tether.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench_smoke")]


def timeless(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in rows]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    suite = load_suite("smoke", ROOT)
    rows = bench(suite, out, workers=1, progress=False)
    return suite, out, rows, write_reports(rows, out, suite.name)


def one_episode(suite):
    """The smoke suite cut down to its last episode (perturbed, seed 1)."""
    return replace(suite, seeds=(1,), perturbations={"pose_noise": suite.perturbations[
        "pose_noise"]})


def test_smoke_suite_passes(smoke):
    suite, out, rows, summary = smoke
    assert [r["status"] for r in rows] == ["passed"] * len(suite.episodes()), rows
    assert summary["arms"]["analytic"]["rate"] == 1.0
    assert len(ET.parse(out / "junit.xml").getroot().findall(".//testcase")) == len(rows)
    assert all((out / r["trace"] / "trace.jsonl").is_file() for r in rows)


def test_an_episode_in_a_fresh_scene_gives_the_row_of_the_reused_scene(smoke, tmp_path):
    suite, _, rows, _ = smoke
    again = bench(one_episode(suite), tmp_path, workers=1, progress=False)
    assert timeless(again) == timeless([rows[-1]])


def test_ray_backend_gives_identical_rows(smoke, tmp_path):
    suite, _, rows, _ = smoke
    # a Ray episode's wall clock also runs while its worker process starts and imports
    on_ray = bench(one_episode(suite), tmp_path, workers=1, backend="ray", progress=False,
                   timeout=900)
    assert timeless(on_ray) == timeless([rows[-1]])
