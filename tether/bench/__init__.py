"""The sim benchmark runner: suite files, parallel episodes, reports and regression gates.

`tether.bench.suite` reads a suite file into episodes, `tether.bench.runner` runs them in worker
processes (or on Ray) into a run directory, `tether.bench.report` writes the summaries, JUnit,
plot and HTML report, `tether.bench.gate` compares summaries. See docs/bench.md.
"""
