"""`PerturbedScene`: a `LiberoScene` whose task, initial state and run are perturbed.

Construction applies the scene-stage perturbations to the task's BDDL problem and instruction,
writes the edited problem to a cache file (named by its content, so identical perturbed tasks
share it) and opens LIBERO on that file. Each reset loads the initial state, then runs every
`on_reset` hook, then settles. Each step passes the action through `on_action` hooks and then
runs `after_step` hooks; `pose_of` passes poses through `perceive` hooks, `render` and
`observe` camera images through `see` hooks (success tests use LIBERO's own object states and are
never perturbed).

A task file with LIBERO-PRO's `:perturbation_config` section is perturbed by it: its kinds
(`task_perturbations`, mapped by `tether.scenes.perturbations.bddl_config`) come first in
`perturbations`, before the ones given.

Recorded initial states of LIBERO tasks survive added objects: a recorded state is copied joint
by joint in model order into the perturbed model, skipping the joints of objects the
perturbations added, which keep LIBERO's seeded placement from the reset.

    scene = open_scene("libero_goal/8", [build("position_swap")], init_state=0, seed=3)
    scene.task.language, scene.pose_of("plate").pos
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from tether.errors import TetherError
from tether.scenes.bddl import Problem, read_problem
from tether.scenes.catalogue import Task, get_task
from tether.scenes.libero_scene import LiberoScene
from tether.scenes.libero_setup import tether_libero_dir
from tether.scenes.perturbations.base import RESET, RUN, SCENE, Perturbation, rng_for
from tether.scenes.robot import Pose

_JOINT_SIZES = {0: (7, 6), 1: (4, 3), 2: (1, 1), 3: (1, 1)}  # free, ball, slide, hinge


def task_perturbations(task: Task) -> list[Perturbation]:
    """What the task file's own LIBERO-PRO `:perturbation_config` applies (mostly nothing);
    a perturbed scene applies these first, then the ones it is given."""
    from tether.scenes.perturbations.bddl_config import perturbations_of

    return perturbations_of(read_problem(task.bddl_file).perturbation_config)


def perturb_task(task: Task, perturbations: Sequence[Perturbation], seed: int
                 ) -> tuple[Task, Problem, Problem]:
    """The perturbed task (new BDDL file and instruction), the original and the edited problem."""
    original = read_problem(task.bddl_file)
    problem = original.copy(language=task.language)
    for i, p in enumerate(perturbations):
        problem = p.edit_problem(problem, rng_for(seed, i, p.name, SCENE))
    text = edit_instruction(problem.language, perturbations, problem, seed)
    problem = problem.copy(language=text)
    bddl = problem.to_bddl()
    digest = hashlib.sha1(bddl.encode()).hexdigest()[:12]
    path = tether_libero_dir() / "perturbed" / f"{task.bddl_file.stem}-{digest}.bddl"
    if not path.is_file():
        problem.write(path)
    return dataclasses.replace(task, bddl_file=path, language=text), original, problem


def edit_instruction(text: str, perturbations: Sequence[Perturbation], problem: Problem,
                     seed: int) -> str:
    """`text` as the instruction-stage perturbations rewrite it for `problem` (the edited one)."""
    for i, p in enumerate(perturbations):
        text = p.edit_instruction(text, problem, rng_for(seed, i, p.name, SCENE + "-text"))
    return text


def perturbed_instruction(scene: LiberoScene, text: str) -> str:
    """`text` edited as `scene`'s own instruction was (itself for an unperturbed scene): what an
    instruction given with the scene (`tether do`) reads as in it."""
    if not isinstance(scene, PerturbedScene):
        return text
    return edit_instruction(text, scene.perturbations, scene.problem, scene.text_seed)


class PerturbedScene(LiberoScene):
    """A LIBERO scene with perturbations applied at every stage (see the module docstring)."""

    def __init__(self, task: Task | str, perturbations: Sequence[Perturbation],
                 init_state: int = 0, seed: int = 0, **kwargs: Any) -> None:
        base = get_task(task) if isinstance(task, str) else task
        self.perturbations = (*task_perturbations(base), *perturbations)
        self.base_task = base
        self.text_seed = seed  # the instruction's edits were drawn with it
        perturbed, self.original_problem, self.problem = perturb_task(base, perturbations, seed)
        self._added = [n for n in self.problem.object_names()
                       if n not in self.original_problem.object_names()]
        self._run_rngs: list[np.random.Generator] = []
        self._see_rngs: list[np.random.Generator] = []
        self.perturbation_state: dict[str, dict] = {}  # per-episode state of run-time kinds
        super().__init__(perturbed, init_state=init_state, seed=seed, **kwargs)

    @property
    def instruction(self) -> str:
        return self.task.language

    def use(self, perturbations: Sequence[Perturbation], seed: int) -> None:
        """Apply `perturbations` drawn with `seed` from the next reset on. Only for a list whose
        scene stage gives this scene's problem (`model_key` is the same); the reset and run
        stages then are what a scene built with them would do."""
        self.perturbations = (*task_perturbations(self.base_task), *perturbations)
        self.text_seed = seed
        self.perturbation_state = {}

    def added_objects(self) -> list[str]:
        """Objects the perturbations added to the task (distractors, copies, occluders)."""
        return list(self._added)

    # --- reset -----------------------------------------------------------------------------
    def _start_state(self) -> dict[str, Any]:
        if self._init_states is not None and self._added:
            state = self._transplant(self._init_states[self.init_state])
            self._env.set_init_state(state)
        else:
            super()._start_state()
        self._index_model()
        for i, p in enumerate(self.perturbations):
            p.on_reset(self, rng_for(self.seed, i, p.name, f"{RESET}-{self.init_state}"))
        self._run_rngs = [rng_for(self.seed, i, p.name, f"{RUN}-{self.init_state}")
                          for i, p in enumerate(self.perturbations)]
        self._see_rngs = [rng_for(self.seed, i, p.name, f"see-{self.init_state}")
                          for i, p in enumerate(self.perturbations)]
        sim = self._env.env.sim
        sim.forward()
        return self._env.regenerate_obs_from_state(self._env.get_sim_state())

    def _transplant(self, recorded: np.ndarray) -> np.ndarray:
        """The recorded state laid into the perturbed model, skipping the added objects' joints."""
        model = self._env.env.sim.model._model
        current = self._env.get_sim_state()
        nq = model.nq
        qpos, qvel = current[1:1 + nq].copy(), current[1 + nq:].copy()
        added = {f"{name}_joint0" for name in self._added}
        old_q, old_v = [], []
        for j in range(model.njnt):
            if model.joint(j).name in added:
                continue
            dq, dv = _JOINT_SIZES[int(model.jnt_type[j])]
            old_q.append((int(model.jnt_qposadr[j]), dq))
            old_v.append((int(model.jnt_dofadr[j]), dv))
        old_nq, old_nv = sum(d for _, d in old_q), sum(d for _, d in old_v)
        if len(recorded) != 1 + old_nq + old_nv:
            raise TetherError(
                f"{self.base_task.id}: recorded state has {len(recorded)} numbers, the scene "
                f"without the added objects expects {1 + old_nq + old_nv}; a perturbation "
                "removed or reordered objects")
        src = 1
        for adr, d in old_q:
            qpos[adr:adr + d] = recorded[src:src + d]
            src += d
        for adr, d in old_v:
            qvel[adr:adr + d] = recorded[src:src + d]
            src += d
        return np.concatenate([[recorded[0]], qpos, qvel])

    # --- helpers for hooks -----------------------------------------------------------------
    @property
    def model(self):
        return self._env.env.sim.model._model

    @property
    def data(self):
        return self._data

    def true_pose_of(self, name: str) -> Pose:
        """The unperturbed pose (perception hooks change only what `pose_of` reports)."""
        return super().pose_of(name)

    def set_object_position(self, name: str, pos: np.ndarray, yaw: float | None = None) -> None:
        """Teleport an entity's root body to `pos` at rest, turned to `yaw` radians about the
        vertical if given (else keeping its orientation): a movable object through its free
        joint, a fixture (cabinet, stove) through its body's place in the model."""
        name = self._canonical(name)
        turn = None if yaw is None else [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        if name in self._env.env.objects_dict:
            joint = self.model.joint(f"{name}_joint0")
            adr, dof = int(joint.qposadr[0]), int(joint.dofadr[0])
            self._data.qpos[adr:adr + 3] = pos
            if turn is not None:
                self._data.qpos[adr + 3:adr + 7] = turn
            self._data.qvel[dof:dof + 6] = 0.0
        elif name in self._bodies:
            body = self._bodies[name]
            self.model.body_pos[body] += np.asarray(pos) - self._data.xpos[body]
            if turn is not None:
                self.model.body_quat[body] = turn
        else:
            raise TetherError(f"'{name}' is not an object or fixture of this scene")

    def movable_objects(self) -> list[str]:
        return list(self._env.env.objects_dict)

    def goal_object(self) -> str:
        """The object the first goal literal moves (or the only argument of a unary goal)."""
        return self.problem.goal[0][1]

    # --- run time --------------------------------------------------------------------------
    def _apply(self, action: np.ndarray) -> None:
        for p, rng in zip(self.perturbations, self._run_rngs, strict=True):
            action = p.on_action(self, action, rng)
        super()._apply(np.clip(action, -1.0, 1.0))
        for p, rng in zip(self.perturbations, self._run_rngs, strict=True):
            p.after_step(self, rng)

    def _seen(self, camera: str, image: np.ndarray) -> np.ndarray:
        for p, rng in zip(self.perturbations, self._see_rngs, strict=True):
            image = p.see(camera, image, rng)
        return image

    def observe(self) -> dict:
        obs = super().observe()
        if "images" in obs:
            obs["images"] = {c: self._seen(c, image) for c, image in obs["images"].items()}
        return obs

    def render(self, camera: str, size: tuple[int, int] = (128, 128),
               draft: bool = False) -> np.ndarray:
        """The frame as the camera delivers it to whoever renders it (policy, verifier,
        detector): passed through the `see` hooks. Recorded frames (`capture`) stay clean."""
        return self._seen(camera, super().render(camera, size, draft))

    def pose_of(self, name: str) -> Pose:
        name = self._canonical(name)
        pose = super().pose_of(name)
        for i, p in enumerate(self.perturbations):
            # perception is deterministic per (episode, entity): its own generator per name
            pose = p.perceive(name, pose, rng_for(self.seed, i, p.name,
                                                  f"perceive-{self.init_state}-{name}"))
        return pose


def model_key(task: Task | str, perturbations: Sequence[Perturbation] = (), seed: int = 0,
              **kwargs: Any) -> tuple[str, str]:
    """What decides the MuJoCo model `open_scene(task, perturbations, seed=seed, **kwargs)`
    builds: the BDDL file (a perturbed one is named by its content, so it stands for every
    scene-stage edit) and the env's settings. Two calls with one key build the same model; they
    differ at most in what a reset sets (init state, seed, reset- and run-stage perturbations)."""
    base = get_task(task) if isinstance(task, str) else task
    bddl = perturb_task(base, perturbations, seed)[0].bddl_file if _perturbed(base, perturbations) \
        else base.bddl_file
    return str(bddl), repr(sorted(kwargs.items()))


def _perturbed(task: Task, perturbations: Sequence[Perturbation]) -> bool:
    return bool(perturbations) or bool(task_perturbations(task))


def open_scene(task: Task | str, perturbations: Sequence[Perturbation] = (), init_state: int = 0,
               seed: int = 0, **kwargs: Any) -> LiberoScene:
    """A `LiberoScene`, perturbed when `perturbations` is not empty or the task file has a
    `:perturbation_config` section."""
    base = get_task(task) if isinstance(task, str) else task
    if _perturbed(base, perturbations):
        return PerturbedScene(base, perturbations, init_state=init_state, seed=seed, **kwargs)
    return LiberoScene(base, init_state=init_state, seed=seed, **kwargs)
