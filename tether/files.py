"""Files written whole or not at all.

Several processes share tether's caches (bench workers, a viewer beside a run): a reader must
find a file as it was before a write or as it is after, never half written. `write_whole` has
`write` fill a temporary file beside the target and renames it over the target (an atomic
replace on one file system); the temporary file is removed whatever happens. A bottom layer
(after `errors`): every package may import it.

    write_whole(path, lambda tmp: tmp.write_text(text))
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_whole(path: Path, write: Callable[[Path], object]) -> None:
    """Call `write` with a temporary path beside `path`, then rename it to `path`."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        write(Path(name))
        os.replace(name, path)
    finally:
        Path(name).unlink(missing_ok=True)
