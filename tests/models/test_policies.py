"""Policies a user brings (`models/policies.py`): SPECs, `NAME=SPEC` options, policies files
with SPECs, the device, and names registered for one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trees.harness import scene
from tether.errors import TetherError
from tether.models.lerobot_policy import LerobotConfig
from tether.models.policies import (
    POLICIES,
    PolicyOptions,
    needs_gpu,
    policy_for,
    registered,
    resolve_policies,
    spec_entry,
)
from tether.models.remote import OpenpiConfig
from tether.models.scripted import ScriptedConfig

CHECKPOINT = Path(__file__).resolve().parents[2] / "models" / "checkpoints" / "grasp_act"


def test_a_ws_url_is_an_openpi_server():
    assert spec_entry("ws://gpu-box:8000") == OpenpiConfig(host="ws://gpu-box", port=8000)
    assert spec_entry("wss://gpu-box") == OpenpiConfig(host="wss://gpu-box", port=None)


def test_a_checkpoint_folder_is_a_lerobot_policy_on_the_device():
    entry = spec_entry(str(CHECKPOINT), device="cuda")
    assert entry == LerobotConfig(path=str(CHECKPOINT.resolve()), device="cuda")
    assert entry.gpu and needs_gpu({"a": entry})
    assert not needs_gpu({"a": spec_entry(str(CHECKPOINT))})


def test_a_known_name_is_an_alias_of_that_policy():
    assert spec_entry("expert") is POLICIES["expert"]


@pytest.mark.parametrize(("spec", "message"), [
    ("ws://gpu-box:80x", "x: bad server URL 'ws://gpu-box:80x' (Port could not be cast to "
                         "integer value as '80x')"),
    ("ws://gpu-box:8000/policy", "x: expected an openpi server as ws://HOST:PORT, got "
                                 "'ws://gpu-box:8000/policy'"),
    ("expret", "x: 'expret' is not a checkpoint directory, an openpi server URL (ws://HOST:PORT),"
               " a known policy (did you mean 'expert'?) or a hub id (OWNER/NAME); known "
               "policies: expert, goal_act, grasp_act, object_act, spatial_act"),
])
def test_a_bad_spec_is_one_clear_error(spec, message):
    with pytest.raises(TetherError) as caught:
        spec_entry(spec, where="x: ")
    assert str(caught.value) == message


def test_a_folder_without_config_json_is_not_a_checkpoint(tmp_path):
    with pytest.raises(TetherError) as caught:
        spec_entry(str(tmp_path), where="x: ")
    assert str(caught.value) == f"x: {tmp_path} is not a lerobot checkpoint (no config.json)"


def test_a_hub_id_offline_and_not_cached_says_so(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.chdir(tmp_path)  # no folder of that name here
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(TetherError) as caught:
        spec_entry("nobody/no_such_policy", where="x: ")
    assert str(caught.value) == (
        "x: 'nobody/no_such_policy' is a hub id, but this machine is offline (HF_HUB_OFFLINE) "
        "and the checkpoint is not in its cache; download it where online (`hf download "
        "nobody/no_such_policy --local-dir DIR`) and give DIR")


def test_options_read_the_file_then_the_specs_with_the_device(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(f"pinned: {{type: lerobot, path: /x, device: cpu}}\n"
                    f"local: {CHECKPOINT}\nremote: ws://127.0.0.1:9000\n", encoding="utf-8")
    found = resolve_policies(PolicyOptions(("grasp=expert", "mine=" + str(CHECKPOINT)), path,
                                           "cuda"))
    assert found == {
        "pinned": LerobotConfig(path="/x", device="cpu"),  # names its device: kept
        "local": LerobotConfig(path=str(CHECKPOINT.resolve()), device="cuda"),
        "remote": OpenpiConfig(host="ws://127.0.0.1", port=9000),
        "grasp": ScriptedConfig(),
        "mine": LerobotConfig(path=str(CHECKPOINT.resolve()), device="cuda")}


@pytest.mark.parametrize(("options", "message"), [
    (PolicyOptions(("mine",)), "--policy mine: expected NAME=SPEC (e.g. pi05=ws://gpu-box:8000)"),
    (PolicyOptions(("a=expert", "a=expert")), "--policy a=expert: 'a' is given twice"),
    (PolicyOptions(("expert=ws://h:1",)), "--policy expert=ws://h:1: a policy of that name "
                                          "exists already"),
    (PolicyOptions(("1x=expert",)), "--policy 1x=expert: a policy name is a word (letters, "
                                    "digits, _ . -), not '1x'"),
    (PolicyOptions(device="gpu"), "--device: unknown device 'gpu' (expected cpu, cuda, cuda:N "
                                  "or mps)"),
])
def test_bad_policy_options_are_clear_errors(options, message):
    with pytest.raises(TetherError) as caught:
        resolve_policies(options)
    assert str(caught.value) == message


def test_a_bad_spec_in_a_policies_file_is_located(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("ok: expert\nbad: ws://h:1/x\n", encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        resolve_policies(PolicyOptions(file=path))
    assert str(caught.value) == (f"{path}:2:1: bad: expected an openpi server as "
                                 "ws://HOST:PORT, got 'ws://h:1/x'")


def test_registered_names_last_for_the_block_and_rebuild_when_they_change():
    robot = scene()
    with registered({"mine": ScriptedConfig(lift=0.2)}):
        first = policy_for("mine", robot)
        assert first.lift == 0.2 and policy_for("mine", robot) is first
    assert "mine" not in POLICIES
    with registered({"mine": ScriptedConfig(lift=0.3)}):
        assert policy_for("mine", robot).lift == 0.3  # the new entry, not the cached policy
    with pytest.raises(TetherError, match="^policy grasp_act: a policy of that name exists"):
        with registered({"ok": ScriptedConfig(), "grasp_act": ScriptedConfig()}):
            pass
    assert "ok" not in POLICIES
