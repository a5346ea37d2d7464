"""`tether train` on a small language-conditioned dataset written without a simulator: saving,
resuming with the optimiser's state, the instruction embedding reaching the policy, and the
errors of a bad dataset or a bad resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tether.datasets.rollouts import append_episode, rollout_features
from tether.errors import TetherError
from tether.models.language import FEATURE, Language
from tether.models.observation import CameraSpec, Observation, drafted, save_drafted
from tether.models.train import STATE, TrainConfig, train

SIZE = 16
CAMERAS = (CameraSpec("agentview", (SIZE, SIZE), "image"),)
LANGUAGE = Language("hashing")
INSTRUCTIONS = ("put the ketchup in the basket", "put the butter in the basket")


def episode(instruction: str, sign: float, n: int = 12) -> list[dict]:
    """Frames whose action depends on the instruction only: +sign or -sign on every axis."""
    rng = np.random.default_rng(int(sign > 0))
    return [{"observation.images.image": rng.integers(0, 255, (SIZE, SIZE, 3), np.uint8),
             "observation.state": np.zeros(8, np.float32),
             "action": np.full(7, sign * 0.5, np.float32), "task": instruction,
             "tree.node": "move", FEATURE: LANGUAGE.vector(instruction)} for _ in range(n)]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lang") / "demos"
    wanted = rollout_features(CAMERAS, LANGUAGE)
    for k in range(4):
        append_episode(root, episode(INSTRUCTIONS[k % 2], 1.0 if k % 2 else -1.0), True, wanted)
    LANGUAGE.save(root / "meta")
    return root


def config(dataset: Path, out: Path, steps: int, **kw) -> TrainConfig:
    return TrainConfig(dataset=dataset, out=out, steps=steps, batch_size=4, chunk_size=2,
                       dim_model=32, dim_feedforward=64, threads=1, save_every=1,
                       **{"n_action_steps": 2, **kw})


@pytest.fixture(scope="module")
def straight(dataset, tmp_path_factory) -> Path:
    """Four steps without an interruption."""
    out = tmp_path_factory.mktemp("straight") / "act"
    train(config(dataset, out, 4))
    return out


def test_two_steps_saved_then_resumed_for_two_more_continue_the_same_run(dataset, straight,
                                                                          tmp_path):
    out = tmp_path / "act"
    first = train(config(dataset, out, 2))
    assert (first.steps, first.resumed_from, [s for s, _ in first.loss]) == (2, 0, [1, 2])
    second = train(config(dataset, out, 4, resume=True))
    assert (second.steps, second.resumed_from) == (4, 2)
    assert second.loss[:2] == first.loss  # the curve is continued, not restarted
    whole = json.loads((straight / "training.json").read_text(encoding="utf-8"))["report"]
    # the same batches, dropout draws and optimiser moments as the run never interrupted
    assert [list(p) for p in second.loss] == whole["loss"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "(resumed at step 2)" in card


def test_a_frozen_backbone_is_kept_as_taken_while_the_rest_trains(dataset, straight, tmp_path):
    import torch
    from safetensors.torch import load_file

    out = tmp_path / "act"
    train(config(dataset, out, 3, backbone=straight))
    source = load_file(straight / "model.safetensors")
    trained = load_file(out / "model.safetensors")
    backbone = [k for k in source if k.startswith("model.backbone.")]
    assert backbone and all(torch.equal(source[k], trained[k]) for k in backbone)
    assert not torch.equal(source["model.action_head.weight"], trained["model.action_head.weight"])
    assert f"the vision backbone of `{straight}` frozen" in (out / "README.md").read_text()


def test_feature_maps_served_for_the_images_give_the_loss_the_images_give(dataset, straight):
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from lerobot.policies.act.modeling_act import ACTPolicy
    from lerobot.policies.factory import make_pre_post_processors
    from lerobot.utils.feature_utils import dataset_to_policy_features

    from tether.models.backbone_features import BackboneFeatures, load_backbone
    from tether.models.frame_cache import FrameCache
    from tether.models.train import act_config

    data = LeRobotDataset("tether/demos", root=dataset, delta_timestamps={"action": [0, 0.05]})
    policy = ACTPolicy(act_config(config(dataset, dataset, 1),
                                  dataset_to_policy_features(data.meta.features))).eval()
    load_backbone(policy, straight)
    preprocessor, _ = make_pre_post_processors(policy.config, dataset_stats=data.meta.stats)
    cache = FrameCache(data)
    features = BackboneFeatures.of(policy, preprocessor, cache)
    indices = [0, 13, 40]
    batch = preprocessor(cache.batch(indices))
    with torch.no_grad():
        direct = policy.forward(dict(batch))[0]
        with features.served(policy):
            served = policy.forward(features.batch(batch, indices))[0]
        assert torch.allclose(direct, served, atol=1e-6)
        assert torch.equal(policy.model.backbone(batch["observation.images.image"])
                           ["feature_map"], features.maps["observation.images.image"][indices])


def test_a_backbone_from_a_folder_without_weights_is_a_clear_error(dataset, tmp_path):
    with pytest.raises(TetherError, match="no model.safetensors"):
        train(config(dataset, tmp_path / "act", 1, backbone=tmp_path))


def test_a_backbone_of_another_shape_is_a_clear_error(dataset, straight, tmp_path):
    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(straight / "model.safetensors")
    weights["model.backbone.conv1.weight"] = torch.zeros(8, 3, 7, 7)
    (tmp_path / "other").mkdir()
    save_file(weights, tmp_path / "other" / "model.safetensors")
    with pytest.raises(TetherError, match="its vision backbone is not this policy's"):
        train(config(dataset, tmp_path / "act", 1, backbone=tmp_path / "other"))


def test_the_language_file_is_copied_and_the_instruction_reaches_the_policy(straight):
    from tether.models.lerobot_policy import LerobotPolicy

    assert Language.load(straight) == LANGUAGE
    policy = LerobotPolicy(straight)
    seen = []
    pre = policy.pre
    policy.pre = lambda batch: seen.append(batch) or pre(batch)
    image = np.zeros((SIZE, SIZE, 3), np.uint8)
    chunks = [policy.infer(Observation({"image": image}, np.zeros(8, np.float32), text))
              for text in INSTRUCTIONS]
    assert [b[FEATURE].numpy().tolist() for b in seen] == [
        LANGUAGE.vector(t).tolist() for t in INSTRUCTIONS]
    assert not np.allclose(chunks[0], chunks[1])  # the same image, other words: other actions


def test_a_policy_trained_on_draft_frames_is_fed_drafts(dataset, straight, tmp_path):
    from tether.models.lerobot_policy import LerobotPolicy

    assert [c.draft for c in LerobotPolicy(straight).cameras] == [False]
    copy = tmp_path / "drafts"
    shutil.copytree(dataset, copy)
    save_drafted(copy / "meta", True)  # what `tether collect --draft` writes
    out = tmp_path / "act"
    train(config(copy, out, 1))
    assert drafted(out)
    assert [(c.camera, c.draft) for c in LerobotPolicy(out).cameras] == [("agentview", True)]


def test_a_checkpoint_taking_language_without_its_language_file_is_refused(straight, tmp_path):
    from tether.models.lerobot_policy import LerobotPolicy

    copy = tmp_path / "ck"
    shutil.copytree(straight, copy)
    (copy / "language.json").unlink()
    with pytest.raises(TetherError, match=r"takes observation.environment_state but the "
                                          r"checkpoint has no language.json"):
        LerobotPolicy(copy)


def test_resume_without_a_saved_run_and_restart_over_one_are_clear_errors(dataset, straight,
                                                                         tmp_path):
    with pytest.raises(TetherError, match=f"{tmp_path / 'none'} has no {STATE} to resume from"):
        train(config(dataset, tmp_path / "none", 2, resume=True))
    with pytest.raises(TetherError, match="holds a training run; give --resume"):
        train(config(dataset, straight, 6))


def test_resume_with_another_batch_size_is_a_clear_error(dataset, straight):
    bad = config(dataset, straight, 6, resume=True)
    bad.batch_size = 8
    with pytest.raises(TetherError, match=r"started with other batch_size \(4\)"):
        train(bad)


def test_resume_may_change_how_many_actions_of_a_chunk_run_but_not_past_the_chunk(dataset,
                                                                                  tmp_path):
    out = tmp_path / "act"
    train(config(dataset, out, 2))
    second = config(dataset, out, 2, resume=True)
    second.n_action_steps = 1
    assert train(second).steps == 2  # nothing left to train: saved again as it was
    assert json.loads((out / "config.json").read_text(encoding="utf-8"))["n_action_steps"] == 1
    assert "chunk 2 (n_action_steps 1)" in (out / "README.md").read_text(encoding="utf-8")
    with pytest.raises(TetherError, match=r"n_action_steps \(3\) cannot exceed the chunk size"):
        config(dataset, tmp_path / "other", 2, n_action_steps=3)


def test_a_language_feature_without_its_embedder_file_is_a_clear_error(dataset, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(dataset, copy)
    (copy / "meta" / "language.json").unlink()
    with pytest.raises(TetherError, match="observation.environment_state and meta/language.json "
                                          "go together"):
        train(config(copy, tmp_path / "ck", 1))


def test_an_unknown_embedder_in_a_language_file_is_a_located_error(tmp_path):
    (tmp_path / "language.json").write_text('{"embedder": "minilmm"}', encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        Language.load(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'language.json'}: unknown embedder "
                                        "'minilmm' (did you mean 'minilm'?)")


@pytest.mark.slow
def test_the_language_conditioned_checkpoint_runs_as_the_bare_arm_of_a_task(straight, tmp_path):
    """`vla_task` drives the checkpoint from the start pose with the task's instruction until
    the task's own goal (here: until its 4-step budget, the policy being untrained)."""
    from typer.testing import CliRunner

    from tether.cli.main import app
    from tether.trees.compiler import LIBRARY

    result = CliRunner().invoke(app, [
        "run", str(LIBRARY / "vla_task.yaml"), "--task", "libero_object/0", "--init-state",
        "40", "--policy", f"act={straight}", "--with", "policy=act", "--with", "steps=4",
        "--no-record", "--memory", "none", "--runs", str(tmp_path), "--lines"])
    assert ("error BUDGET_EXHAUSTED at step 4 in 'act end to end': task_success() not reached "
            "after 4 steps (2 chunks)") in result.output, result.output


def test_dataset_metadata_without_its_frame_rate_is_a_located_error(tmp_path):
    (tmp_path / "data" / "meta").mkdir(parents=True)
    info = tmp_path / "data" / "meta" / "info.json"
    info.write_text('{"total_episodes": 3}', encoding="utf-8")
    with pytest.raises(TetherError) as caught:
        train(config(tmp_path / "data", tmp_path / "ck", 1))
    assert str(caught.value) == f"{info} is not LeRobotDataset metadata ('fps')"


@pytest.mark.slow
def test_the_committed_baseline_solves_a_held_out_init_state_alone(tmp_path):
    """`object_act` (models/checkpoints/object_act), alone from the start pose, puts the salad
    dressing in the basket at init state 40, which its training data never saw."""
    from typer.testing import CliRunner

    from tether.cli.main import app
    from tether.trees.compiler import LIBRARY

    result = CliRunner().invoke(app, [
        "run", str(LIBRARY / "vla_task.yaml"), "--task", "libero_object/2", "--init-state", "40",
        "--with", "policy=object_act", "--no-record", "--memory", "none", "--runs",
        str(tmp_path), "--lines"])
    assert result.exit_code == 0, result.output
    assert ("SUCCESS  task libero_object/pick_up_the_salad_dressing_and_place_it_in_the_basket "
            "(init state 40)") in result.output
    assert "tree SUCCESS (finished)" in result.output
