"""The stuck detector over a policy's recent actions (VLA²'s `check_stuck_by_actions`).

Over the last `window` commanded 7-D actions (translation 3, rotation 3, gripper 1, normalised),
the policy is stuck when either
- **weak motion**: every action moves less than `translation` and turns less than `rotation`
  (L2 norms) and the gripper command changes by at most `gripper` across the window; or
- **oscillation**: on some translation or rotation axis the sign flips between consecutive
  actions in more than `oscillation` of the window's steps, while the mean translation and mean
  rotation over the window stay below `translation` and `rotation`.

Nothing is decided before the window is full.

    detector = StuckDetector(StuckConfig())
    reason = detector.update(action)   # None, "weak motion" or "oscillation"
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StuckConfig:
    window: int = 8
    translation: float = 0.02
    rotation: float = 0.03
    gripper: float = 0.1
    oscillation: float = 0.6


def flip_ratio(parts: np.ndarray) -> float:
    """The largest per-axis fraction of consecutive steps whose sign flips; zeros never flip."""
    signs = np.sign(parts)
    flips = (signs[1:] * signs[:-1]) < 0
    return float(flips.mean(axis=0).max())


class StuckDetector:
    """Feed it every commanded action; it says when the last `window` of them look stuck."""

    def __init__(self, config: StuckConfig):
        self.config = config
        self.actions: deque[np.ndarray] = deque(maxlen=config.window)

    def reset(self) -> None:
        self.actions.clear()

    def update(self, action: np.ndarray) -> str | None:
        """Record `action`; the reason the window is stuck, or None."""
        self.actions.append(np.asarray(action, dtype=float))
        c = self.config
        if len(self.actions) < c.window:
            return None
        a = np.stack(self.actions)
        move, turn, grip = a[:, :3], a[:, 3:6], a[:, 6]
        if (np.all(np.linalg.norm(move, axis=1) < c.translation)
                and np.all(np.linalg.norm(turn, axis=1) < c.rotation)
                and np.ptp(grip) <= c.gripper):
            return "weak motion"
        if ((flip_ratio(move) > c.oscillation or flip_ratio(turn) > c.oscillation)
                and np.linalg.norm(move.mean(axis=0)) < c.translation
                and np.linalg.norm(turn.mean(axis=0)) < c.rotation):
            return "oscillation"
        return None
