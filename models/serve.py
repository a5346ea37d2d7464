"""`PolicyServer`: serve a `Policy` over openpi's websocket protocol (`tether serve-policy`).

The wire protocol is openpi's (`openpi.serving.websocket_policy_server`), so openpi's own client
(and `OpenpiPolicy`) talks to it unchanged: one binary msgpack-numpy frame of metadata on connect,
then strict lock-step request/reply frames; a failing inference sends the traceback as a text
frame and closes with 1011; `GET /healthz` answers `OK`. Requests use the keys of openpi's LIBERO
example (see `tether.models.remote`); each image is resized to what the served policy's camera
wants. Replies carry `actions` (n, 7) float32 plus `policy_timing` / `server_timing` in
milliseconds. The policy is `reset` at every new connection.

    PolicyServer(LerobotPolicy(path), port=8000).serve_forever()     # blocks
    server = PolicyServer(policy, port=0).start(); server.port        # in a thread (tests)
"""

from __future__ import annotations

import asyncio
import http
import threading
import time
import traceback
from typing import Any

import numpy as np

from tether.models.observation import Observation
from tether.models.policy import Policy, check_chunk
from tether.models.remote import IMAGE, PROMPT, STATE, WRIST

KEY_OF_CAMERA = {"agentview": IMAGE, "robot0_eye_in_hand": WRIST}


def to_observation(policy: Policy, request: dict[str, Any]) -> Observation:
    """The policy's observation from an openpi LIBERO request (images resized as needed)."""
    import cv2

    images = {}
    for spec in policy.cameras:
        key = KEY_OF_CAMERA.get(spec.camera)
        if key not in request:
            raise KeyError(f"the policy needs camera {spec.camera}; send '{key}'")
        image = np.asarray(request[key], dtype=np.uint8)
        if image.shape[:2] != spec.size:
            image = cv2.resize(image, (spec.size[1], spec.size[0]), interpolation=cv2.INTER_AREA)
        images[spec.key] = image
    return Observation(images=images, state=np.asarray(request[STATE], dtype=np.float32),
                       instruction=str(request.get(PROMPT, "")))


class PolicyServer:
    """One policy on one port; connections are served one request at a time."""

    def __init__(self, policy: Policy, *, host: str = "127.0.0.1", port: int = 8000,
                 metadata: dict[str, Any] | None = None):
        self.policy, self.host, self.port = policy, host, port
        self.metadata = metadata or {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    async def _handle(self, ws: Any) -> None:
        import websockets
        from openpi_client import msgpack_numpy

        packer = msgpack_numpy.Packer()
        self.policy.reset()
        await ws.send(packer.pack(self.metadata))
        previous: float | None = None
        while True:
            try:
                start = time.perf_counter()
                request = msgpack_numpy.unpackb(await ws.recv())
                infer_start = time.perf_counter()
                actions = check_chunk(self.policy.infer(to_observation(self.policy, request)))
                infer_ms = (time.perf_counter() - infer_start) * 1000
                timing = {"infer_ms": infer_ms, **({"prev_total_ms": previous}
                                                   if previous is not None else {})}
                await ws.send(packer.pack({"actions": actions.astype(np.float32),
                                           "policy_timing": {"infer_ms": infer_ms},
                                           "server_timing": timing}))
                previous = (time.perf_counter() - start) * 1000
            except websockets.ConnectionClosed:
                break
            except Exception:  # noqa: BLE001 - openpi's contract: traceback frame, then 1011
                await ws.send(traceback.format_exc())
                await ws.close(code=websockets.frames.CloseCode.INTERNAL_ERROR,
                               reason="Internal server error. Traceback included in previous "
                                      "frame.")
                break

    @staticmethod
    def _health(connection: Any, request: Any) -> Any:
        if request.path == "/healthz":
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        return None

    async def _main(self) -> None:
        from websockets.asyncio.server import serve

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with serve(self._handle, self.host, self.port, compression=None, max_size=None,
                         process_request=self._health) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    def serve_forever(self) -> None:
        """Serve until interrupted (or `stop`)."""
        asyncio.run(self._main())

    def start(self) -> PolicyServer:
        """Serve from a background thread; returns once listening (`port` is then the real one)."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the policy server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)
