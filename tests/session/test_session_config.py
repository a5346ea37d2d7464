"""`SessionConfig`: what a session's settings ask of the scene it opens."""

from __future__ import annotations

from tether.session.session import SessionConfig


def test_only_what_looks_at_images_as_they_are_asks_for_a_textured_scene():
    """The trace's frames are drawn with light textures, so a run that records them builds its
    scene without its image textures; camera perception and a policy see the real ones."""
    recording = SessionConfig(task="libero_goal/put_the_bowl_on_the_plate")
    assert recording.record and recording.frames.cameras and not recording.seen
    assert SessionConfig(task="libero_goal/put_the_bowl_on_the_plate", perception="camera").seen
    policy = SessionConfig(task="libero_goal/put_the_bowl_on_the_plate",
                           policies={"grasp": "models/checkpoints/grasp_act"})
    assert policy.seen
