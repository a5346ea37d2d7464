"""A captioned picture of a (perturbed) task's initial scene: `tether scenes show`.

The agent-view and wrist cameras side by side, the instruction (as perturbed) and the
perturbations underneath, so a person can look at a perturbation before trusting it:

    image = snapshot("libero_goal/8", ["camera_angle:yaw=25"], seed=1)   # a PIL image
    image.save("frame.png")
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from tether.scenes.observations import CAMERAS, Observer


def snapshot(task: str, perturb: Sequence[str] = (), *, seed: int = 0,
             init_state: int | None = None, size: int = 256,
             cameras: Sequence[str] = CAMERAS):
    """Open the scene, settle it, render `cameras` and caption them; returns a PIL image."""
    from PIL import Image, ImageDraw

    from tether.scenes.catalogue import get_task
    from tether.scenes.perturbations import build, open_scene

    entry = get_task(task)
    perturbations = [build(s) for s in perturb]
    index = seed % entry.num_init_states if init_state is None else init_state
    scene = open_scene(entry, perturbations, init_state=index, seed=seed)
    observer = Observer(scene)
    try:
        frames = [observer.observe(c, (size, size)).rgb for c in cameras]
        instruction = scene.task.language
    finally:
        observer.close()
        scene.close()
    lines = textwrap.wrap(f'"{instruction}"', width=max(20, size * len(frames) // 7))
    lines.append(f"{entry.id}  init state {index}  seed {seed}")
    if perturbations:
        lines += textwrap.wrap("perturbed: " + ", ".join(str(p) for p in perturbations),
                               width=max(20, size * len(frames) // 7))
    caption_h = 16 * len(lines) + 8
    image = Image.new("RGB", (size * len(frames), size + caption_h), "white")
    for i, frame in enumerate(frames):
        image.paste(Image.fromarray(frame), (i * size, 0))
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(lines):
        draw.text((6, size + 4 + 16 * k), line, fill="black")
    return image
