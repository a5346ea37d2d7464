"""The openpi websocket path: `OpenpiPolicy` (openpi's own client) against `PolicyServer`, in
process with a fake policy, and against `tether serve-policy` in a separate process on loopback
driving a `vla` episode."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.trees.harness import BOWL, compile_node, run, scene
from tether.errors import TetherError
from tether.models.observation import CameraSpec, Observation
from tether.models.policies import POLICIES, register_policy
from tether.models.remote import OpenpiConfig, OpenpiPolicy
from tether.models.serve import PolicyServer

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO / "models" / "checkpoints" / "grasp_act"


class Echo:
    """Replies with a chunk that encodes what it was sent (or raises on request)."""

    cameras = (CameraSpec("robot0_eye_in_hand", (16, 16), "image2"),)

    def __init__(self):
        self.seen: list[Observation] = []
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def infer(self, obs: Observation) -> np.ndarray:
        if obs.instruction == "fail":
            raise ValueError("asked to fail")
        self.seen.append(obs)
        chunk = np.zeros((6, 7))
        chunk[:, 0] = obs.state[0]
        chunk[:, 6] = -1
        return chunk


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    echo = Echo()
    srv = PolicyServer(echo, port=0, metadata={"name": "echo"}).start()
    yield echo, srv
    srv.stop()


def observation(size: int = 32, instruction: str = "pick up the bowl") -> Observation:
    images = {"observation/image": np.full((size, size, 3), 7, np.uint8),
              "observation/wrist_image": np.full((size, size, 3), 9, np.uint8)}
    return Observation(images=images, state=np.arange(8, dtype=np.float32) + 0.5,
                       instruction=instruction)


def test_client_and_server_speak_openpi_frames(server):
    echo, srv = server
    client = OpenpiPolicy(OpenpiConfig(host="127.0.0.1", port=srv.port, image_size=(32, 32),
                                       replan_steps=4))
    assert client.metadata == {"name": "echo"}
    chunk = client.infer(observation())
    assert chunk.shape == (4, 7) and np.allclose(chunk[:, 0], 0.5)  # replan_steps of 6 rows
    seen = echo.seen[0]
    assert seen.instruction == "pick up the bowl"
    assert seen.images["image2"].shape == (16, 16, 3)  # resized to the served policy's camera
    assert (seen.images["image2"] == 9).all()  # from the wrist image
    assert echo.resets == 1


def test_a_server_side_exception_reaches_the_client_as_an_error(server):
    _, srv = server
    client = OpenpiPolicy(OpenpiConfig(host="127.0.0.1", port=srv.port, image_size=(32, 32)))
    with pytest.raises(RuntimeError, match="asked to fail"):
        client.infer(observation(instruction="fail"))


def test_a_missing_server_is_a_clear_error_not_a_hang():
    start = time.monotonic()
    with pytest.raises(TetherError, match="no policy server answered"):
        OpenpiPolicy(OpenpiConfig(host="127.0.0.1", port=free_port(), timeout=0.5))
    assert time.monotonic() - start < 5


def test_a_vla_leaf_drives_an_episode_through_the_server(tmp_path, server):
    _, srv = server
    register_policy("remote", OpenpiConfig(host="127.0.0.1", port=srv.port, image_size=(16, 16),
                                           replan_steps=3))
    try:
        robot = scene()
        node = (f"vla: {{policy: remote, name: act, predicate: grasped, object: {BOWL}, "
                "max_steps: 9, continue_steps: 0, stuck: false}")
        result, frames = run(compile_node(tmp_path, node, robot), robot)
    finally:
        POLICIES.unregister("remote")
    assert [f.commander for f in frames[:9]] == ["act"] * 9
    assert result.errors[-1]["code"] == "BUDGET_EXHAUSTED"


@pytest.mark.slow
def test_tether_serve_policy_in_another_process_drives_an_episode(tmp_path):
    """The committed grasp checkpoint served by `tether serve-policy` on loopback; the client's
    chunks are what the same checkpoint computes in this process."""
    from tether.models.lerobot_policy import LerobotPolicy

    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    tether = str(Path(sys.executable).parent / "tether")
    proc = subprocess.Popen([tether, "serve-policy", str(CHECKPOINT), "--port", str(port)],
                            cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        size = LerobotPolicy(CHECKPOINT).cameras[0].size
        config = OpenpiConfig(host="127.0.0.1", port=port, image_size=size, replan_steps=10,
                              timeout=120)
        register_policy("served", config)
        robot = scene()
        node = (f"vla: {{policy: served, name: act, predicate: lifted, object: {BOWL}, "
                "max_steps: 20, continue_steps: 0, stuck: false}")
        result, frames = run(compile_node(tmp_path, node, robot), robot)
        assert sum(f.commander == "act" for f in frames) >= 10
        obs = observation(size=size[0])
        local = LerobotPolicy(CHECKPOINT)
        remote = OpenpiPolicy(config)
        wrist = Observation(images={"image2": obs.images["observation/wrist_image"]},
                            state=obs.state, instruction=obs.instruction)
        assert np.allclose(remote.infer(obs), local.infer(wrist)[:10], atol=1e-4)
    finally:
        POLICIES.unregister("served")
        proc.terminate()
        proc.wait(20)
