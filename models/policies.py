"""Named policies: what trees refer to (`vla: {policy: grasp_act}`), built once per robot.

The factory of policies: it imports every adapter module, so each policy type is registered
(`tether.models.policy.POLICY_TYPES`), and keeps `POLICIES`, the named entries: the built-ins
below, any added with `register_policy` (a config, or a factory of the robot such as a test
double), or read from a YAML file of `NAME: {type: TYPE, ...fields}` entries (`load_policies`):

    lerobot    any lerobot checkpoint saved with `save_pretrained` (models/lerobot_policy.py)
    openpi     a policy served over openpi's websocket protocol (models/remote.py)
    scripted   the privileged grasp expert (models/scripted.py)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path

from tether.errors import MAX_NESTING, TetherError
from tether.models import lerobot_policy, remote, scripted
from tether.models.policy import Policy, PolicyConfig
from tether.registry import Registry
from tether.scenes.robot import Robot

ADAPTERS = (lerobot_policy, remote, scripted)  # imported: each registers its policy type
CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"  # shipped as package data
GRASP_CHECKPOINT = str(CHECKPOINTS / "grasp_act")
POLICIES: Registry[PolicyConfig | Callable[[Robot], Policy]] = Registry("policy")
POLICIES.register("grasp_act", lerobot_policy.LerobotConfig(path=GRASP_CHECKPOINT))
POLICIES.register("expert", scripted.ScriptedConfig())


def register_policy(name: str, policy: PolicyConfig | Callable[[Robot], Policy]) -> None:
    """Make `name` usable in trees: a config, or a factory of the robot (e.g. a test double)."""
    POLICIES.register(name, policy)


def load_policies(path: Path | str) -> list[str]:
    """Register the named policies of a YAML file (`NAME: {type: TYPE, ...}`); returns the names.

    Problems are located at the policy's name in the file (`FILE:LINE:COLUMN: NAME: ...`).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import MaxDepthExceededError
    from ruamel.yaml.error import YAMLError

    path = Path(path)
    yaml = YAML(typ="rt")
    yaml.max_depth = MAX_NESTING + 1  # ruamel counts the scalars inside the deepest collection
    try:
        data = yaml.load(path.read_text(encoding="utf-8")) or {}
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise TetherError(f"{path}:{mark.line + 1}:{mark.column + 1}: nested more than "
                          f"{MAX_NESTING} levels deep") from None
    except (OSError, YAMLError) as exc:
        raise TetherError(f"{path}: cannot read policies ({exc})") from None
    if not isinstance(data, dict):
        raise TetherError(f"{path}: expected a mapping of policy names to configs")
    configs = {}
    for name, body in data.items():
        line, column = data.lc.key(name)
        where = f"{path}:{line + 1}:{column + 1}: {name}: "
        if not isinstance(body, dict):
            raise TetherError(f"{where}expected a mapping with 'type'")
        if str(name) in POLICIES:
            raise TetherError(f"{where}a policy of that name exists already")
        configs[str(name)] = PolicyConfig.from_dict(body, where=where)
    for name, config in configs.items():
        register_policy(name, config)
    return list(configs)


def make_policy(name: str, robot: Robot) -> Policy:
    """Build the named policy for `robot`."""
    entry = POLICIES.get(name)
    return entry.build(robot) if isinstance(entry, PolicyConfig) else entry(robot)


_BUILT: weakref.WeakKeyDictionary[Robot, dict[str, Policy]] = weakref.WeakKeyDictionary()


def policy_for(name: str, robot: Robot) -> Policy:
    """The named policy for `robot`, built once per robot (every tree node naming it shares it;
    a node `reset`s it when it starts)."""
    built = _BUILT.setdefault(robot, {})
    if name not in built:
        built[name] = make_policy(name, robot)
    return built[name]
