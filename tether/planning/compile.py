"""The plan compiler: a checked plan becomes a tree a person can read, edit and `tether check`.

`plan_document(plan, config)` builds the tree-file mapping (the plan's steps wrapped by the
safety rules of `tether.planning.safety`); `compile_plan` compiles that mapping in memory
against a scene's names (the compiled root is what `tether do` runs); `write_plan_tree` writes it
as YAML with a header that says who planned it for which instruction, where a file is wanted
(`tether plan -o`, the tree `tether do` keeps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tether.planning.plan import Plan
from tether.planning.safety import SafetyConfig, wrap_plan, wrap_subtask
from tether.trees.compiler import CompiledTree, compile_document
from tether.trees.values import Resolver


def plan_document(plan: Plan, config: SafetyConfig | None = None) -> dict[str, Any]:
    """The tree file of a plan, as a mapping."""
    config = config or SafetyConfig()
    subtasks = [wrap_subtask(i, s.goal, s.steps, s.expect, config)
                for i, s in enumerate(plan.subtasks)]
    return {"tree": "plan",
            "doc": f"Planned by {plan.planner or 'a planner'} for: {plan.instruction}",
            "root": wrap_plan(plan.instruction or "plan", subtasks, config)}


def write_plan_tree(plan: Plan, path: Path | str, config: SafetyConfig | None = None) -> Path:
    path = Path(path)
    text = yaml.safe_dump(plan_document(plan, config), sort_keys=False, width=100,
                          default_flow_style=None, allow_unicode=True)
    path.write_text(f"# tether plan: \"{plan.instruction}\" (planner: {plan.planner})\n"
                    "# The safety rules added the retries, checks, budgets and replan "
                    "(docs/planner.md).\n" + text, encoding="utf-8")
    return path


def compile_plan(plan: Plan, resolve: Resolver | None, config: SafetyConfig | None = None,
                 *, origin: str | None = None) -> CompiledTree:
    """Compile the plan's tree in memory; `origin` names it in node origins (default
    `plan '<instruction>'`). A `TreeError` would be a compiler bug: plans are checked before
    they get here."""
    return compile_document(plan_document(plan, config),
                            origin or f"plan '{plan.instruction}'", resolve=resolve)
