"""`tether run`: compile a tree file for a task's scene and run one episode of it.

    record = run(RunConfig(Path("trees/library/pick_place.yaml"),
                           SessionConfig(task="libero_goal/8", seed=3)))

The tree's params are bound from `given` (`--with KEY=VALUE`), then from the task's goal (params
declared `from_goal`), then from their defaults. The tree file is read first (a malformed tree
fails before the scene loads); then a `Session` opens the scene, the tree is compiled against
its object names, and one episode is ticked, consolidated and kept (`tether.session.session`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.behaviours.services import NO_SERVICES, Services
from tether.session.session import Display, RunRecord, Session, SessionConfig
from tether.trees.compiler import compile_tree, goal_bindings, read_tree_file

if TYPE_CHECKING:
    from tether.scenes.scene_cache import SceneCache


@dataclass
class RunConfig:
    """A tree file, the values of its params, and the episode to run it in."""

    tree: Path
    session: SessionConfig
    given: dict[str, Any] = field(default_factory=dict)  # overrides what the goal binds

    def __post_init__(self) -> None:
        self.tree = Path(self.tree)


def run(config: RunConfig, *, services: Services = NO_SERVICES,
        display: Display | None = None, scenes: SceneCache | None = None,
        observers: tuple[Display, ...] = ()) -> RunRecord:
    """Run `config.tree` once; `services` go to the nodes (and the diagnoser to consolidation),
    `display(root, robot)` and each of `observers` may return a context-managed observer,
    `scenes` lends the scene (`Session`)."""
    session = Session(config.session, name=config.tree.stem, services=services,
                      display=display, scenes=scenes, observers=observers)
    tf = read_tree_file(config.tree)  # fail fast on a malformed tree, before the scene loads
    with session:
        params = {**goal_bindings(tf, session.scene.goal()), **config.given}
        compiled = compile_tree(config.tree, params, resolve=session.scene.resolve)
        return session.run(compiled, tree=str(config.tree))
