"""Compiled MuJoCo models kept on disk, so a scene's XML compiles once per machine, not per run.

The first compile of a LIBERO scene in a process decodes its textures (two are 4096x4096) and
builds its meshes: seconds. MuJoCo's binary model file (MJB, `mj_saveModel`) holds the compiled
model array for array, and loading it skips all of that. A model is stored under a key made of
the XML, MuJoCo's version and the size and modification time of every file the XML names, so an
edited asset or another MuJoCo compiles afresh.

    $TETHER_MODEL_CACHE    the folder (default `$XDG_CACHE_HOME/tether/models`); `off`: no store
    $TETHER_MODEL_CACHE_GB how much it keeps (default 4); the least recently used go first

A LIBERO model takes ~200 MB (its textures) and ~1 s to write, so a model is stored the second
time the machine compiles its XML (the first leaves an empty marker): the one-off scenes of a
perturbation that edits the model at every seed are never written. Files are written under a
temporary name and renamed, so workers sharing the folder never read half a file; an unreadable
file is compiled again.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
from pathlib import Path

import mujoco

from tether.errors import TetherError
from tether.files import write_whole

SUFFIX, SEEN = ".mjb", ".seen"
MARKERS = 1000  # markers of XMLs compiled once, the newest kept
_FILES = re.compile(r'\bfile="([^"]+)"')


def store_dir() -> Path | None:
    """The store's folder, or None when `$TETHER_MODEL_CACHE` is `off`."""
    setting = os.environ.get("TETHER_MODEL_CACHE", "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tether" / "models"


def model_key(xml: str) -> str:
    """What the compiled model depends on: the XML, MuJoCo's version, the files the XML names."""
    digest = hashlib.sha256(mujoco.__version__.encode())
    digest.update(xml.encode())
    for name in sorted(set(_FILES.findall(xml))):
        try:
            stat = os.stat(name)
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        except OSError:  # a relative or missing file: the XML alone keys it
            digest.update(name.encode())
    return digest.hexdigest()[:32]


def load_or_compile(xml: str) -> mujoco.MjModel:
    """The model `xml` compiles to: read from the store when there, else compiled (and stored
    when compiled the second time)."""
    folder = store_dir()
    if folder is None:
        return mujoco.MjModel.from_xml_string(xml)
    path = folder / (model_key(xml) + SUFFIX)
    if path.is_file():
        try:
            model = mujoco.MjModel.from_binary_path(str(path))
            os.utime(path)  # recently used
            return model
        except (OSError, ValueError):  # unreadable, or removed meanwhile: compiled again
            path.unlink(missing_ok=True)
    model = mujoco.MjModel.from_xml_string(xml)
    seen = path.with_suffix(SEEN)
    with contextlib.suppress(OSError):  # a full or read-only disk costs speed, never the run
        if seen.is_file():
            write_whole(path, lambda tmp: mujoco.mj_saveModel(model, str(tmp), None))
            seen.unlink(missing_ok=True)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            seen.touch()
        _trim(folder)
    return model


def _trim(folder: Path) -> None:
    """Remove the least recently used models beyond `$TETHER_MODEL_CACHE_GB`, and the oldest
    markers beyond `MARKERS`."""
    setting = os.environ.get("TETHER_MODEL_CACHE_GB", "4")
    try:
        limit = float(setting) * 1e9
    except ValueError:
        limit = math.nan
    if not limit >= 0:
        raise TetherError(f"$TETHER_MODEL_CACHE_GB: {setting!r} is not a size in GB (e.g. 4)")
    total = 0
    for stat, file in _newest_first(folder, SUFFIX):
        total += stat.st_size
        if total > limit:
            file.unlink(missing_ok=True)
    for _, marker in _newest_first(folder, SEEN)[MARKERS:]:
        marker.unlink(missing_ok=True)


def _newest_first(folder: Path, suffix: str) -> list[tuple[os.stat_result, Path]]:
    found = []
    for file in folder.glob("*" + suffix):
        try:
            found.append((file.stat(), file))
        except OSError:  # removed by another process meanwhile
            continue
    return sorted(found, key=lambda f: f[0].st_mtime, reverse=True)
