"""Named policies: what trees refer to (`vla: {policy: grasp_act}`), built once per robot.

The factory of policies: it imports every adapter module, so each policy type is registered
(`tether.models.policy.POLICY_TYPES`), and keeps `POLICIES`, the named entries: the built-ins
below, and any added with `register_policy` (a config, or a factory of the robot such as a test
double) or, for one run, with `registered` (what `--policy NAME=SPEC`, `--policies FILE` and a
suite's `policies:` give). A policy type is one of

    lerobot    any lerobot checkpoint saved with `save_pretrained` (models/lerobot_policy.py)
    openpi     a policy served over openpi's websocket protocol (models/remote.py)
    scripted   the privileged grasp expert (models/scripted.py)

and a SPEC, the short form of an entry, is one of (`spec_entry`)

    models/checkpoints/mine     a lerobot checkpoint directory (relative to the working directory)
    ws://gpu-box:8000           an openpi server (openpi's serve_policy, `tether serve-policy`)
    expert                      the name of a policy known already (the new name is an alias)
    lerobot/pi05_libero         a hub id: the Hugging Face cache's copy, or downloaded when the
                                machine is online; offline and not cached it is an error

    policies = resolve_policies(PolicyOptions(specs=("pi05=ws://gpu:8000",), device="cuda"))
    with registered(policies): ...   # trees may now say `vla: {policy: pi05, ...}`
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tether.errors import MAX_NESTING, TetherError, did_you_mean
from tether.models import lerobot_policy, remote, scripted
from tether.models.policy import Policy, PolicyConfig
from tether.registry import Registry
from tether.scenes.robot import Robot

ADAPTERS = (lerobot_policy, remote, scripted)  # imported: each registers its policy type
CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"  # shipped as package data
GRASP_CHECKPOINT = str(CHECKPOINTS / "grasp_act")
Entry = PolicyConfig | Callable[[Robot], Policy]
POLICIES: Registry[Entry] = Registry("policy")
POLICIES.register("grasp_act", lerobot_policy.LerobotConfig(path=GRASP_CHECKPOINT))
for baseline in ("object_act", "goal_act", "spatial_act"):  # the end-to-end baselines
    POLICIES.register(baseline, lerobot_policy.LerobotConfig(path=str(CHECKPOINTS / baseline)))
POLICIES.register("expert", scripted.ScriptedConfig())
DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
NAME = re.compile(r"^[A-Za-z_][\w.-]*$")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def register_policy(name: str, policy: Entry) -> None:
    """Make `name` usable in trees: a config, or a factory of the robot (e.g. a test double)."""
    POLICIES.register(name, policy)


@dataclass(frozen=True)
class PolicyOptions:
    """The policies a run adds: `NAME=SPEC` strings, a policies file, and the device of the
    lerobot policies among them that do not name their own."""

    specs: tuple[str, ...] = ()
    file: Path | None = None
    device: str | None = None


def check_device(device: str | None, where: str = "--device: ") -> str | None:
    """`device` when it is cpu, cuda, cuda:N or mps (or None); a TetherError otherwise."""
    if device is not None and not DEVICE.match(device):
        raise TetherError(f"{where}unknown device '{device}' (expected cpu, cuda, cuda:N or mps)")
    return device


def hub_snapshot(repo_id: str, where: str = "") -> str:
    """The local folder of hub checkpoint `repo_id`: the Hugging Face cache's copy, else a
    download when the machine is online; a TetherError saying so when it is offline."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(repo_id, local_files_only=True)
    except LocalEntryNotFoundError:
        pass
    fix = (f"download it where online (`hf download {repo_id} --local-dir DIR`) and give DIR")
    if constants.HF_HUB_OFFLINE:
        raise TetherError(f"{where}'{repo_id}' is a hub id, but this machine is offline "
                          f"(HF_HUB_OFFLINE) and the checkpoint is not in its cache; {fix}")
    try:
        return snapshot_download(repo_id)
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the same user problem
        raise TetherError(f"{where}cannot fetch '{repo_id}' from the Hugging Face hub "
                          f"({type(exc).__name__}: the machine may be offline); {fix}") from None


def spec_entry(spec: str, *, device: str | None = None, where: str = "") -> Entry:
    """The policy a SPEC names (see the module docstring); `device` goes to a lerobot policy."""
    if spec.startswith(("ws://", "wss://")):
        try:
            url = urlsplit(spec)
            port = url.port
        except ValueError as exc:
            raise TetherError(f"{where}bad server URL '{spec}' ({exc})") from None
        if not url.hostname or url.path not in ("", "/") or url.query:
            raise TetherError(f"{where}expected an openpi server as ws://HOST:PORT, got '{spec}'")
        return remote.OpenpiConfig(host=f"{url.scheme}://{url.hostname}", port=port)
    if spec in POLICIES:
        return POLICIES.get(spec)
    path = Path(spec).expanduser()
    if path.is_dir() and not (path / "config.json").is_file():
        raise TetherError(f"{where}{spec} is not a lerobot checkpoint (no config.json)")
    if path.is_dir():
        return lerobot_policy.LerobotConfig(path=str(path.resolve()), device=device)
    if not path.exists() and HUB_ID.match(spec):
        return lerobot_policy.LerobotConfig(path=hub_snapshot(spec, where), device=device)
    raise TetherError(f"{where}'{spec}' is not a checkpoint directory, an openpi server URL "
                      "(ws://HOST:PORT), a known policy" + did_you_mean(spec, POLICIES)
                      + " or a hub id (OWNER/NAME); known policies: " + ", ".join(POLICIES))


def entry_of(body: Any, *, device: str | None, where: str) -> Entry:
    """A policies file's or suite's entry: a SPEC string or a `{type: TYPE, ...}` mapping."""
    if isinstance(body, str):
        return spec_entry(body, device=device, where=where)
    if not isinstance(body, dict):
        raise TetherError(f"{where}expected a SPEC (a checkpoint directory, ws://HOST:PORT, a "
                          "policy name or a hub id) or a mapping with 'type'")
    config = PolicyConfig.from_dict(body, where=where)
    return config.on(device) if device else config


def read_policies(path: Path | str, *, device: str | None = None) -> dict[str, Entry]:
    """The named policies of a YAML file (`NAME: SPEC` or `NAME: {type: TYPE, ...}`), in file
    order. Problems are located at the policy's name (`FILE:LINE:COLUMN: NAME: ...`)."""
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
    entries = {}
    for name, body in data.items():
        line, column = data.lc.key(name)
        where = f"{path}:{line + 1}:{column + 1}: {name}: "
        entries[check_name(name, where)] = entry_of(body, device=device, where=where)
    return entries


def check_name(name: Any, where: str) -> str:
    """`name` when it can name a new policy; a TetherError otherwise."""
    if not isinstance(name, str) or not NAME.match(name):
        raise TetherError(f"{where}a policy name is a word (letters, digits, _ . -), not "
                          f"{name!r}")
    if name in POLICIES:
        raise TetherError(f"{where}a policy of that name exists already")
    return name


def resolve_policies(options: PolicyOptions) -> dict[str, Entry]:
    """The policies `options` add: the file's, then each `NAME=SPEC` (a name given twice is an
    error, as is a name known already)."""
    device = check_device(options.device)
    found = read_policies(options.file, device=device) if options.file else {}
    given: set[str] = set()
    for text in options.specs:
        where = f"--policy {text}: "
        name, eq, spec = text.partition("=")
        if not eq or not spec:
            raise TetherError(f"{where}expected NAME=SPEC (e.g. pi05=ws://gpu-box:8000)")
        if name in given:
            raise TetherError(f"{where}'{name}' is given twice")
        given.add(check_name(name, where))
        found[name] = spec_entry(spec, device=device, where=where)
    return found


def needs_gpu(policies: Mapping[str, Entry]) -> bool:
    """Whether any of `policies` runs on a CUDA GPU."""
    return any(isinstance(e, PolicyConfig) and e.gpu for e in policies.values())


@contextmanager
def registered(policies: Mapping[str, Entry]) -> Iterator[None]:
    """Register `policies` for the duration of the block (a run, a bench episode)."""
    added: list[str] = []
    try:
        for name, entry in policies.items():
            check_name(name, f"policy {name}: ")
            register_policy(name, entry)
            added.append(name)
        yield
    finally:
        for name in added:
            POLICIES.unregister(name)


def make_policy(name: str, robot: Robot) -> Policy:
    """Build the named policy for `robot`."""
    entry = POLICIES.get(name)
    return entry.build(robot) if isinstance(entry, PolicyConfig) else entry(robot)


_BUILT: weakref.WeakKeyDictionary[Robot, dict[str, tuple[Entry, Policy]]] = (
    weakref.WeakKeyDictionary())


def policy_for(name: str, robot: Robot) -> Policy:
    """The named policy for `robot`, built once per robot (every tree node naming it shares it;
    a node `reset`s it when it starts)."""
    entry = POLICIES.get(name)
    built = _BUILT.setdefault(robot, {})
    if name not in built or built[name][0] != entry:  # a name may be registered anew per run
        built[name] = (entry, make_policy(name, robot))
    return built[name][1]
