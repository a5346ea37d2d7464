"""`tether view`: a local web server for one run directory.

It serves the viewer page and its static files, the trace (`GET /trace?offset=N` answers the
whole lines from byte N on, and the next offset in `X-Next-Offset`, so a live page polls for new
ticks) and the run's files (`GET /run/PATH`, e.g. frames). Nothing outside the run directory and
the viewer's static folder is ever served: a path that resolves outside them is refused (403),
whatever `..`, encoding or symlink it uses. It binds 127.0.0.1 unless told otherwise.

    serve(Path("runs/20261122-..."), host="127.0.0.1", port=8765, live=False)   # blocks
    with Background(run_dir) as url: ...                                          # tests
"""

from __future__ import annotations

import threading
from pathlib import Path

import uvicorn
from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import FileResponse, HTMLResponse

from tether.errors import TetherError
from tether.replay.trace import TRACE_NAME
from tether.replay.viewer.page import STATIC, served_page

LOOPBACK = "127.0.0.1"


def inside(base: Path, relative: str) -> Path:
    """`base/relative` if it is a file inside `base`; HTTP 403 when outside, 404 when missing."""
    root = base.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise HTTPException(403, "outside the run directory")
    if not path.is_file():
        raise HTTPException(404, "no such file")
    return path


def make_app(run_dir: Path, *, live: bool = False) -> FastAPI:
    """The viewer's web app for `run_dir`."""
    run_dir = run_dir.resolve()
    app = FastAPI(title="tether view", docs_url=None, redoc_url=None, openapi_url=None)
    page = served_page(live=live)

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return page

    @app.get("/static/{path:path}")
    def static(path: str) -> FileResponse:
        return FileResponse(inside(STATIC, path))

    @app.get("/run/{path:path}")
    def run_file(path: str) -> FileResponse:
        return FileResponse(inside(run_dir, path))

    @app.get("/trace")
    def trace(offset: int = 0) -> Response:
        path = run_dir / TRACE_NAME
        data = b""
        if path.is_file():
            with path.open("rb") as f:
                f.seek(max(0, offset))
                data = f.read()
        whole = data[:data.rfind(b"\n") + 1]  # never half a line: the run may be writing it
        return Response(whole, media_type="text/plain; charset=utf-8",
                        headers={"X-Next-Offset": str(max(0, offset) + len(whole)),
                                 "Cache-Control": "no-store"})

    return app


def check_run_dir(run_dir: Path, *, live: bool) -> Path:
    if not run_dir.is_dir():
        raise TetherError(f"no run directory {run_dir}")
    if not live and not (run_dir / TRACE_NAME).is_file():
        raise TetherError(f"{run_dir} has no {TRACE_NAME} (was the run made with --no-record? "
                          "use --live to wait for a run that is starting)")
    return run_dir


def server(run_dir: Path, *, host: str = LOOPBACK, port: int = 8765,
           live: bool = False) -> uvicorn.Server:
    """An unstarted uvicorn server for the viewer of `run_dir`."""
    app = make_app(check_run_dir(run_dir, live=live), live=live)
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                         access_log=False))


class Background:
    """The viewer server on a free port in a thread: `with Background(run_dir) as url:`."""

    def __init__(self, run_dir: Path, *, host: str = LOOPBACK, live: bool = False):
        self.server = server(run_dir, host=host, port=0, live=live)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the viewer server did not start")
            threading.Event().wait(0.02)
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
