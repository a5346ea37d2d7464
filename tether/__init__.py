"""tether: a reactive behaviour-tree executive for robot manipulation.

The card's five folders at the repository's top level install as subpackages of this one
(`trees/` as `tether.trees`, `behaviours/`, `blackboard/`, `models/`, `scenes/` alike: setuptools'
`package-dir` mapping in pyproject.toml); the application layers live here (docs/layout.md).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tether")
except PackageNotFoundError:  # a checkout that was never installed
    __version__ = "0+unknown"
