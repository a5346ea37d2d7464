"""Policy configs and names (`models/policy.py`, `models/policies.py`), LIBERO observations
(`models/observation.py`) and the lerobot adapter on the committed grasp checkpoint
(`models/lerobot_policy.py`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.trees.harness import scene
from tether.errors import TetherError
from tether.models.lerobot_policy import LerobotConfig
from tether.models.observation import (
    FRAMES,
    CameraSpec,
    Observation,
    drafted,
    libero_state,
    observe,
    quat_to_axis_angle,
    save_drafted,
)
from tether.models.policies import POLICIES, make_policy, read_policies
from tether.models.policy import check_chunk
from tether.models.remote import OpenpiConfig

CHECKPOINT = Path(__file__).resolve().parents[2] / "models" / "checkpoints" / "grasp_act"


def test_policies_file_reads_typed_configs(tmp_path):
    path = tmp_path / "policies.yaml"
    path.write_text("pi05: {type: openpi, host: gpu-box, port: 8000, replan_steps: 5}\n"
                    "mine: {type: lerobot, path: /ckpt}\n"
                    "smooth: {type: lerobot, path: /ckpt, temporal_ensemble: 0.01}\n",
                    encoding="utf-8")
    assert read_policies(path) == {
        "pi05": OpenpiConfig(host="gpu-box", port=8000, replan_steps=5),
        "mine": LerobotConfig(path="/ckpt"),
        "smooth": LerobotConfig(path="/ckpt", temporal_ensemble=0.01)}
    assert "pi05" not in POLICIES  # read, not registered


def test_a_policies_file_cannot_rename_a_known_policy(tmp_path):
    path = tmp_path / "policies.yaml"
    path.write_text("expert: {type: scripted, lift: 0.2}\n", encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        read_policies(path)
    assert str(caught.value) == f"{path}:1:1: expert: a policy of that name exists already"


@pytest.mark.parametrize("text,message", [
    ("x: {type: lerobt, path: a}", "unknown policy type 'lerobt' (did you mean 'lerobot'?)"),
    ("x: {type: openpi, hots: a}", "unknown field 'hots' of a openpi policy (did you mean "
                                   "'host'?)"),
    ("x: {type: lerobot}", "missing 1 required positional argument: 'path'"),
])
def test_bad_policies_files_are_clear_errors(tmp_path, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        read_policies(path)
    assert message in str(caught.value)


def test_unknown_policy_name_suggests_the_closest():
    with pytest.raises(TetherError, match=r"^unknown policy 'expret' \(did you mean 'expert'\?\); "
                                          r"known: expert, goal_act, grasp_act, object_act, "
                                          r"spatial_act$"):
        make_policy("expret", scene())


def test_check_chunk_accepts_one_action_or_a_chunk():
    assert check_chunk(np.zeros(7)).shape == (1, 7)
    assert check_chunk(np.zeros((5, 7))).shape == (5, 7)
    with pytest.raises(ValueError):
        check_chunk(np.zeros((5, 8)))


def test_state_is_libero_eef_axis_angle_fingers():
    robot = scene()
    state = libero_state(robot)
    assert state.shape == (8,) and state.dtype == np.float32
    assert np.allclose(state[:3], robot.eef_pose().pos)
    assert np.allclose(state[6:], [0.04, -0.04])  # the kinematic gripper's 8 cm, split
    down = Rotation.from_euler("xyz", [np.pi, 0, 0]).as_quat()
    assert np.allclose(quat_to_axis_angle(down), [np.pi, 0, 0])
    flipped = quat_to_axis_angle(-down)  # robosuite does not canonicalise the sign of w
    assert np.allclose(np.abs(flipped), [np.pi, 0, 0])


def test_observe_mirrors_upright_frames_into_libero_convention():
    robot = scene()
    frame = np.zeros((4, 6, 3), np.uint8)
    frame[:, 0] = 255  # left column white in the upright frame
    asked = []
    robot.render = lambda camera, size, draft: asked.append(draft) or frame
    obs = observe(robot, [CameraSpec("agentview", (4, 6), "image")], "x")
    assert (obs.images["image"][:, -1] == 255).all() and (obs.images["image"][:, 0] == 0).all()
    observe(robot, [CameraSpec("agentview", (4, 6), "image", draft=True)], "x")
    assert asked == [False, True]  # a camera declared as a draft is rendered as one


@pytest.mark.parametrize(("text", "message"), [
    ('{"draft": "yes"}', "draft must be true or false, not 'yes'"),
    ('{"drafts": true}', "not a frames file"),
    ("\x00\xff\xfe", "not a frames file"),
])
def test_a_bad_frames_file_is_a_located_error(tmp_path, text, message):
    (tmp_path / FRAMES).write_bytes(text.encode("latin-1"))
    with pytest.raises(TetherError) as caught:
        drafted(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / FRAMES}: {message}")


def test_frames_are_full_unless_the_folder_says_drafts(tmp_path):
    assert not drafted(tmp_path)
    save_drafted(tmp_path, True)
    assert drafted(tmp_path)


@pytest.mark.slow
def test_lerobot_adapter_maps_features_and_returns_unnormalised_chunks():
    from tether.models.lerobot_policy import LerobotPolicy

    policy = LerobotPolicy(CHECKPOINT)
    assert [(c.camera, c.key) for c in policy.cameras] == [("robot0_eye_in_hand", "image2")]
    size = policy.cameras[0].size
    obs = Observation(images={"image2": np.full((*size, 3), 90, np.uint8)},
                      state=np.array([-0.2, 0.0, 1.05, 3.14, 0.0, -0.09, 0.039, -0.039],
                                     np.float32), instruction="pick up the black bowl")
    chunk = policy.infer(obs)
    assert chunk.shape == (policy.n_action_steps, 7) and np.all(np.isfinite(chunk))
    assert np.abs(chunk).max() < 5  # un-normalised back into the action range, roughly


@pytest.mark.slow
def test_temporal_ensembling_returns_the_weighted_mean_of_every_chunk_so_far():
    from tether.models.lerobot_policy import LerobotPolicy

    plain = LerobotPolicy(CHECKPOINT, n_action_steps=1000)  # whole chunks
    size = plain.cameras[0].size
    state = np.array([-0.2, 0.0, 1.05, 3.14, 0.0, -0.09, 0.039, -0.039], np.float32)
    first, second = (Observation(images={"image2": np.full((*size, 3), v, np.uint8)},
                                 state=state, instruction="pick up the black bowl")
                     for v in (40, 200))
    chunk1, chunk2 = plain.infer(first), plain.infer(second)
    ensembled = LerobotPolicy(CHECKPOINT, temporal_ensemble=0.5)
    ensembled.reset()
    step0, step1 = ensembled.infer(first), ensembled.infer(second)
    assert step0.shape == (1, 7) and ensembled.n_action_steps == 1
    assert np.allclose(step0[0], chunk1[0], atol=1e-5)
    older, newer = 1.0, np.exp(-0.5)  # the older prediction weighs more
    assert np.allclose(step1[0], (older * chunk1[1] + newer * chunk2[0]) / (older + newer),
                       atol=1e-5)
    ensembled.reset()  # a new call starts a new ensemble
    assert np.allclose(ensembled.infer(second)[0], chunk2[0], atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("coeff", ["0.01", True, float("nan")])
def test_temporal_ensembling_takes_a_finite_number(coeff):
    from tether.models.lerobot_policy import LerobotPolicy

    with pytest.raises(TetherError, match="temporal_ensemble is ACT's temporal ensembling"):
        LerobotPolicy(CHECKPOINT, temporal_ensemble=coeff)


@pytest.mark.slow
def test_lerobot_adapter_rejects_a_folder_that_is_not_a_checkpoint(tmp_path):
    from tether.models.lerobot_policy import LerobotPolicy

    with pytest.raises(TetherError, match="not a lerobot checkpoint"):
        LerobotPolicy(tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    ("x: {type: scripted, lift: .nan}", "p.yaml:1:1: x: lift: must be a finite number, got nan"),
    ("ok: {type: scripted}\nx: {type: openpi, timeout: .inf}",
     "p.yaml:2:1: x: timeout: must be a finite number, got inf"),
    ("x:\n  type: scripted\n  lift: -1e999",
     "p.yaml:1:1: x: lift: must be a finite number, got -inf"),
])
def test_a_policy_number_that_is_not_finite_is_located(tmp_path, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        read_policies(path)
    assert str(caught.value) == f"{tmp_path}/{message}"


def test_a_policy_file_nested_thousands_deep_is_located(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("x: " + "{a: " * 2000 + "1" + "}" * 2000, encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        read_policies(path)
    assert str(caught.value) == f"{path}:1:601: nested more than 150 levels deep"
