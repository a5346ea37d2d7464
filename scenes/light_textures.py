"""Image textures reduced for small frames, made once per machine.

A LIBERO scene's image textures reach 4096 texels a side (143 MB in all): a render context
uploads them all (~0.9 s of a trace writer's first frame), and a 128-pixel frame samples them
at a coarse mipmap level anyway. `lighter(xml, limit)` is the model XML with each image texture
longer than `limit` texels on a side replaced by a copy halved until it fits (by the largest
power of two that divides both sides of each face, so a grid of faces keeps its layout), kept
in the model store's folder (its `textures/`, named after the image's path, size and modification
time and the limit), so an image is reduced once per machine; with the store off, in a folder
of the process's own. An image that cannot be read is left as the XML names it, and a model the
reduced XML does not compile to is drawn with its textures as they are
(`tether.scenes.fast_physics.textured`).

    xml = lighter(xml, 512)    # then compiled as any XML (`tether.scenes.model_store`)
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path

from tether.files import write_whole
from tether.scenes.model_store import store_dir

_TEXTURE = re.compile(r"<texture\b[^>]*/>")
_FILE = re.compile(r'(\sfile=")([^"]+)(")')
_GRID = re.compile(r'\sgridsize="\s*(\d+)\s+(\d+)\s*"')


def lighter(xml: str, limit: int) -> str:
    """`xml` with its image textures no longer than `limit` texels a side (see the module)."""
    return _TEXTURE.sub(lambda texture: _lighter_texture(texture.group(0), limit), xml)


def _lighter_texture(element: str, limit: int) -> str:
    grid = _GRID.search(element)
    rows, columns = (int(grid.group(1)), int(grid.group(2))) if grid else (1, 1)
    return _FILE.sub(lambda m: m.group(1) + _reduced(m.group(2), limit, rows, columns)
                     + m.group(3), element)


def _reduced(name: str, limit: int, rows: int, columns: int) -> str:
    """The path of `name`'s image (a grid of `rows` x `columns` faces) reduced to fit `limit`,
    or `name` when it fits or is unreadable."""
    try:
        stat = os.stat(name)
    except OSError:
        return name
    key = hashlib.sha256(f"{os.path.abspath(name)}:{stat.st_size}:{stat.st_mtime_ns}:{limit}:"
                         f"{rows}x{columns}".encode()).hexdigest()[:32]
    try:
        path = _folder() / f"{key}.png"
        if path.is_file():
            return str(path)
    except OSError:  # no folder to keep it in: the image as it is
        return name
    from PIL import Image

    try:
        with Image.open(name) as image:
            width, height = image.size
            face = (width // columns, height // rows)  # each face is halved whole
            factor = 1
            while max(width, height) > limit * factor and face[0] % (2 * factor) == 0 \
                    and face[1] % (2 * factor) == 0:
                factor *= 2
            if factor == 1:
                return name
            mode = "RGBA" if image.mode in ("RGBA", "LA", "P", "PA") else "RGB"
            small = image.convert(mode).reduce(factor)
    except (OSError, ValueError, Image.DecompressionBombError):
        return name
    try:
        write_whole(path, lambda tmp: small.save(tmp, format="PNG"))
    except OSError:  # a full or read-only disk: the image as it is
        return name
    return str(path)


@cache
def _folder() -> Path:
    store = store_dir()
    if store is not None:
        folder = store / "textures"
    else:
        folder = Path(tempfile.mkdtemp(prefix="tether-textures-"))
        atexit.register(shutil.rmtree, folder, True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
