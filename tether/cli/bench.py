"""`tether bench`: run a benchmark suite, gate on a baseline, compare two runs.

    tether bench SUITE [--workers N] [--out DIR] [--backend process|ray] [--gate BASE.json]
        [--policy NAME=SPEC]... [--policies FILE] [--device cpu|cuda|mps] [--record-dataset DIR]
    tether bench compare A B          A, B: bench run directories or summary.json files

SUITE is a suite file or the name of a shipped one (tether/bench/suites/: smoke, perturbed,
long_horizon, learning). The run directory (default runs/bench/SUITE) keeps finished episodes,
so running again resumes; `--fresh` starts over. `--policy`/`--policies` add to the suite's
`policies:` (a name given in both is the command line's). `--no-reuse-scenes` builds every
episode's scene afresh instead of resetting the worker's last one (the results are the same
either way).
Exit codes: 0 done (and the gate holds), 1 the gate found a drop (or, with --strict, an episode
failed), 2 usage or input errors.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tether.cli.options import (
    DeviceOpt,
    PoliciesOpt,
    PolicyOpt,
    RecordDatasetOpt,
    err,
    out,
    policies_from,
)
from tether.errors import TetherError


def _cell(c: dict | None) -> str:
    return f"{c['successes']}/{c['episodes']} ({100 * c['rate']:.0f}%)" if c else "-"


def _compare(a: str, b: str) -> None:
    from tether.bench.gate import compare, load_summary

    diffs = compare(load_summary(a), load_summary(b))
    table = Table("arm | perturbation", "A", "B", "Δ pp", title=f"A = {a}, B = {b}")
    for d in diffs:
        delta = d.delta_pp
        shown = "-" if delta is None else (f"[red]{delta:+.1f}[/]" if delta < 0 else
                                           f"[green]{delta:+.1f}[/]" if delta > 0 else "0.0")
        table.add_row(d.cell, _cell(d.a), _cell(d.b), shown)
    out.print(table)


def bench(
    target: Annotated[list[str], typer.Argument(
        metavar="SUITE | compare A B", help="A suite (file or shipped name), or `compare A B`.")],
    workers: Annotated[int | None, typer.Option(
        "--workers", "-j", min=1, help="Episodes at a time (default: all cores).")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Run directory (default runs/bench/SUITE).")] = None,
    backend: Annotated[str, typer.Option(help="process (local workers) or ray.")] = "process",
    address: Annotated[str | None, typer.Option(
        help="Ray cluster address (default: a local Ray with --workers CPUs).")] = None,
    timeout: Annotated[float | None, typer.Option(
        min=1, help="Wall seconds per episode before it is killed (default: the suite's).")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Delete the run directory first.")] = False,
    reuse_scenes: Annotated[bool, typer.Option(
        help="A worker resets its scene for its next episode instead of building it again, "
             "when that gives the same episode (same task and scene-stage perturbations).")
    ] = True,
    gate: Annotated[Path | None, typer.Option(
        metavar="BASELINE.json", help="Exit 1 when a cell's success drops below the baseline's "
                                      "by more than --tolerance.")] = None,
    tolerance: Annotated[float, typer.Option(help="Allowed drop per cell (percentage points).")
                         ] = 0.0,
    strict: Annotated[bool, typer.Option(help="Also exit 1 when any episode failed.")] = False,
    tasks: Annotated[list[str] | None, typer.Option(
        "--tasks", metavar="GLOB", help="Run only the suite's tasks whose SUITE/TASK id or "
                                        "suite/set name matches (repeatable), e.g. "
                                        "'libero_goal_*'.")] = None,
    arms: Annotated[list[str] | None, typer.Option(
        "--arms", metavar="ARM", help="Run only these arms of the suite (repeatable).")] = None,
    perturbations: Annotated[list[str] | None, typer.Option(
        "--perturbations", metavar="GLOB", help="Run only the suite's perturbation conditions "
                                                "whose name matches (repeatable).")] = None,
    policy: PolicyOpt = None,
    policies: PoliciesOpt = None,
    device: DeviceOpt = None,
    record_dataset: RecordDatasetOpt = None,
) -> None:
    """Run a benchmark suite (episodes in parallel, resumable) and write its reports."""
    from tether.bench.gate import gate as gate_check
    from tether.bench.gate import load_summary
    from tether.bench.report import write_reports
    from tether.bench.runner import bench as run_bench
    from tether.bench.runner import run_episode, suite_rows
    from tether.bench.suite import load_suite

    if target[0] == "compare":
        if len(target) != 3:
            raise TetherError("usage: tether bench compare A B")
        _compare(target[1], target[2])
        return
    if len(target) != 1:
        raise TetherError(f"expected one suite, got {' '.join(target)}")
    whole = load_suite(target[0], device=device)
    whole = replace(whole, policies={**whole.policies,
                                     **policies_from(policy, policies, device)})
    suite = (whole.select(tasks, arms, perturbations) if tasks or arms or perturbations
             else whole)
    baseline = load_summary(gate) if gate else None
    run_dir = out_dir or Path("runs/bench") / suite.name
    if fresh:
        shutil.rmtree(run_dir, ignore_errors=True)
    for why in suite.skipped.values():
        err.print(f"[yellow]{why}[/]", markup=True)
    run_bench(suite, run_dir, workers=workers, backend=backend, address=address,
              timeout=timeout, record_dataset=record_dataset,
              execute=partial(run_episode, reuse=reuse_scenes,
                              rollouts=record_dataset is not None))
    # the report is the run directory's: every episode of the suite run there so far
    rows = suite_rows(whole, run_dir)
    ran = {r["arm"] for r in rows}
    spec = replace(whole, skipped={a: why for a, why in suite.skipped.items() if a not in ran},
                   headline=whole.headline if set(whole.headline or ("",)) <= ran else None)
    summary = write_reports(rows, run_dir, spec.name, spec.headline, spec=spec)
    out.print((run_dir / "summary.md").read_text(encoding="utf-8"), markup=False)
    for problem in summary["export_problems"]:
        err.print(f"[yellow]replay not exported: {problem}[/]", markup=True)
    out.print(f"reports in {run_dir}/: summary.md, summary.json, junit.xml, success.png, "
              "report.html, episodes.jsonl")
    code = 0
    if baseline is not None:
        drops = gate_check(summary, baseline, tolerance)
        for d in drops:
            err.print(f"[bold red]gate:[/] {d}", markup=True)
        if drops:
            code = 1
        else:
            out.print(f"gate: no cell dropped more than {tolerance:g} pp below {gate}")
    if strict and any(not r["success"] for r in rows):
        code = 1
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add the `bench` verb to the tether app."""
    app.command()(bench)
