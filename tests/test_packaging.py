"""The package as a user gets it.

pyproject.toml names every package folder and ships every data file in them (fast checks). The
wheel built from this checkout (`python -m build --wheel`), installed into a fresh venv outside
the checkout, runs from a working directory outside it: the CLI, the library trees, the shipped
suites, `tether export` and `tether view` (the viewer's static files) and the `grasp_act`
checkpoint (package data). The fresh venv gets the project venv's dependencies through a `.pth`
file (as /work/tools/mkwt.sh does), so nothing is downloaded; the wheel is installed --no-deps.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.replay.recorded import record_pick_place
from tether.replay.viewer.page import _script_text, served_page
from tether.trees.compiler import LIBRARY

REPO = Path(__file__).parents[1]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"]
PACKAGE_DIR: dict[str, str] = SETUPTOOLS["package-dir"]
TOP_FOLDERS = {"tether", "trees", "behaviours", "blackboard", "models", "scenes"}
SHIPPED_SUITES = ("learning", "long_horizon", "perturbed", "smoke")


def package_folders() -> dict[str, Path]:
    """Every package in the source tree (a folder with __init__.py) by its import name."""
    return {".".join((package, *init.parent.relative_to(REPO / folder).parts)): init.parent
            for package, folder in PACKAGE_DIR.items()
            for init in (REPO / folder).rglob("__init__.py")}


def data_files(folder: Path) -> set[Path]:
    """The files of a package folder that are not Python modules (nor its subpackages')."""
    files = set()
    for path in folder.rglob("*"):
        if (path.is_file() and path.suffix not in (".py", ".pyc")
                and "__pycache__" not in path.parts and not _in_subpackage(folder, path)):
            files.add(path)
    return files


def _in_subpackage(folder: Path, path: Path) -> bool:
    return any((parent / "__init__.py").is_file()
               for parent in path.parents if parent != folder and folder in parent.parents)


def test_the_package_dir_maps_tether_and_the_five_top_folders():
    assert set(PACKAGE_DIR.values()) == TOP_FOLDERS
    assert all(PACKAGE_DIR[p] == p.removeprefix("tether.") for p in PACKAGE_DIR)


def test_pyproject_packages_name_every_package_folder():
    assert sorted(SETUPTOOLS["packages"]) == sorted(package_folders())


def test_package_data_ships_every_data_file():
    globs: dict[str, list[str]] = SETUPTOOLS["package-data"]
    shipped: set[Path] = set()
    for package, patterns in globs.items():
        folder = package_folders()[package]
        shipped |= {p for pattern in patterns for p in folder.glob(pattern) if p.is_file()}
    every = set().union(*(data_files(folder) for folder in package_folders().values()))
    assert sorted(map(str, every - shipped)) == []
    assert REPO / "models" / "checkpoints" / "grasp_act" / "model.safetensors" in shipped
    assert REPO / "tether" / "py.typed" in shipped


# --- the built wheel, installed outside the checkout ------------------------------------------
@dataclass(frozen=True)
class Installed:
    venv: Path
    workdir: Path
    env: dict[str, str]

    def site(self) -> Path:
        return self.venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / \
            "site-packages"

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in args], cwd=self.workdir, env=self.env,
                              capture_output=True, text=True, timeout=600)

    def tether(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return self.run(self.venv / "bin" / "tether", *args)

    def python(self, code: str) -> dict:
        done = self.run(self.venv / "bin" / "python", "-c", code)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])


def _project_site_packages() -> list[str]:
    """This interpreter's site-packages folders (its venv's and those its .pth files add)."""
    return [p for p in sys.path if Path(p).name == "site-packages"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy, so building leaves nothing in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for folder in TOP_FOLDERS:
        shutil.copytree(REPO / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                            "--outdir", root / "dist", source], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((root / "dist").glob("tether-*.whl"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    workdir = root / "work"
    workdir.mkdir()
    inst = Installed(venv, workdir, env)
    (inst.site() / "_project_deps.pth").write_text("\n".join(_project_site_packages()) + "\n",
                                                   encoding="utf-8")
    pip = inst.run(venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", wheel)
    assert pip.returncode == 0, pip.stderr
    return inst


@pytest.fixture(scope="module")
def where(installed) -> dict:
    """Where the installed copy keeps its modules and data."""
    return installed.python(
        "import json, tether; from tether.trees.compiler import LIBRARY; "
        "from tether.bench.suite import SUITES_DIR; from tether.replay.viewer.page import STATIC; "
        "from tether.models.policies import GRASP_CHECKPOINT; "
        "print(json.dumps({'tether': tether.__file__, 'library': str(LIBRARY), "
        "'suites': str(SUITES_DIR), 'static': str(STATIC), 'checkpoint': GRASP_CHECKPOINT}))")


wheel = pytest.mark.xdist_group("wheel")  # one worker builds and installs it once


@pytest.mark.slow
@wheel
@pytest.mark.parametrize("key", ["tether", "library", "suites", "static", "checkpoint"])
def test_the_installed_copy_is_imported_not_the_checkout(installed, where, key):
    assert Path(where[key]).is_relative_to(installed.site() / "tether")


@pytest.mark.slow
@wheel
def test_tether_help_from_the_wheel(installed):
    done = installed.tether("--help")
    assert done.returncode == 0, done.stderr
    assert all(verb in done.stdout for verb in ("run", "check", "view", "export", "bench"))


@pytest.mark.slow
@wheel
def test_check_every_installed_library_tree(installed, where):
    trees = sorted(Path(where["library"]).glob("*.yaml"))
    assert [t.name for t in trees] == sorted(p.name for p in LIBRARY.glob("*.yaml"))
    done = installed.tether("check", *trees)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@wheel
def test_shipped_suites_load_by_name_with_the_installed_trees(installed, where):
    loaded = installed.python(
        "import json; from tether.bench.suite import load_suite; "
        f"print(json.dumps({{n: {{'arms': {{a.name: str(a.file) for a in s.arms}}, "
        f"'skipped': sorted(s.skipped)}} for n in {SHIPPED_SUITES!r} "
        f"for s in [load_suite(n)]}}))")
    library = Path(where["library"])
    assert loaded["smoke"] == {"arms": {"analytic": str(library / "pick_place.yaml")},
                               "skipped": []}
    assert loaded["perturbed"] == {"arms": {
        "analytic": str(library / "pick_place.yaml"),
        "memory": str(library / "recall_pick_place.yaml"),
        "harness": str(library / "vla_pick_place.yaml"),
        "bare": str(library / "vla_bare.yaml"),
        "analytic_camera": str(library / "pick_place.yaml"),
        "harness_camera": str(library / "vla_pick_place.yaml")}, "skipped": []}
    assert loaded["long_horizon"]["skipped"] == ["planned"]
    assert loaded["learning"]["arms"] == {"persistent": str(library / "recall_pick_place.yaml"),
                                          "fresh": str(library / "recall_pick_place.yaml")}


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory) -> Path:
    run_dir, _ = record_pick_place(tmp_path_factory.mktemp("recorded") / "run", frame_every=50)
    return run_dir


@pytest.mark.slow
@wheel
def test_export_from_the_wheel_inlines_the_static_files(installed, where, recorded_run):
    out = installed.workdir / "run.html"
    done = installed.tether("export", recorded_run, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    html = out.read_text(encoding="utf-8")
    static = Path(where["static"])
    for script in ("vendor/cytoscape.min.js", "vendor/cytoscape-dagre.min.js", "viewer.js"):
        assert _script_text((static / script).read_text(encoding="utf-8")) in html, script
    assert (static / "viewer.css").read_text(encoding="utf-8") in html


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@wheel
def test_view_from_the_wheel_serves_the_page_and_vendored_scripts(installed, recorded_run):
    port = _free_port()
    server = subprocess.Popen([installed.venv / "bin" / "tether", "view", recorded_run,
                               "--port", str(port)], cwd=installed.workdir, env=installed.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        page = None
        for _ in range(300):  # until the server listens (or has exited)
            if server.poll() is not None:
                break
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert page is not None, server.communicate()
        assert page.status_code == 200
        assert page.text == served_page(live=False)
        vendored = httpx.get(f"http://127.0.0.1:{port}/static/vendor/cytoscape.min.js")
        assert vendored.status_code == 200
        assert vendored.content == (REPO / "tether/replay/viewer/static/vendor/"
                                    "cytoscape.min.js").read_bytes()
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.slow
@wheel
def test_grasp_act_loads_from_package_data_and_acts(installed, where):
    out = installed.python(
        "import json, numpy as np; from tether.models.observation import Observation; "
        "from tether.models.policies import make_policy; "
        "from tether.scenes.kinematic import KinematicScene; "
        "policy = make_policy('grasp_act', KinematicScene({})); policy.reset(); "
        "images = {c.key: np.zeros((*c.size, 3), np.uint8) for c in policy.cameras}; "
        "chunk = np.asarray(policy.infer(Observation(images=images, "
        "instruction='pick up the black bowl'))); "
        "print(json.dumps({'path': str(policy.path), 'shape': list(chunk.shape), "
        "'finite': bool(np.isfinite(chunk).all())}))")
    assert out["path"] == where["checkpoint"]
    assert out["shape"][0] >= 1 and out["shape"][1] == 7
    assert out["finite"] is True
