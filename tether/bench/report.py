"""The reports of a bench run, all written into its run directory from the episode rows.

    summary.json   cells (arm x perturbation), tasks (arm x task), sets (arm x the task's
                   suite or LIBERO-PRO set), arms: episodes, successes, errors, rate, 95%
                   Wilson CI; failures (arm x set: failed episodes by cause, the last error
                   code); with the suite's `headline` (arm, baseline),
                   their difference per perturbation and over the perturbation kinds, with
                   Newcombe's 95% interval of a difference of proportions
    summary.md     the same as Markdown tables (the headline first): the arms with their
                   perception mode (and those not run, with what they need), success per set
                   when the suite spans several, the suite's `published` numbers beside them
                   with their source, failures by cause per set, and each failure with a link to
                   its trace
    junit.xml      one testcase per episode; a failure's text is its final tree snapshot
                   (tree.txt) and its error codes; an episode that crashed or hung is an <error>
    success.png    success by perturbation per arm with 95% Wilson intervals
    learning.png   when an arm's memory persists: its running success rate over the episodes
                   in suite order (the order memory saw them), beside the other arms'
    report.html    the table and, for each failure, its replay exported by `tether export`

`summarize(rows)` and `wilson(k, n)` are what the gate and tests use.
"""

from __future__ import annotations

import html
import json
import math
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.bench.suite import Suite

Z95 = 1.959964
PERCEPTION_WORDS = {"privileged": "privileged (simulator poses)",
                    "camera": "camera (perception models on RGB-D)"}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (0, 1 when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def difference(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """k1/n1 - k2/n2 and its 95% interval (Newcombe's hybrid score method, from the two
    Wilson intervals; Newcombe 1998, method 10)."""
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    d = p1 - p2
    return (d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def headline(cells: dict[str, dict[str, Any]], arm: str, baseline: str) -> dict[str, Any]:
    """`arm` minus `baseline` per perturbation, and over every perturbation kind but `none`
    (pooled episodes: the mean of the kinds' differences when each kind has as many)."""
    rows, pooled = [], [0, 0, 0, 0]
    for c in cells.values():
        b = cells.get(cell_key(baseline, c["perturbation"]))
        if c["arm"] != arm or b is None:
            continue
        counts = (c["successes"], c["episodes"], b["successes"], b["episodes"])
        d, lo, hi = difference(*counts)
        rows.append({"perturbation": c["perturbation"], "arm_rate": c["rate"],
                     "baseline_rate": b["rate"], "difference": round(d, 4),
                     "ci95": [round(lo, 4), round(hi, 4)]})
        if c["perturbation"] != "none":
            pooled = [x + y for x, y in zip(pooled, counts, strict=True)]
    kinds = None
    if pooled[1] and pooled[3]:
        d, lo, hi = difference(*pooled)
        kinds = {"kinds": sum(r["perturbation"] != "none" for r in rows),
                 "difference": round(d, 4), "ci95": [round(lo, 4), round(hi, 4)]}
    return {"arm": arm, "baseline": baseline, "perturbations": rows, "over_kinds": kinds}


def cell_key(arm: str, perturbation: str) -> str:
    return f"{arm}|{perturbation}"


def _tally(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Episodes, successes, errors, rate and Wilson interval per group of `fields`' values."""
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        g = groups.setdefault("|".join(row[f] for f in fields), {
            **{f: row[f] for f in fields}, "episodes": 0, "successes": 0, "errors": 0})
        g["episodes"] += 1
        g["successes"] += int(row["success"])
        g["errors"] += int(row["status"] == "error")
    for g in groups.values():
        g["rate"] = round(g["successes"] / g["episodes"], 4)
        g["ci95"] = [round(x, 4) for x in wilson(g["successes"], g["episodes"])]
    return groups


def task_set(task: str) -> str:
    """The suite or LIBERO-PRO set a task id belongs to (`libero_goal_swap/8` ->
    `libero_goal_swap`)."""
    return task.partition("/")[0]


def failure_cause(row: dict[str, Any]) -> str:
    """Why an episode failed: the last error code it wrote, `EPISODE_ERROR` when the runner
    recorded an error, else how it ended (`no code, ended by budget`)."""
    if row["status"] == "error":
        return "EPISODE_ERROR"
    return row["error_codes"][-1] if row["error_codes"] else f"no code, ended by {row['ended_by']}"


def _failures(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per (arm, set): failed episodes and their causes, most frequent first."""
    causes: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        if row["status"] != "passed":
            causes.setdefault((row["arm"], task_set(row["task"])), Counter())[
                failure_cause(row)] += 1
    return {f"{arm}|{s}": {"arm": arm, "set": s, "failures": c.total(),
                           "causes": dict(c.most_common())}
            for (arm, s), c in causes.items()}


def summarize(rows: list[dict[str, Any]], suite: str = "",
              compare: tuple[str, str] | None = None) -> dict[str, Any]:
    """Success per (arm, perturbation) cell, per (arm, task), per (arm, set) and per arm, with
    Wilson intervals, and failures by cause per (arm, set); with `compare` (arm, baseline), the
    headline difference."""
    with_set = [{**r, "set": task_set(r["task"])} for r in rows]
    summary = {"suite": suite, "episodes": len(rows),
               "cells": _tally(rows, ("arm", "perturbation")),
               "tasks": _tally(rows, ("arm", "task")), "sets": _tally(with_set, ("arm", "set")),
               "failures": _failures(rows), "arms": _tally(rows, ("arm",))}
    if compare is not None:
        summary["headline"] = headline(summary["cells"], *compare)
    return summary


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _pp(x: float) -> str:
    return f"{100 * x:+.0f} pp"


def _headline_lines(h: dict[str, Any]) -> list[str]:
    lines = [f"## Headline: {h['arm']} vs {h['baseline']}", "",
             f"| perturbation | {h['arm']} | {h['baseline']} | difference | 95% CI |",
             "| --- | --- | --- | --- | --- |"]
    for r in h["perturbations"]:
        lo, hi = r["ci95"]
        lines.append(f"| {r['perturbation']} | {_pct(r['arm_rate'])} | "
                     f"{_pct(r['baseline_rate'])} | {_pp(r['difference'])} | "
                     f"{_pp(lo)} to {_pp(hi)} |")
    k = h["over_kinds"]
    if k is not None:
        lo, hi = k["ci95"]
        lines.append(f"| **over {k['kinds']} perturbation kinds** | | | "
                     f"**{_pp(k['difference'])}** | {_pp(lo)} to {_pp(hi)} |")
    return [*lines, ""]


def _rate(c: dict[str, Any]) -> str:
    lo, hi = c["ci95"]
    return f"{c['successes']}/{c['episodes']} = {_pct(c['rate'])} ({_pct(lo)}–{_pct(hi)})"


def _arm_lines(spec: Suite, summary: dict[str, Any]) -> list[str]:
    """Every arm the suite declares: what it runs, its perception mode, and its success over
    the run, or why it did not run."""
    lines = ["## Arms", "", "| arm | runs | perception | success (95% CI) |",
             "| --- | --- | --- | --- |"]
    for arm in spec.arms:
        runs = arm.solver("`")
        a = summary["arms"].get(arm.name)
        result = (f"not run (needs {arm.needs})" if arm.needs else spec.skipped.get(arm.name)
                  or (_rate(a) if a else "not run in this run"))
        lines.append(f"| {arm.name} | {runs} | {PERCEPTION_WORDS[arm.perception]} | {result} |")
    return [*lines, ""]


def _set_lines(summary: dict[str, Any]) -> list[str]:
    """Success per task set (a LIBERO-PRO set is a cell: base suite x variant), one column per
    arm that ran."""
    arms = list(summary["arms"])
    sets = list(dict.fromkeys(c["set"] for c in summary["sets"].values()))
    lines = ["## Success per task set (95% Wilson CI)", "", "| set | " + " | ".join(arms) + " |",
             "| --- |" + " --- |" * len(arms)]
    for name in sets:
        cells = [summary["sets"].get(f"{arm}|{name}") for arm in arms]
        lines.append(f"| {name} | " + " | ".join(_rate(c) if c else "-" for c in cells) + " |")
    return [*lines, ""]


def _published_lines(spec: Suite) -> list[str]:
    lines = ["## Published numbers (others' systems and cells, for context; not rerun here)", "",
             "| system | cells | success | source |", "| --- | --- | --- | --- |"]
    lines += [f"| {p.system} | {p.cells} | {p.rate:.1f}% | {p.source} |" for p in spec.published]
    return [*lines, ""]


def _cause_lines(summary: dict[str, Any]) -> list[str]:
    lines = ["## Failures by cause per set (the last error code of each failed episode)", "",
             "| arm | set | failed | causes |", "| --- | --- | --- | --- |"]
    for f in summary["failures"].values():
        causes = ", ".join(f"{code} ×{n}" for code, n in f["causes"].items())
        lines.append(f"| {f['arm']} | {f['set']} | {f['failures']} | {causes} |")
    return [*lines, ""]


def write_markdown(summary: dict[str, Any], rows: list[dict[str, Any]], path: Path,
                   spec: Suite | None = None) -> None:
    """summary.md; with the suite (`spec`), its arms (perception, not run) and published
    numbers too."""
    lines = [f"# bench: {summary['suite']}", ""]
    if spec is not None:
        lines += _arm_lines(spec, summary)
    if "headline" in summary:
        lines += _headline_lines(summary["headline"])
    if len({c["set"] for c in summary["sets"].values()}) > 1:
        lines += _set_lines(summary)
    if spec is not None and spec.published:
        lines += _published_lines(spec)
    if summary["failures"]:
        lines += _cause_lines(summary)
    lines += ["| arm | perturbation | success | rate | 95% CI | errors |",
             "| --- | --- | --- | --- | --- | --- |"]
    for c in summary["cells"].values():
        lo, hi = c["ci95"]
        lines.append(f"| {c['arm']} | {c['perturbation']} | {c['successes']}/{c['episodes']} "
                     f"| {_pct(c['rate'])} | {_pct(lo)}–{_pct(hi)} | {c['errors']} |")
    for arm, a in summary["arms"].items():
        lo, hi = a["ci95"]
        lines.append(f"| **{arm}** | all | {a['successes']}/{a['episodes']} | {_pct(a['rate'])} "
                     f"| {_pct(lo)}–{_pct(hi)} | {a['errors']} |")
    if len({t["task"] for t in summary["tasks"].values()}) > 1:
        lines += ["", "## By task", "", "| arm | task | success | rate | 95% CI |",
                  "| --- | --- | --- | --- | --- |"]
        for t in summary["tasks"].values():
            lo, hi = t["ci95"]
            lines.append(f"| {t['arm']} | {t['task']} | {t['successes']}/{t['episodes']} "
                         f"| {_pct(t['rate'])} | {_pct(lo)}–{_pct(hi)} |")
    failures = [r for r in rows if r["status"] != "passed"]
    lines += ["", f"## Failures ({len(failures)})", ""]
    for r in failures:
        what = r["error"].splitlines()[0] if r["error"] else ", ".join(r["error_codes"]) or (
            f"tree {r['tree_status']}, ended by {r['ended_by']}")
        link = f" — [trace]({r['trace']})" if r.get("trace") else ""
        lines.append(f"- `{r['key']}` ({r['status']}): {what}{link}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _snapshot(out: Path, row: dict[str, Any]) -> str:
    tree = out / row["trace"] / "tree.txt" if row.get("trace") else None
    return tree.read_text(encoding="utf-8") if tree and tree.is_file() else ""


def write_junit(rows: list[dict[str, Any]], out: Path, suite: str, path: Path) -> None:
    """JUnit XML: testsuite per arm, testcase per episode."""
    root = ET.Element("testsuites", name=suite)
    by_arm: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_arm.setdefault(r["arm"], []).append(r)
    for arm, rs in by_arm.items():
        ts = ET.SubElement(root, "testsuite", name=f"{suite}.{arm}", tests=str(len(rs)),
                           failures=str(sum(r["status"] == "failed" for r in rs)),
                           errors=str(sum(r["status"] == "error" for r in rs)),
                           time=f"{sum(r['wall_seconds'] for r in rs):.2f}")
        for r in rs:
            case = ET.SubElement(ts, "testcase", classname=f"{suite}.{arm}.{r['perturbation']}",
                                 name=f"{r['task']} seed {r['seed']}",
                                 time=f"{r['wall_seconds']:.2f}")
            codes = ", ".join(r["error_codes"]) or "none"
            if r["status"] == "failed":
                el = ET.SubElement(case, "failure", type="TaskFailed",
                                   message=f"tree {r['tree_status']} after {r['steps']} steps "
                                           f"(ended by {r['ended_by']}); error codes: {codes}")
                el.text = f"error codes: {codes}\ntrace: {r['trace']}\n\n{_snapshot(out, r)}"
            elif r["status"] == "error":
                el = ET.SubElement(case, "error", type="EpisodeError",
                                   message=r["error"].splitlines()[0])
                el.text = r["error"]
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def write_plot(summary: dict[str, Any], path: Path) -> None:
    """Grouped bars: one group per perturbation, one bar per arm, Wilson 95% error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = summary["cells"]
    perts = list(dict.fromkeys(c["perturbation"] for c in cells.values()))
    arms = list(summary["arms"])
    width = 0.8 / max(1, len(arms))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(perts) * max(1, len(arms)) ** 0.5), 3.5))
    for i, arm in enumerate(arms):
        xs, ys, lo, hi = [], [], [], []
        for j, p in enumerate(perts):
            c = cells.get(cell_key(arm, p))
            if c is None:
                continue
            xs.append(j + (i - (len(arms) - 1) / 2) * width)
            ys.append(c["rate"])
            lo.append(c["rate"] - c["ci95"][0])
            hi.append(c["ci95"][1] - c["rate"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=arm)
    ax.set_xticks(range(len(perts)), perts, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success (95% Wilson CI)")
    ax.set_title(f"{summary['suite']}: success by perturbation")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_learning_curve(rows: list[dict[str, Any]], path: Path) -> bool:
    """Running success rate per arm over episodes in suite order; only when memory persists."""
    if not any(r.get("memory") == "persistent" for r in rows):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for arm in dict.fromkeys(r["arm"] for r in rows):
        ok = [int(r["success"]) for r in rows if r["arm"] == arm]
        running = [sum(ok[:i + 1]) / (i + 1) for i in range(len(ok))]
        memory = next(r.get("memory", "none") for r in rows if r["arm"] == arm)
        ax.plot(range(1, len(ok) + 1), running, label=f"{arm} (memory {memory})")
    ax.set_xlabel("episode (suite order)")
    ax.set_ylabel("running success rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_html(summary: dict[str, Any], rows: list[dict[str, Any]], out: Path,
               path: Path) -> list[str]:
    """The report page; each failure's replay is exported beside it. Returns export problems."""
    from tether.errors import TetherError
    from tether.replay.viewer.page import export_html

    problems: list[str] = []
    body = [f"<h1>bench: {html.escape(summary['suite'])}</h1>",
            '<img src="success.png" alt="success by perturbation">',
            '<img src="learning.png" alt="learning curve">'
            if (out / "learning.png").is_file() else "",
            "<table border=1 cellpadding=4><tr><th>arm</th><th>perturbation</th><th>success</th>"
            "<th>rate</th><th>95% CI</th><th>errors</th></tr>"]
    for c in summary["cells"].values():
        body.append(f"<tr><td>{html.escape(c['arm'])}</td><td>{html.escape(c['perturbation'])}"
                    f"</td><td>{c['successes']}/{c['episodes']}</td><td>{_pct(c['rate'])}</td>"
                    f"<td>{_pct(c['ci95'][0])}–{_pct(c['ci95'][1])}</td><td>{c['errors']}</td>"
                    "</tr>")
    body.append("</table><h2>Failures</h2><ul>")
    for r in rows:
        if r["status"] == "passed":
            continue
        link = ""
        if r.get("trace"):
            replay = Path("replays") / f"{Path(r['trace']).name}.html"
            try:
                (out / "replays").mkdir(exist_ok=True)
                export_html(out / r["trace"], out / replay)
                link = f' — <a href="{replay}">replay</a>'
            except TetherError as exc:
                problems.append(f"{r['key']}: {exc}")
            link += f' (<a href="{r["trace"]}/tree.txt">tree</a>)'
        what = r["error"].splitlines()[0] if r["error"] else ", ".join(r["error_codes"]) or (
            f"tree {r['tree_status']}, ended by {r['ended_by']}")
        body.append(f"<li><code>{html.escape(r['key'])}</code> ({r['status']}): "
                    f"{html.escape(what)}{link}</li>")
    body.append("</ul>")
    path.write_text("<!doctype html><meta charset=utf-8><title>bench "
                    f"{html.escape(summary['suite'])}</title>\n" + "\n".join(body) + "\n",
                    encoding="utf-8")
    return problems


def write_reports(rows: list[dict[str, Any]], out: Path | str, suite: str,
                  compare: tuple[str, str] | None = None, *,
                  spec: Suite | None = None) -> dict[str, Any]:
    """Write every report of the run into `out`; return the summary. `spec`, the suite that
    ran, adds its arms' perception and declarations and its published numbers."""
    out = Path(out)
    summary = summarize(rows, suite, compare)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    write_markdown(summary, rows, out / "summary.md", spec)
    write_junit(rows, out, suite, out / "junit.xml")
    write_plot(summary, out / "success.png")
    write_learning_curve(rows, out / "learning.png")
    summary["export_problems"] = write_html(summary, rows, out, out / "report.html")
    return summary
