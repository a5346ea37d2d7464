"""Perturbations of tasks and runs, registered by name (see docs/perturbations.md).

    from tether.scenes.perturbations import REGISTRY, build, open_scene
    scene = open_scene("libero_goal/8", [build("distractors:n=3"), build("lighting")], seed=1)

Importing the package registers every kind: layout, language, appearance, dynamics, perception.
"""

from tether.scenes.perturbations import appearance, dynamics, language, layout, perception
from tether.scenes.perturbations.base import REGISTRY, Perturbation, build, register, spec_of

__all__ = ["REGISTRY", "Perturbation", "appearance", "build", "dynamics", "language", "layout",
           "open_scene", "perception", "perturbed_instruction", "register", "spec_of"]


def open_scene(*args, **kwargs):
    """`tether.scenes.perturbations.scene.open_scene` (imported lazily: it loads LIBERO's scene)."""
    from tether.scenes.perturbations.scene import open_scene as _open

    return _open(*args, **kwargs)


def perturbed_instruction(scene, text: str) -> str:
    """`tether.scenes.perturbations.scene.perturbed_instruction` (imported lazily, as above)."""
    from tether.scenes.perturbations.scene import perturbed_instruction as _edit

    return _edit(scene, text)
