"""A chat-completions server for tests: `python -m tests.models.chat_server PORT LOG REPLY...`.

Speaks the OpenAI protocol at /v1/chat/completions, answers with the given replies in turn (the
last one repeats) and appends every request body to LOG (JSON lines) and its `Authorization`
header to `header_log(LOG)` (one line each). A model named `slow` sleeps 3 s before answering
(for timeouts); a model named `broken` answers 500; a model named `reply-N` always answers the
N-th reply (from 0).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


def header_log(log: Path | str) -> Path:
    """The file beside LOG that holds each request's `Authorization` header, a line each."""
    return Path(f"{log}.headers")


def make_app(log: str, replies: list[str]) -> FastAPI:
    app = FastAPI()
    state = {"n": 0}

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(body) + "\n")
        with open(header_log(log), "a", encoding="utf-8") as f:
            f.write(request.headers.get("authorization", "") + "\n")
        if body["model"] == "slow":
            await asyncio.sleep(3)
        if body["model"] == "broken":
            return JSONResponse({"error": {"message": "model crashed"}}, status_code=500)
        if body["model"].startswith("reply-"):
            reply = replies[int(body["model"].removeprefix("reply-"))]
        else:
            reply = replies[min(state["n"], len(replies) - 1)]
            state["n"] += 1
        return {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    return app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(log: Path, replies: Sequence[str]) -> Iterator[str]:
    """This server in its own process on a free loopback port; yields its /v1 URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tests.models.chat_server", str(port), str(log),
                             *replies], cwd=Path(__file__).resolve().parents[2])
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    port, log, *replies = sys.argv[1:]
    uvicorn.run(make_app(log, replies), host="127.0.0.1", port=int(port), log_level="warning")
