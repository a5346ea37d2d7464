"""The bench runner without a simulator: resume, faulty arms, reports, Wilson intervals, gates.

Episodes are run by `tests.bench.bench_fakes.fake_episode` in real spawned worker processes, so
crashes, hangs and exceptions happen where they would in a real run.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.bench.bench_fakes import fake_episode, threads_episode
from tether.bench.gate import compare, gate
from tether.bench.report import (
    difference,
    summarize,
    wilson,
    write_learning_curve,
    write_markdown,
    write_reports,
)
from tether.bench.runner import EPISODES_FILE, bench, suite_rows
from tether.bench.suite import load_suite
from tether.cli.main import app
from tether.errors import TetherError

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "trees/library/pick_place.yaml"


def make_suite(tmp_path: Path, arms: list[str], seeds: int = 3, timeout: int = 600):
    arm_lines = "\n".join(f"  {a}: {{tree: {TREE}}}" for a in arms)
    path = tmp_path / "suite.yaml"
    path.write_text(f"""suite: fake
timeout: {timeout}
tasks: [libero_goal/put_the_bowl_on_the_plate]
seeds: {seeds}
perturbations: {{none: [], noisy: [pose_noise]}}
arms:
{arm_lines}
""", encoding="utf-8")
    return load_suite(path, ROOT)


def calls(out: Path) -> list[str]:
    path = out / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_resume_skips_finished_episodes(tmp_path):
    suite = make_suite(tmp_path, ["ok"])
    out = tmp_path / "run"
    out.mkdir()
    first = suite.episodes()[:2]
    (out / EPISODES_FILE).write_text("".join(
        json.dumps(fake_episode(ep, str(tmp_path))) + "\n" for ep in first) + '{"torn', "utf-8")
    rows = bench(suite, out, workers=2, execute=fake_episode, progress=False)
    assert [r["key"] for r in rows] == [ep.key for ep in suite.episodes()]
    assert sorted(calls(out)) == sorted(ep.key for ep in suite.episodes()[2:])
    again = bench(suite, out, workers=2, execute=fake_episode, progress=False)
    assert again == rows
    assert len(calls(out)) == len(suite.episodes()) - 2  # nothing ran the second time
    assert (out / EPISODES_FILE).read_text().count("\n") == len(rows)


def test_selections_run_into_one_directory_keep_each_others_rows_and_report_together(tmp_path):
    suite = make_suite(tmp_path, ["ok", "also"], seeds=2)
    out = tmp_path / "run"
    first = bench(suite.select(arms=["ok"]), out, workers=1, execute=fake_episode,
                  progress=False)
    second = bench(suite.select(arms=["also"]), out, workers=1, execute=fake_episode,
                   progress=False)
    assert {r["arm"] for r in first} == {"ok"} and {r["arm"] for r in second} == {"also"}
    assert suite_rows(suite, out) == first + second  # both arms' rows are still there
    assert len(calls(out)) == len(suite.episodes())
    res = CliRunner().invoke(app, ["bench", str(tmp_path / "suite.yaml"), "--out", str(out),
                                   "--arms", "ok"])  # everything resumed: nothing runs
    assert res.exit_code == 0, res.output
    assert len(calls(out)) == len(suite.episodes())
    report = (out / "summary.md").read_text()
    assert "| ok |" in report and "| also |" in report and "not selected" not in report


def test_a_perturbation_selection_runs_only_its_conditions_and_names_them_when_none_match(
        tmp_path):
    suite = make_suite(tmp_path, ["ok"], seeds=2)
    out = tmp_path / "run"
    rows = bench(suite.select(perturbations=["noi*"]), out, workers=1, execute=fake_episode,
                 progress=False)
    assert [r["perturbation"] for r in rows] == ["noisy", "noisy"]
    assert len(calls(out)) == 2
    with pytest.raises(TetherError, match=r"--perturbations glare matches none .*\(none, noisy\)"):
        suite.select(perturbations=["glare"])


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_share_the_cpus_among_their_thread_pools_unless_the_user_said(
        tmp_path, monkeypatch, workers):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cpus = len(os.sched_getaffinity(0))
    rows = bench(make_suite(tmp_path, ["ok"], seeds=2), tmp_path / "run", workers=workers,
                 execute=threads_episode, progress=False)
    assert {row["threads"] for row in rows} == {str(max(1, cpus // workers))}
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    rows = bench(make_suite(tmp_path, ["ok"], seeds=2), tmp_path / "mine", workers=workers,
                 execute=threads_episode, progress=False)
    assert {row["threads"] for row in rows} == {"3"}


def test_faulty_arms_are_episode_errors_and_the_run_goes_on(tmp_path):
    # the timeout also covers a worker's start: 3 s let a loaded machine time the crash out
    suite = make_suite(tmp_path, ["ok", "raises", "hangs", "crashes"], seeds=1, timeout=10)
    rows = bench(suite, tmp_path / "run", workers=2, execute=fake_episode, progress=False)
    by_arm = {}
    for r in rows:
        by_arm.setdefault(r["arm"], []).append(r)
    assert [r["status"] for r in by_arm["ok"]] == ["passed", "passed"]
    for arm, text in [("raises", "RuntimeError: the arm broke"),
                      ("hangs", "timeout: still running after 10 s wall"),
                      ("crashes", "worker crashed (exit code 3)")]:
        assert [r["status"] for r in by_arm[arm]] == ["error", "error"], arm
        assert all(r["error"].startswith(text) for r in by_arm[arm]), by_arm[arm]


def test_a_tree_that_fails_to_compile_is_an_episode_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tree: bad\nroot: {sequence: {children: [{no_such_node: 1}]}}\n")
    path = tmp_path / "suite.yaml"
    path.write_text(f"suite: bad\ntasks: [libero_goal/put_the_bowl_on_the_plate]\n"
                    f"arms: {{broken: {{tree: {bad}}}}}\n")
    rows = bench(load_suite(path, ROOT), tmp_path / "run", workers=1, progress=False)
    assert [r["status"] for r in rows] == ["error"]
    assert "no_such_node" in rows[0]["error"]


def test_wilson_interval_numbers():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(81, 100) == pytest.approx((0.7222, 0.8749), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_reports_and_junit_are_well_formed(tmp_path):
    suite = make_suite(tmp_path, ["ok", "raises"], seeds=2)
    out = tmp_path / "run"
    rows = bench(suite, out, workers=2, execute=fake_episode, progress=False)
    summary = write_reports(rows, out, suite.name)
    assert summary["cells"]["ok|none"]["successes"] == 1
    assert summary["cells"]["ok|none"]["ci95"] == [round(x, 4) for x in wilson(1, 2)]
    assert summary["arms"]["raises"]["errors"] == 4
    assert len(summary["export_problems"]) == 2  # the fake failures recorded no trace.jsonl
    written = json.loads((out / "summary.json").read_text())
    assert written == json.loads(json.dumps({k: v for k, v in summary.items()
                                             if k != "export_problems"}))
    md = (out / "summary.md").read_text().splitlines()
    assert md[0] == "# bench: fake" and "| ok | none | 1/2 | 50% | 9%–91% | 0 |" in md
    assert (out / "success.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.html").read_text().startswith(
        "<!doctype html><meta charset=utf-8><title>bench fake</title>\n")
    root = ET.parse(out / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == len(rows) == 8
    failures = root.findall(".//failure")
    assert len(failures) == 2 and "EMPTY_GRASP" in failures[0].get("message")
    assert "{-} fake tree [✕]" in failures[0].text
    assert "error codes: EMPTY_GRASP" in failures[0].text
    assert len(root.findall(".//error")) == 4
    assert {ts.get("name") for ts in root} == {"fake.ok", "fake.raises"}
    assert not (out / "learning.png").exists()  # no arm's memory persists


def test_learning_curve_when_memory_persists(tmp_path):
    rows = [{"arm": "p", "memory": "persistent", "success": i > 2} for i in range(6)]
    assert write_learning_curve(rows, tmp_path / "learning.png")
    assert (tmp_path / "learning.png").read_bytes()[:4] == b"\x89PNG"


def rows_of(rates: dict[str, tuple[int, int]]) -> list[dict]:
    rows = []
    for cell, (k, n) in rates.items():
        arm, pert = cell.split("|")
        rows += [{"arm": arm, "task": "t", "perturbation": pert, "success": i < k,
                  "status": "passed" if i < k else "failed", "error": None,
                  "error_codes": [], "tree_status": "", "ended_by": "", "key": cell}
                 for i in range(n)]
    return rows


def summary_of(rates: dict[str, tuple[int, int]]) -> dict:
    return summarize(rows_of(rates), "s")


def test_difference_interval_matches_newcombe():
    """Newcombe (1998), method 10, worked example: 56/70 - 48/80 = 0.2 (0.0524, 0.3339)."""
    d, lo, hi = difference(56, 70, 48, 80)
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (0.2, 0.0524, 0.3339)
    assert difference(10, 10, 0, 10)[1:] == pytest.approx((0.6075, 1.0), abs=1e-4)


def test_headline_compares_two_arms_per_perturbation_and_over_the_kinds(tmp_path):
    rows = rows_of({"h|none": (10, 10), "h|swap": (9, 10), "h|glare": (7, 10),
                    "b|none": (5, 10), "b|swap": (2, 10), "b|glare": (4, 10), "x|swap": (1, 10)})
    summary = summarize(rows, "s", ("h", "b"))
    h = summary["headline"]
    assert [(r["perturbation"], r["difference"]) for r in h["perturbations"]] == [
        ("none", 0.5), ("swap", 0.7), ("glare", 0.3)]
    assert h["over_kinds"]["kinds"] == 2  # `none` is not a perturbation kind
    assert h["over_kinds"]["difference"] == 0.5  # (16/20 - 6/20) = mean of +70 and +30 pp
    assert h["over_kinds"]["ci95"] == [round(x, 4) for x in difference(16, 20, 6, 20)[1:]]
    write_markdown(summary, rows, tmp_path / "summary.md")
    text = (tmp_path / "summary.md").read_text()
    assert "## Headline: h vs b" in text
    assert "| **over 2 perturbation kinds** | | | **+50 pp** |" in text
    assert "headline" not in summarize(rows, "s")


def test_gate_and_compare():
    base = summary_of({"a|none": (8, 10), "a|noisy": (5, 10)})
    assert gate(summary_of({"a|none": (8, 10), "a|noisy": (6, 10)}), base) == []
    drops = gate(summary_of({"a|none": (7, 10), "a|noisy": (5, 10)}), base)
    assert drops == ["a|none: 80% -> 70% (-10.0 pp, tolerance 0 pp)"]
    assert gate(summary_of({"a|none": (7, 10), "a|noisy": (5, 10)}), base, 10) == []
    assert gate(summary_of({"a|none": (8, 10)}), base) == [
        "a|noisy: in the baseline but not in this run"]
    diffs = compare(base, summary_of({"a|none": (9, 10), "b|none": (1, 10)}))
    assert [(d.cell, d.delta_pp) for d in diffs] == [("a|none", 10.0), ("a|noisy", None),
                                                     ("b|none", None)]


def test_cli_gate_exit_codes_and_compare(tmp_path):
    """`tether bench` on a finished run (everything resumed) gates on a baseline."""
    suite = make_suite(tmp_path, ["ok"], seeds=2)
    out = tmp_path / "run"
    rows = bench(suite, out, workers=1, execute=fake_episode, progress=False)
    write_reports(rows, out, suite.name)
    better = tmp_path / "better.json"
    better.write_text(json.dumps(summary_of({"ok|none": (2, 2), "ok|noisy": (2, 2)})))
    runner = CliRunner()
    args = ["bench", str(tmp_path / "suite.yaml"), "--out", str(out)]
    res = runner.invoke(app, [*args, "--gate", str(out / "summary.json")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*args, "--gate", str(better)])
    assert res.exit_code == 1
    assert "ok|none: 100% -> 50% (-50.0 pp" in res.output
    res = runner.invoke(app, [*args, "--gate", str(better), "--tolerance", "50"])
    assert res.exit_code == 0
    res = runner.invoke(app, ["bench", "compare", str(out), str(better)])
    assert res.exit_code == 0 and "+50.0" in res.output
    res = runner.invoke(app, ["bench", "no_such_suite"])
    assert res.exit_code == 2 and "no suite 'no_such_suite'" in res.output


def test_a_process_freezes_its_heap_once(monkeypatch):
    from tether.bench import runner

    calls = []
    monkeypatch.setattr(runner, "_frozen", False)
    monkeypatch.setattr(runner.gc, "collect", lambda: calls.append("collect"))
    monkeypatch.setattr(runner.gc, "freeze", lambda: calls.append("freeze"))
    runner._freeze_heap()
    runner._freeze_heap()
    assert calls == ["collect", "freeze"]
