"""`SceneCache`: opened scenes kept between episodes and reset instead of built again.

Building a LIBERO scene creates robosuite's environment (the robot, the controller, the arena
and objects from the BDDL file, the MuJoCo model); a reset keeps the model, puts back what the
last episode edited in it, and loads the next initial state. A reset gives exactly the episode a
fresh scene gives when the model is the same: the same (perturbed) BDDL file and env settings,
which is what `tether.scenes.perturbations.scene.model_key` computes. So a scene is kept under its
key and handed out again, reset to the next init state, seed and reset-/run-stage perturbations,
when the next episode has that key; a different task or a scene-stage perturbation that edits the
problem differently (`object_replace`, `distractors`, ... at another seed) gets a fresh scene.

    scenes = SceneCache(size=1)
    scene = scenes.open("libero_goal/8", [build("pose_noise")], init_state=0, seed=0)
    ...  # one episode; the cache owns the scene: do not close it
    scene = scenes.open("libero_goal/8", [build("pose_noise")], init_state=1, seed=1)  # reset
    scenes.close()

A cache hands out one scene per key and expects one episode at a time. `size` scenes are kept;
beyond that the one reused least is closed first, of those the least recently used: a
perturbation that edits the problem at every seed builds one-off scenes, which go before the one
the reset- and run-stage kinds share. `built` and `reused` count what `open` did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.errors import TetherError
from tether.scenes.catalogue import Task
from tether.scenes.libero_scene import LiberoScene
from tether.scenes.perturbations.base import Perturbation
from tether.scenes.perturbations.scene import PerturbedScene, model_key, open_scene


class SceneCache:
    """Up to `size` opened scenes by `model_key`, reset for the next episode that has theirs."""

    def __init__(self, size: int = 1) -> None:
        if size < 1:
            raise TetherError(f"a scene cache keeps at least 1 scene, not {size}")
        self.size = size
        self.built = self.reused = 0
        self._scenes: dict[tuple[str, str], LiberoScene] = {}  # least recently used first
        self._uses: dict[tuple[str, str], int] = {}  # per kept key: how often it was reused

    def open(self, task: Task | str, perturbations: Sequence[Perturbation] = (),
             init_state: int = 0, seed: int = 0, **kwargs: Any) -> LiberoScene:
        """The scene `open_scene` would build for these arguments: a kept one reset to them
        when one has their key, else a new one (closing one beyond `size`: the least reused,
        of those the least recently used). A kept scene whose reset raises is closed and
        dropped."""
        key = model_key(task, perturbations, seed, **kwargs)
        scene = self._scenes.pop(key, None)
        if scene is not None:
            try:
                if isinstance(scene, PerturbedScene):
                    scene.use(perturbations, seed)
                scene.reset(init_state, seed)
            except BaseException:
                del self._uses[key]
                scene.close()
                raise
            self.reused += 1
            self._uses[key] += 1
        else:
            while len(self._scenes) >= self.size:
                least = min(self._scenes, key=self._uses.__getitem__)
                del self._uses[least]
                self._scenes.pop(least).close()
            scene = open_scene(task, perturbations, init_state=init_state, seed=seed, **kwargs)
            self.built += 1
            self._uses[key] = 0
        self._scenes[key] = scene
        return scene

    def close(self) -> None:
        """Close every kept scene."""
        self._uses.clear()
        while self._scenes:
            self._scenes.popitem()[1].close()
