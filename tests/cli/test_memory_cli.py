"""`tether memory`: every verb works on a store, and a missing store is a usage error."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tether.cli.main import app
from tether.memory.experience import FAILURES, RULES, Experience
from tether.memory.store import ExperienceStore

runner = CliRunner()
VERBS = ["list", "search", "show", "stats", "export", "import", "rebuild-index"]


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "m.db"
    store = ExperienceStore(path, "hashing")
    store.add(Experience(partition=FAILURES, task="t", instruction="put the cheese on the plate",
                         objects=["cheese"], outcome="failure", diagnosis="blocked", id="abc123",
                         trace=[{"step": 4, "node": "descend", "action": "move_to",
                                 "outcome": "FAILURE", "error": "STUCK"}]))
    store.add(Experience(partition=RULES, task="t", instruction="put the cheese on the plate",
                         objects=["cheese"], outcome="rule", params={"approach": [-0.1, 0, 0]}))
    store.close()
    return path


def rule_id(path: str) -> str:
    with ExperienceStore(path) as store:
        return next(store.all(RULES)).id


def invoke(*args: str):
    return runner.invoke(app, ["memory", *args])


@pytest.mark.parametrize("verb", VERBS)
def test_each_memory_verb_has_help(verb):
    assert invoke(verb, "--help").exit_code == 0


def test_list_search_show_and_stats(store_path):
    s = str(store_path)
    listed = invoke("list", "--store", s)
    assert listed.exit_code == 0 and "abc123" in listed.output and "rules" in listed.output
    found = invoke("search", "cheese on the plate", "--store", s, "-k", "1")
    cells = [[c.strip() for c in line.split("│")[1:4]] for line in found.output.splitlines()
             if line.startswith("│")]
    rows = [r for r in cells if r[0]]  # not the wrapped lines of a long cell
    assert found.exit_code == 0 and rows == [["failures", "0.780", "abc123"],
                                             ["rules", "0.780", rule_id(s)]]
    shown = invoke("show", "abc", "--store", s)
    assert shown.exit_code == 0 and "At step 4, descend (move_to) failed with STUCK." in \
        shown.output
    stats = invoke("stats", "--store", s)
    assert stats.output.splitlines()[0] == f"store {s}: 2 entries 0 successes, 1 failures, 1 rules"
    assert stats.output.splitlines()[1].endswith("integrity ok")


def test_export_import_and_rebuild(store_path, tmp_path):
    dump = tmp_path / "dump.jsonl"
    assert invoke("export", str(dump), "--store", str(store_path)).exit_code == 0
    other = tmp_path / "other.db"
    imported = invoke("import", str(dump), "--store", str(other), "--embedder", "hashing")
    assert imported.exit_code == 0
    assert imported.output == f"imported 2 entries into {other} (0 already there)\n"
    again = invoke("import", str(dump), "--store", str(other))
    assert again.output == f"imported 0 entries into {other} (2 already there)\n"
    rebuilt = invoke("rebuild-index", "--store", str(other))
    assert rebuilt.exit_code == 0
    assert rebuilt.output.startswith("rebuilt the index of 2 entries in ")
    assert rebuilt.output.endswith(f" s ({other}.index)\n")


def test_a_missing_store_is_a_usage_error_without_traceback(tmp_path):
    result = invoke("list", "--store", str(tmp_path / "none.db"))
    assert result.exit_code == 2 and "no memory store" in result.output
    assert "Traceback" not in result.output
    assert invoke("show", "zzz", "--store", str(tmp_path / "none.db")).exit_code == 2
