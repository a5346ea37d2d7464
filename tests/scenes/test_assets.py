"""`tether.scenes.assets`: the committed sha256 manifest of LIBERO's asset files, verified."""

from __future__ import annotations

import shutil

import pytest

from tether.errors import TetherError
from tether.scenes.assets import (
    MANIFEST,
    assets_dir,
    manifest_from_records,
    read_manifest,
    verify_assets,
    write_manifest,
)


def test_the_committed_manifest_lists_all_864_files_as_the_wheels_records_do():
    manifest = read_manifest()
    assert len(manifest) == 864
    assert manifest == manifest_from_records()


def test_the_installed_assets_match_the_manifest():
    report = verify_assets()
    assert report.ok and report.checked == 864 and not report.extra
    assert "all match" in report.summary()


@pytest.fixture
def small_copy(tmp_path):
    """Three asset files copied under tmp_path/assets with a manifest of just them."""
    entries = dict(sorted(read_manifest().items())[:3])
    root = tmp_path / "assets"
    for rel in entries:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(assets_dir() / rel, root / rel)
    manifest = tmp_path / "assets.sha256"
    write_manifest(entries, manifest)
    return root, manifest, list(entries)


def test_an_intact_copy_verifies(small_copy):
    root, manifest, _ = small_copy
    assert verify_assets(root, manifest).checked == 3


def test_a_changed_and_a_missing_file_are_named_in_the_error(small_copy):
    root, manifest, (changed, missing, _) = small_copy
    with (root / changed).open("ab") as f:
        f.write(b"tampered")
    (root / missing).unlink()
    with pytest.raises(TetherError) as err:
        verify_assets(root, manifest)
    assert f"changed: {changed}" in str(err.value) and f"missing: {missing}" in str(err.value)
    report = verify_assets(root, manifest, strict=False)
    assert report.changed == [changed] and report.missing == [missing] and not report.ok


def test_the_manifest_is_sha256sum_compatible():
    line = MANIFEST.read_text().splitlines()[0]
    digest, rel = line.split("  ", 1)
    assert len(digest) == 64 and not rel.startswith("/")
