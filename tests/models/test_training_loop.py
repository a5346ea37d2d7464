"""The training loop both trainers share, on a one-layer model: a run interrupted and resumed
from its last save is the run never interrupted; saves every `save_every` steps and once more
however the loop ends; the time budget counts earlier runs' time."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch

from tether.models.training_loop import LossCurve, TrainingLoop


class Interrupted(Exception):
    pass


def make_loop(steps: int, save_every: int = 2, **kw) -> TrainingLoop:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    optimiser = torch.optim.AdamW(model.parameters(), lr=0.1)
    return TrainingLoop(model, optimiser, LossCurve(steps, 3), steps=steps,
                        save_every=save_every, **kw)


def batch_loss(loop: TrainingLoop, stop_at: int | None = None):
    """The loss of the batch of step `loop.step + 1` (a fixed batch per step); raises
    `Interrupted` before step `stop_at`."""
    def loss():
        step = loop.step + 1
        if step == stop_at:
            raise Interrupted
        x = torch.tensor([[float(step), 1.0]])
        return ((loop.model(x) - torch.tensor([[2.0 * step]])) ** 2).mean()
    return loss


def saving(loop: TrainingLoop, saves: list) -> Callable[[], None]:
    """A save that records the step and keeps a copy of what a checkpoint would hold."""
    def save():
        saves.append((loop.step, copy.deepcopy({**loop.state(), "loss": loop.curve.state()})))
    return save


def test_a_run_interrupted_then_resumed_from_its_last_save_is_the_run_never_interrupted():
    straight, saves = make_loop(6), []
    straight.run(batch_loss(straight), saving(straight, saves))

    first, kept = make_loop(6), []
    with pytest.raises(Interrupted):
        first.run(batch_loss(first, stop_at=4), saving(first, kept))
    assert [s for s, _ in kept] == [2, 3]  # every 2 steps, and step 3 when interrupted
    saved = kept[-1][1]
    second, more = make_loop(6), []
    second.restore(saved)
    second.curve.restore(saved["loss"])
    assert (second.step, second.resumed_from) == (3, 3)
    second.run(batch_loss(second), saving(second, more))

    assert [s for s, _ in more] == [4, 6]
    assert [s for s, _ in straight.curve.points] == [2, 4, 6]
    assert second.curve.points == straight.curve.points  # step 3's loss was carried over
    for name, value in straight.model.state_dict().items():
        assert torch.equal(second.model.state_dict()[name], value), name


def test_saves_every_save_every_steps_and_at_the_end_once():
    loop, saves = make_loop(5), []
    loop.run(batch_loss(loop), saving(loop, saves))
    assert [s for s, _ in saves] == [2, 4, 5]
    loop, saves = make_loop(4), []
    loop.run(batch_loss(loop), saving(loop, saves))
    assert [s for s, _ in saves] == [2, 4]  # step 4 is not saved twice


def test_an_exception_is_raised_after_the_finally_save_and_the_model_left_in_eval_mode():
    loop, saves = make_loop(10, save_every=100), []
    with pytest.raises(Interrupted):
        loop.run(batch_loss(loop, stop_at=4), saving(loop, saves))
    assert [s for s, _ in saves] == [3]
    assert saves[0][1]["step"] == 3
    assert loop.model.training is False


def test_progress_sees_every_step_and_its_loss():
    seen: list = []
    loop = make_loop(3, progress=lambda step, loss: seen.append((step, round(loss, 4))))
    loop.run(batch_loss(loop), lambda: None)
    assert [s for s, _ in seen] == [1, 2, 3]
    assert loop.curve.points == [(1, seen[0][1]), (2, seen[1][1]), (3, seen[2][1])]


def test_a_run_resumed_with_its_minutes_spent_takes_no_step_and_saves_once():
    loop, saves = make_loop(5, minutes=1.0), []
    state = {**make_loop(5).state(), "step": 2, "seconds": 60.0}
    loop.restore(state)
    loop.run(batch_loss(loop), saving(loop, saves))
    assert loop.step == 2
    assert [s for s, _ in saves] == [2]


def test_clip_bounds_the_gradient_norm_before_the_optimiser_steps():
    loop = make_loop(1, clip=0.5)
    norms = []
    step = loop.optimiser.step
    loop.optimiser.step = lambda: norms.append(float(torch.cat(
        [p.grad.flatten() for p in loop.model.parameters()]).norm())) or step()
    loop.run(batch_loss(loop), lambda: None)
    assert norms == [pytest.approx(0.5)]
