"""Where library log records go when `tether` runs: rich lines on stderr.

Library code logs through `logging.getLogger(__name__)` (all under the `tether` logger) and never
prints; the command configures that logger once per invocation: INFO by default, DEBUG with
`-v/--verbose`, WARNING with `-q/--quiet`. Other libraries' loggers are left as they are.
"""

from __future__ import annotations

import logging

from rich.logging import RichHandler

from tether.cli.options import err


def configure_logging(level: int) -> None:
    """Send the `tether` logger's records at `level` and above to stderr (replacing any earlier
    handler of this function, so invoking the app twice in one process logs each line once)."""
    logger = logging.getLogger("tether")
    for handler in [h for h in logger.handlers if isinstance(h, RichHandler)]:
        logger.removeHandler(handler)
    handler = RichHandler(console=err, level=level, show_time=False, show_path=False,
                          markup=False, rich_tracebacks=False)
    handler.setFormatter(logging.Formatter(
        "%(name)s: %(message)s" if level <= logging.DEBUG else "%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)
