"""The sim benchmark runner: suite files, parallel episodes, reports and regression gates.

`trees.bench.suite` reads a suite file into episodes, `trees.bench.runner` runs them in worker
processes (or on Ray) into a run directory, `trees.bench.report` writes the summaries, JUnit,
plot and HTML report, `trees.bench.gate` compares summaries. See docs/bench.md.
"""
