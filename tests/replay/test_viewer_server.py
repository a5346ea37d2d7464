"""The viewer's HTTP server without a browser: it binds loopback, serves the run's files and its
static folder byte for byte, and refuses (403) every path that resolves outside them, whatever
`..`, percent-encoding, absolute path or symlink it uses. Requests go through httpx with the
request target sent as written (no client-side `..` clean-up)."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tether.cli.main import app
from tether.replay.trace import TRACE_NAME
from tether.replay.viewer.page import STATIC
from tether.replay.viewer.server import Background

SECRET = b"not part of the run"
FRAME = "frames/top_000005.png"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A run directory (trace, one frame, a symlink to that frame) with a secret file beside it,
    a symlink to it and one to its folder."""
    run = tmp_path / "run"
    (run / "frames").mkdir(parents=True)
    (run / TRACE_NAME).write_text('{"k": "meta"}\n')
    (run / FRAME).write_bytes(b"\x89PNG frame bytes")
    (run / "latest.png").symlink_to(run / FRAME)
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (run / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (run / "frames" / "outside").symlink_to(tmp_path, target_is_directory=True)
    return run


@pytest.fixture
def client(run_dir):
    with Background(run_dir) as url, httpx.Client(base_url=url, timeout=10) as c:
        yield c


def get(client: httpx.Client, target: str) -> httpx.Response:
    """GET with `target` as the request line's path, exactly as written."""
    return client.get("/", extensions={"target": target.encode()})


def test_the_server_binds_loopback(client):
    assert client.base_url.host == "127.0.0.1"


def test_run_files_and_static_files_are_served_as_they_are(client, run_dir):
    assert get(client, "/run/" + TRACE_NAME).content == (run_dir / TRACE_NAME).read_bytes()
    assert get(client, "/run/" + FRAME).content == (run_dir / FRAME).read_bytes()
    assert get(client, "/run/latest.png").content == (run_dir / FRAME).read_bytes()
    assert get(client, "/static/viewer.js").content == (STATIC / "viewer.js").read_bytes()
    assert get(client, "/run/no-such-file").status_code == 404
    assert get(client, "/run/frames").status_code == 404  # a folder is not a file


@pytest.mark.parametrize("target", [
    "/run/../secret.txt",
    "/run/frames/../../secret.txt",
    "/run/%2e%2e/secret.txt",
    "/run/%2E%2E%2Fsecret.txt",
    "/run/..%2fsecret.txt",
    "/run/frames/%2e%2e/%2e%2e/secret.txt",
    "/static/../../recorder.py",
    "/static/%2e%2e/page.py",
])
def test_dot_dot_paths_are_refused(client, target):
    response = get(client, target)
    assert response.status_code == 403 and SECRET not in response.content


def test_absolute_paths_are_refused(client, run_dir):
    secret = urllib.parse.quote(str(run_dir.parent / "secret.txt"), safe="")
    for target in ("/run//etc/passwd", "/run/%2fetc%2fpasswd", "/run/" + secret,
                   "/run/" + str(run_dir.parent / "secret.txt"), "/static//etc/passwd"):
        response = get(client, target)
        assert response.status_code == 403 and SECRET not in response.content, target


def test_symlinks_that_leave_the_run_are_refused(client):
    for target in ("/run/leak.txt", "/run/frames/outside/secret.txt"):
        response = get(client, target)
        assert response.status_code == 403 and SECRET not in response.content, target


def test_view_refuses_a_directory_without_a_trace(tmp_path):
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2 and f"{tmp_path} has no {TRACE_NAME}" in result.output
