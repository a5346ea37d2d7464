"""Model-backed perception (the `tether.models.perception` package: `open_vocab`, `tracker`): tiny
GroundingDINO / SAM2 / SAM2-video models with random weights are saved to local directories and
loaded through the adapters. The tests check the code path, shapes, box conversions, resizing,
tracking across frames and the errors; random weights say nothing about accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.trees.harness import BOWL, CHEESE, PLATE, compile_node, scene
from tether.errors import TetherError
from tether.models.perception import PRIVILEGED, perception_for
from tether.models.perception.open_vocab import (
    Detector,
    DetectSegment,
    Segmenter,
    prompt,
    to_pixels,
)
from tether.models.perception.tracker import Sam2Tracker, Tracker

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "black", "bowl", "plate", "cream",
         "cheese"]
SAM_SIZE = 128  # the tiny SAM2's input resolution


def tiny_grounding_dino(folder: Path) -> Path:
    """A GroundingDINO with a 2-stage Swin, a 1-layer BERT and 10 queries, and its processor
    (a BERT tokenizer over an 11-word vocabulary file)."""
    import torch
    from transformers import (
        BertTokenizer,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    torch.manual_seed(0)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(WORDS) + "\n")
    swin = SwinConfig(window_size=4, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                      image_size=128, out_features=["stage2", "stage3", "stage4"],
                      out_indices=[2, 3, 4])
    text = dict(model_type="bert", vocab_size=len(WORDS), hidden_size=8, num_hidden_layers=1,
                num_attention_heads=2, intermediate_size=8, max_position_embeddings=32)
    config = GroundingDinoConfig(
        backbone_config=swin, text_config=text, d_model=32, encoder_layers=1, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
        decoder_ffn_dim=32, num_queries=10, encoder_n_points=2, decoder_n_points=2)
    path = folder / "grounding-dino"
    GroundingDinoForObjectDetection(config).save_pretrained(path)
    GroundingDinoProcessor(
        image_processor=GroundingDinoImageProcessor(size={"shortest_edge": 128,
                                                          "longest_edge": 128}),
        tokenizer=BertTokenizer(vocab={w: i for i, w in enumerate(vocab.read_text().split())}),
    ).save_pretrained(path)
    return path


def _sam2_parts() -> dict:
    s = SAM_SIZE
    vision = dict(
        backbone_config=dict(hidden_size=8, embed_dim_per_stage=[8, 16, 32, 64],
                             blocks_per_stage=[1, 1, 2, 1], num_attention_heads_per_stage=[1] * 4,
                             window_size_per_stage=[4] * 4, global_attention_blocks=[3],
                             window_positional_embedding_background_size=[4, 4], image_size=[s, s]),
        backbone_channel_list=[64, 32, 16, 8], fpn_hidden_size=128,
        backbone_feature_sizes=[[s // 4, s // 4], [s // 8, s // 8], [s // 16, s // 16]])
    prompt_encoder = dict(hidden_size=128, image_size=s, patch_size=16, mask_input_channels=4)
    decoder = dict(hidden_size=128, mlp_dim=64, num_attention_heads=2, iou_head_hidden_dim=32)
    return dict(vision=vision, prompt=prompt_encoder, decoder=decoder)


def _sam2_image_processor():
    from transformers import Sam2ImageProcessor

    return Sam2ImageProcessor(size={"height": SAM_SIZE, "width": SAM_SIZE},
                              mask_size={"height": SAM_SIZE // 4, "width": SAM_SIZE // 4})


def tiny_sam2(folder: Path) -> Path:
    """A SAM2 image model (Hiera with one or two blocks per stage at 128 px) and its processor."""
    import torch
    from transformers import Sam2Config, Sam2Model, Sam2Processor

    torch.manual_seed(0)
    p = _sam2_parts()
    config = Sam2Config(vision_config=p["vision"], prompt_encoder_config=p["prompt"],
                        mask_decoder_config=p["decoder"])
    path = folder / "sam2"
    Sam2Model(config).save_pretrained(path)
    Sam2Processor(image_processor=_sam2_image_processor()).save_pretrained(path)
    return path


def tiny_sam2_video(folder: Path) -> Path:
    """A SAM2 video model (the same image part, one memory-attention layer) and its processor.
    The object-score head's bias is set high so the random tracker reports its objects present."""
    import torch
    from transformers import (
        Sam2VideoConfig,
        Sam2VideoMaskDecoderConfig,
        Sam2VideoModel,
        Sam2VideoProcessor,
        Sam2VideoPromptEncoderConfig,
        Sam2VideoVideoProcessor,
    )

    torch.manual_seed(0)
    p = _sam2_parts()
    s = SAM_SIZE
    config = Sam2VideoConfig(
        vision_config=p["vision"], image_size=s,
        prompt_encoder_config=Sam2VideoPromptEncoderConfig(**p["prompt"]),
        mask_decoder_config=Sam2VideoMaskDecoderConfig(**p["decoder"]),
        memory_attention_hidden_size=128, memory_attention_num_layers=1,
        memory_attention_feed_forward_hidden_size=64,
        memory_attention_rope_feat_sizes=[s // 16] * 2,
        memory_encoder_hidden_size=128, memory_encoder_output_channels=64,
        mask_downsampler_embed_dim=128, memory_fuser_embed_dim=128,
        memory_fuser_intermediate_dim=64)
    model = Sam2VideoModel(config)
    with torch.no_grad():
        model.mask_decoder.pred_obj_score_head.layers[-1].bias.fill_(10.0)
    path = folder / "sam2-video"
    model.save_pretrained(path)
    Sam2VideoProcessor(image_processor=_sam2_image_processor(),
                       video_processor=Sam2VideoVideoProcessor(
                           size={"height": s, "width": s})).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("perception-models")
    return {"detector": tiny_grounding_dino(folder), "segmenter": tiny_sam2(folder),
            "tracker": tiny_sam2_video(folder)}


def picture(h: int = 96, w: int = 80) -> np.ndarray:
    """A table-like gradient with a dark bowl-like disc and a white plate-like square."""
    image = np.zeros((h, w, 3), np.uint8)
    image[...] = np.linspace(90, 160, w, dtype=np.uint8)[None, :, None]
    yy, xx = np.mgrid[:h, :w]
    image[(yy - 30) ** 2 + (xx - 25) ** 2 < 100] = [20, 20, 20]
    image[55:80, 45:70] = [240, 240, 240]
    return image


def camera_scene(frames: list[int] | None = None):
    """The harness scene with a picture for every camera; `frames` collects the sizes asked."""
    robot = scene()

    def render(camera, size, draft=False):
        if frames is not None:
            frames.append(size)
        return picture(*size)

    robot.render = render
    return robot


# --- pure parts ---------------------------------------------------------------------------------
def test_the_detector_prompt_joins_the_phrases_and_spans_each():
    text, spans = prompt(["Black  Bowl", "plate"])
    assert text == "black bowl. plate."
    assert [text[a:b] for a, b in spans] == ["black bowl", "plate"]


def test_normalised_centre_boxes_become_clipped_pixel_corners():
    boxes = np.array([[0.5, 0.5, 0.5, 0.25],   # centred, half as wide, a quarter as high
                      [0.95, 0.1, 0.2, 0.4]])  # sticks out to the right and the top
    pixels = to_pixels(boxes, (100, 200))
    assert np.allclose(pixels[0], [50, 37.5, 150, 62.5])
    assert np.allclose(pixels[1], [170, 0, 200, 30])


# --- the adapters on real (tiny, random) models --------------------------------------------------
def test_detector_boxes_are_pixel_corners_inside_the_frame(models):
    frame = picture()
    detector = Detector(models["detector"])
    phrases = {BOWL: "black bowl", "akita_black_bowl_2": "black bowl", PLATE: "plate"}
    boxes = detector.detect(frame, phrases, threshold=0.0)
    assert set(boxes) == set(phrases)  # every query passes a zero threshold
    for box in boxes.values():
        assert box.shape == (4,) and box.dtype == np.float64
        assert 0 <= box[0] <= box[2] <= 80 and 0 <= box[1] <= box[3] <= 96
    assert not np.array_equal(boxes[BOWL], boxes["akita_black_bowl_2"])  # two distinct boxes
    assert detector.detect(frame, phrases, threshold=1.0) == {}  # nothing scores above 1


def test_pixel_boxes_agree_with_the_processors_own_conversion(models):
    import torch
    from transformers.models.grounding_dino.modeling_grounding_dino import (
        GroundingDinoObjectDetectionOutput,
    )

    from tether.models.perception.open_vocab import load

    _, processor = load("GroundingDinoForObjectDetection", "AutoProcessor", models["detector"],
                        "cpu")
    boxes = torch.tensor([[[0.5, 0.5, 0.5, 0.25], [0.3, 0.6, 0.2, 0.4]]])
    out = GroundingDinoObjectDetectionOutput(logits=torch.ones(1, 2, 4), pred_boxes=boxes)
    ids = torch.tensor([[2, 6, 7, 3]])
    theirs = processor.post_process_grounded_object_detection(out, ids, threshold=0.0,
                                                              target_sizes=[(96, 80)])
    assert np.allclose(to_pixels(boxes[0].numpy(), (96, 80)), theirs[0]["boxes"].numpy())


def test_segmenter_masks_are_boolean_at_the_requested_size(models):
    frame = picture()
    boxes = {BOWL: np.array([15.0, 20.0, 35.0, 40.0]), PLATE: np.array([45.0, 55.0, 70.0, 80.0])}
    masks = Segmenter(models["segmenter"]).segment(frame, boxes, (30, 20))
    assert masks and set(masks) <= set(boxes)
    assert all(m.shape == (30, 20) and m.dtype == bool and m.any() for m in masks.values())
    assert Segmenter(models["segmenter"]).segment(frame, {}, (30, 20)) == {}


def test_detect_segment_renders_the_model_frame_and_answers_at_the_requested_size(models):
    asked: list = []
    robot = camera_scene(asked)
    perception = perception_for({"detector": str(models["detector"]),
                                 "segmenter": str(models["segmenter"]),
                                 "frame": [96, 80], "box_threshold": 0.0})
    assert isinstance(perception, DetectSegment)
    masks = perception.masks(robot, "agentview", (32, 48), [BOWL, CHEESE])
    assert asked == [(96, 80)]
    assert masks and set(masks) <= {BOWL, CHEESE}
    assert all(m.shape == (32, 48) and m.dtype == bool for m in masks.values())
    strict = perception_for({"detector": str(models["detector"]),
                             "segmenter": str(models["segmenter"]), "box_threshold": 1.0})
    assert strict.masks(robot, "agentview", (32, 48), [BOWL]) == {}  # nothing found


def test_tracker_propagates_box_seeded_masks_across_frames(models):
    tracker = Sam2Tracker(models["tracker"])
    frame = picture()
    boxes = {BOWL: [15.0, 20.0, 35.0, 40.0], PLATE: [45.0, 55.0, 70.0, 80.0]}
    seen = [tracker.start(frame, (24, 20), boxes=boxes)]
    shifted = np.roll(frame, 3, axis=1)  # the scene moves a little between frames
    seen += [tracker.step(shifted, (24, 20)), tracker.step(np.roll(shifted, 3, axis=1), (48, 40))]
    assert tracker.frame_idx == 2
    assert [set(m) for m in seen] == [set(boxes)] * 3
    assert all(m.dtype == bool for masks in seen for m in masks.values())
    assert {m.shape for m in seen[0].values()} == {(24, 20)}
    assert {m.shape for m in seen[2].values()} == {(48, 40)}
    assert list(tracker._session.processed_frames) == [2]  # older frames are dropped


def test_tracker_starts_from_masks_too(models):
    tracker = Sam2Tracker(models["tracker"])
    mask = np.zeros((96, 80), bool)
    mask[20:40, 15:35] = True
    first = tracker.start(picture(), (96, 80), masks={BOWL: mask})
    second = tracker.step(picture(), (96, 80))
    assert set(first) == set(second) == {BOWL} and second[BOWL].shape == (96, 80)
    with pytest.raises(TetherError, match="boxes or masks"):
        tracker.start(picture(), (96, 80))
    with pytest.raises(TetherError, match="not been started"):
        Sam2Tracker(models["tracker"]).step(picture(), (96, 80))


def test_tracker_perception_detects_once_then_propagates_per_step(models):
    asked: list = []
    robot = camera_scene(asked)
    perception = perception_for({"detector": str(models["detector"]),
                                 "tracker": str(models["tracker"]),
                                 "frame": [96, 80], "box_threshold": 0.0})
    assert isinstance(perception, Tracker)
    calls = []
    detect = perception.detector.detect
    perception.detector.detect = lambda *a, **k: calls.append(1) or detect(*a, **k)
    first = perception.masks(robot, "agentview", (32, 32), [BOWL, PLATE])
    again = perception.masks(robot, "agentview", (16, 16), [BOWL, PLATE])  # same step: reused
    (video,) = perception._videos[robot].values()
    for _ in range(2):
        robot.hold()
        later = perception.masks(robot, "agentview", (32, 32), [BOWL, PLATE])
    assert calls == [1] and len(asked) == 3 and video.tracker.frame_idx == 2
    assert set(first) == set(again) == set(later) == {BOWL, PLATE}
    assert all(m.shape == (16, 16) for m in again.values())
    assert all(m.shape == (32, 32) and m.dtype == bool for m in later.values())
    robot.steps = 0  # a new episode: detect again
    perception.masks(robot, "agentview", (32, 32), [BOWL, PLATE])
    assert calls == [1, 1]


# --- config and errors --------------------------------------------------------------------------
def test_the_default_is_privileged_perception():
    assert perception_for(None) is PRIVILEGED and perception_for("privileged") is PRIVILEGED


def test_spec_errors_are_clear(models, tmp_path):
    d, s, t = (str(models[k]) for k in ("detector", "segmenter", "tracker"))
    cases = [
        ({"detector": str(tmp_path / "nowhere"), "segmenter": s}, "no model directory"),
        ({"detector": str(tmp_path), "segmenter": s}, "has no config.json"),
        ({"detector": s, "segmenter": s}, "holds a 'sam2' model, not 'grounding-dino'"),
        ({"detector": d, "segmenter": d}, "holds a 'grounding-dino' model"),
        ({"detector": d, "tracker": s}, "holds a 'sam2' model, not 'sam2_video'"),
        ({"detector": d}, "exactly one of `segmenter`"),
        ({"detector": d, "segmenter": s, "tracker": t}, "exactly one of `segmenter`"),
        ({"segmenter": s}, "needs `detector`"),
        ({"detector": d, "segmenter": s, "treshold": 1}, "unknown option 'treshold'"),
        ({"detector": d, "segmenter": s, "frame": [64]}, "`frame` is \\[height, width\\]"),
        ({"detector": d, "segmenter": s, "box_threshold": 2}, "`box_threshold` is in"),
        ("groundingdino", "expected 'privileged' or a mapping"),
    ]
    for spec, message in cases:
        with pytest.raises(TetherError, match=message):
            perception_for(spec)
    # a SAM2 video checkpoint also serves as the per-frame segmenter
    assert isinstance(perception_for({"detector": d, "segmenter": t}), DetectSegment)


def test_a_scene_without_cameras_is_a_clear_error(models):
    perception = perception_for({"detector": str(models["detector"]),
                                 "segmenter": str(models["segmenter"])})
    with pytest.raises(TetherError, match="needs camera images"):
        perception.masks(scene(), "agentview", (32, 32), [BOWL])


def test_tree_nodes_take_a_perception_config(models, tmp_path):
    d, s = (json.dumps(str(models[k])) for k in ("detector", "segmenter"))
    node = (f"erase: {{objects: [cream cheese], perception: {{detector: {d}, segmenter: {s}}}, "
            "child: {vla: {policy: expert, predicate: grasped, object: black bowl}}}")
    root = compile_node(tmp_path, node, scene())
    assert isinstance(root.perception, DetectSegment)
    assert root.perception.spec.detector == models["detector"]
    plain = compile_node(tmp_path, "paint: {object: black bowl, child: {wait: 1}}", scene())
    assert plain.perception is PRIVILEGED
    bad = "paint: {object: black bowl, perception: {detector: /nowhere, segmenter: /x}, " \
          "child: {wait: 1}}"
    with pytest.raises(TetherError, match="no model directory /nowhere"):
        compile_node(tmp_path, bad, scene())


@pytest.mark.slow
def test_detect_segment_and_tracker_on_a_rendered_libero_frame(models):
    from tether.scenes.libero_scene import LiberoScene

    robot = LiberoScene("tether/put_the_middle_bowl_on_the_plate", init_state=0, seed=0)
    try:
        names = ["akita_black_bowl_2", "plate_1"]
        for kind in ("segmenter", "tracker"):
            perception = perception_for({"detector": str(models["detector"]),
                                         kind: str(models[kind]), "frame": [128, 128],
                                         "box_threshold": 0.0})
            for _ in range(3):
                masks = perception.masks(robot, "agentview", (64, 64), names)
                assert masks and set(masks) <= set(names)
                assert all(m.shape == (64, 64) and m.dtype == bool for m in masks.values())
                robot.hold()
    finally:
        robot.close()
