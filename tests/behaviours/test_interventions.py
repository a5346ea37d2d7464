"""Input interventions (`behaviours/interventions.py`) change exactly what they claim: pixel-level
checks of erase and paint, word-level checks of rewrite, and the decorators' filters reaching the
policy through a `vla` leaf in a compiled tree."""

from __future__ import annotations

import numpy as np
import pytest

from tests.trees.harness import BOWL, CHEESE, compile_node, run, scene
from tether.behaviours.interventions import Erase, Paint, erase, paint, rewrite
from tether.errors import TetherError
from tether.models.observation import CameraSpec, Observation
from tether.models.policies import POLICIES, register_policy


def striped(h: int = 32, w: int = 32) -> np.ndarray:
    """A smooth background (a horizontal gradient) with a red square distractor at [8:16, 8:16]."""
    image = np.zeros((h, w, 3), np.uint8)
    image[..., 1] = np.linspace(60, 120, w, dtype=np.uint8)[None, :]
    image[8:16, 8:16] = [255, 0, 0]
    return image


def square(h: int = 32, w: int = 32) -> np.ndarray:
    mask = np.zeros((h, w), bool)
    mask[8:16, 8:16] = True
    return mask


def test_erase_removes_the_masked_object_and_leaves_the_rest_alone():
    image, mask = striped(), square()
    out = erase(image, mask)
    assert out[mask, 0].max() < 40  # no red left where the square was
    inside = out[mask].astype(int)
    background = image[~mask].astype(int)
    assert abs(inside[:, 1].mean() - 80) < 20  # filled with the gradient's green around it
    far = np.ones_like(mask)
    far[4:20, 4:20] = False  # beyond the grown mask and the inpainting radius
    assert np.array_equal(out[far], image[far])
    assert background[:, 0].max() == 0


def test_paint_blends_the_colour_under_the_mask_only():
    image, mask = striped(), square()
    out = paint(image, mask, (0, 0, 255), 0.5)
    assert np.array_equal(out[mask][0], [128, 0, 128])  # half red, half blue
    assert np.array_equal(out[~mask], image[~mask])


def test_rewrite_replaces_whole_words_longest_first_any_case():
    replace = {"bowl": "cup", "porcelain bowl": "black bowl", "grab": "pick up"}
    assert rewrite("Grab the porcelain bowl", replace) == "pick up the black bowl"
    assert rewrite("the bowls and a bowl", replace) == "the bowls and a cup"


class Recording:
    """A fake policy that records what it is shown, then closes the gripper."""

    cameras = (CameraSpec("robot0_eye_in_hand", (32, 32), "image2"),)

    def __init__(self):
        self.seen: list[Observation] = []

    def reset(self) -> None:
        pass

    def infer(self, obs: Observation) -> np.ndarray:
        self.seen.append(obs)
        return np.array([[0, 0, 0, 0, 0, 0, 1.0]])


class SquareMasks:
    """A fake perception: every entity is the square at [8:16, 8:16] of the upright frame."""

    def __init__(self):
        self.asked: list[tuple[str, tuple[int, int], list[str]]] = []

    def masks(self, robot, camera, size, names):
        self.asked.append((camera, size, list(names)))
        return {n: square(*size) for n in names}


@pytest.fixture
def recording():
    policy = Recording()
    register_policy("recording", lambda robot: policy)
    yield policy
    POLICIES.unregister("recording")


def test_rewrite_decorator_changes_the_instruction_the_policy_gets(tmp_path, recording):
    robot = scene()
    node = """
    rewrite:
      template: "grab the porcelain bowl"
      replace: {grab: pick up, porcelain bowl: black bowl}
      child:
        vla: {policy: recording, predicate: grasped, object: black bowl, max_steps: 1,
               continue_steps: 0}
    """
    run(compile_node(tmp_path, node, robot), robot, instruction="put the bowl on the plate")
    assert recording.seen[0].instruction == "pick up the black bowl"


@pytest.mark.parametrize("kind", ["erase", "paint"])
def test_image_decorators_edit_the_policy_images_through_perception_masks(
        tmp_path, recording, kind):
    robot = scene()
    robot.render = lambda camera, size, draft=False: striped(*size)  # a scene with a picture
    node = (f"vla: {{policy: recording, predicate: grasped, object: {BOWL}, max_steps: 1, "
            "continue_steps: 0}")
    perception = SquareMasks()
    leaf = compile_node(tmp_path, node, robot)
    root = (Erase("erase", leaf, objects=["cream cheese"], perception=perception)
            if kind == "erase" else
            Paint("paint", leaf, objects=[BOWL], colour=(0, 0, 255), alpha=1.0,
                  perception=perception))
    run(root, robot)
    image = recording.seen[0].images["image2"]
    mask = square()[:, ::-1]  # LIBERO's convention mirrors the upright frame
    if kind == "erase":
        assert perception.asked == [("robot0_eye_in_hand", (32, 32), [CHEESE])]
        assert image[mask, 0].max() < 40
    else:
        assert (image[mask] == [0, 0, 255]).all()
        assert not (image[~mask] == [0, 0, 255]).all(axis=1).any()


def test_an_intervention_without_a_vla_leaf_below_is_an_error(tmp_path):
    robot = scene()
    root = compile_node(tmp_path, "rewrite: {replace: {a: b}, child: {wait: 1}}", robot)
    with pytest.raises(TetherError, match="must have a `vla` leaf below it"):
        run(root, robot)
