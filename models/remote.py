"""`OpenpiPolicy`: a policy served over openpi's websocket protocol, behind the `Policy` protocol.

This is how pi0 / pi0.5 users run their policies (openpi's `scripts/serve_policy.py` on a GPU
machine) and how `tether serve-policy` serves a local lerobot checkpoint. The client is openpi's
own (`openpi_client.WebsocketClientPolicy`, msgpack-numpy frames, one request in flight). The
observation follows openpi's LIBERO example client:

    observation/image        agent view, uint8 (h, w, 3), LIBERO's image convention
    observation/wrist_image  wrist camera, same
    observation/state        the 8-D LIBERO state
    prompt                   the instruction

and the first `replan_steps` rows of the reply's `actions` are executed. Before connecting, the
client polls the server's `/healthz` for up to `timeout` seconds (openpi-client 0.1.1 itself
would wait forever), so a missing server is a clear error. A server-side exception arrives as
a `RuntimeError` from `infer`, which the `vla` leaf reports as POLICY_ERROR.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tether.errors import TetherError
from tether.models.observation import CameraSpec, Observation
from tether.models.policy import Policy, PolicyConfig
from tether.scenes.robot import Robot

IMAGE, WRIST, STATE, PROMPT = ("observation/image", "observation/wrist_image",
                               "observation/state", "prompt")


@PolicyConfig.register("openpi")
@dataclass
class OpenpiConfig(PolicyConfig):
    """A policy served over openpi's websocket protocol (openpi's `serve_policy`, or
    `tether serve-policy`). `replan_steps` actions of each returned chunk are executed."""

    host: str = "localhost"
    port: int | None = 8000
    api_key: str | None = None
    image_size: tuple[int, int] = (224, 224)
    replan_steps: int = 5
    timeout: float = 10.0  # seconds to wait for the server to accept the connection

    def build(self, robot: Robot) -> Policy:
        return OpenpiPolicy(self)


def wait_for_server(host: str, port: int | None, timeout: float) -> None:
    """Poll `GET /healthz` until it answers 200; TetherError after `timeout` seconds."""
    import httpx

    base = host.replace("ws://", "http://").replace("wss://", "https://")
    url = (base if base.startswith("http") else f"http://{base}") + (
        f":{port}" if port is not None else "") + "/healthz"
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise TetherError(f"no policy server answered at {url} within {timeout:g} s "
                              "(start one with `tether serve-policy CHECKPOINT --port N`, or "
                              "openpi's serve_policy)")
        time.sleep(0.2)


class OpenpiPolicy:
    """openpi's websocket client; `latencies` holds each round trip's seconds."""

    def __init__(self, config: OpenpiConfig):
        from openpi_client.websocket_client_policy import WebsocketClientPolicy

        self.config = config
        wait_for_server(config.host, config.port, config.timeout)
        self.client = WebsocketClientPolicy(config.host, config.port, api_key=config.api_key)
        self.metadata = self.client.get_server_metadata()
        size = tuple(config.image_size)
        self.cameras = (CameraSpec("agentview", size, IMAGE),
                        CameraSpec("robot0_eye_in_hand", size, WRIST))
        self.latencies: list[float] = []

    def reset(self) -> None:
        self.client.reset()

    def infer(self, obs: Observation) -> np.ndarray:
        start = time.perf_counter()
        request = {key: obs.images[key] for key in (IMAGE, WRIST)}
        request[STATE] = np.asarray(obs.state, dtype=np.float32)
        request[PROMPT] = obs.instruction
        reply = self.client.infer(request)
        self.latencies.append(time.perf_counter() - start)
        actions = np.asarray(reply["actions"], dtype=float)
        return actions[:self.config.replan_steps]
