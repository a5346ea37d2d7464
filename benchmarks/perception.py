"""tether's category segmenter on held-out init states: mask IoU and localization error per
category and per appearance variant, beside localization from the simulator's own masks
(privileged: the geometry's error alone), and the per-frame inference time on this CPU.

The frames are a perception dataset's (`tether collect-perception`) whose init state is held out
of training (`init_state % holdout == holdout - 1`). IoU is over all held-out pixels of a
category (the model's own label). Localization fuses the agent-view and wrist frames of one
scene: the segmenter's category masks, look-alikes merged as the camera world merges them
(`scene_masks`), go through `localize_instances` (copies split by connected components), the
simulator's instance masks through `localize`, both with the camera world's rules
(`CameraConfig().localize`, docs/perception.md); each true instance (its geometry box's centre) is
matched to the nearest unmatched estimate of its category ('found'; an instance with none is
missed), and counted 'within 1.5 cm' when that estimate is. Errors are 3-D distances in cm
(medians over the found). With --card the tables go into the checkpoint's
evaluation.md and its model card.

    python benchmarks/perception.py models/checkpoints/segmenter data/perception_a data/perception_b
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

CLOSE = 0.015  # m: the error a camera-mode grasp tolerates


def localization_errors(frames, labels, segmenter_categories):
    """Per true instance: (category, variant, learned error or None, privileged error or None)."""
    from tether.blackboard.world import CameraConfig
    from tether.models.perception.category_segmenter import scene_masks
    from tether.models.perception.dataset import geometry_of
    from tether.scenes.localization import Sighting, localize, localize_instances

    config = CameraConfig().localize  # the camera world's rules

    groups = defaultdict(list)
    for i, r in enumerate(frames.records):
        groups[(r["task"], r["init_state"], r["variant"], r["seed"])].append(i)
    rows = []
    for (_, _, variant, _), idx in groups.items():
        truth = {inst["entity"]: inst for i in idx for inst in frames.records[i]["instances"]}
        categories = sorted({t["category"] for t in truth.values()})
        learned, privileged = [], []
        for i in idx:
            geometry = geometry_of(frames.records[i])
            learned.append(Sighting(geometry, frames.depth[i], scene_masks({
                c: labels[i] == k for k, c in enumerate(segmenter_categories, start=1)},
                categories)))
            privileged.append(Sighting(geometry, frames.depth[i], {
                inst["entity"]: frames.instance[i] == inst["id"]
                for inst in frames.records[i]["instances"]}))
        oracle = localize(privileged, list(truth), config)
        for category in categories:
            entities = [e for e, t in truth.items() if t["category"] == category]
            found = localize_instances(learned, category, config)
            pairs = sorted((float(np.linalg.norm(f.position - truth[e]["centre"])), e, j)
                           for e in entities for j, f in enumerate(found))
            matched, used = {}, set()
            for d, e, j in pairs:
                if e not in matched and j not in used:
                    matched[e], _ = d, used.add(j)
            for e in entities:
                o = oracle[e]
                rows.append((category, variant, matched.get(e),
                             float(np.linalg.norm(o.position - truth[e]["centre"]))
                             if o.found else None))
    return rows


def iou_table(frames, labels, categories):
    """Per category of the dataset: IoU over all pixels (or None when absent from both)."""
    out = {}
    for k, c in enumerate(frames.categories, start=1):
        if c not in categories:
            out[c] = 0.0 if (frames.category == k).any() else None
            continue
        pred = labels == categories.index(c) + 1
        true = frames.category == k
        union = int((pred | true).sum())
        out[c] = int((pred & true).sum()) / union if union else None
    return out


def med(values):
    values = [v for v in values if v is not None]
    return f"{100 * np.median(values):.2f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("datasets", type=Path, nargs="+")
    parser.add_argument("--holdout", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--card", action="store_true", help="write evaluation.md and the card")
    args = parser.parse_args()

    import torch

    from tether.models.perception.category_segmenter import CategorySegmenter
    from tether.models.perception.dataset import load
    from tether.models.perception.training import EVALUATION, held_out, write_card

    torch.set_num_threads(args.threads)
    segmenter = CategorySegmenter.load(args.checkpoint)
    frames = load(args.datasets)
    frames = frames.select(held_out(frames, args.holdout))
    if not len(frames):
        held = f"init_state % {args.holdout} == {args.holdout - 1}"
        parser.error(f"no held-out frames ({held}) in {', '.join(map(str, args.datasets))}; "
                     "choose --holdout for their init states")
    categories = list(segmenter.config.categories)
    labels = np.concatenate([segmenter.predict(frames.rgb[i:i + 32])
                             for i in range(0, len(frames), 32)])
    walls, cpus = [], []  # CPU time is what the frame costs; wall time adds the machine's load
    for i in range(min(len(frames), 60)):
        wall, cpu = time.perf_counter(), time.process_time()
        segmenter.predict(frames.rgb[i])
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    walls, cpus = sorted(walls[5:] or walls), sorted(cpus[5:] or cpus)

    ious = iou_table(frames, labels, categories)
    rows = localization_errors(frames, labels, categories)
    by_category, by_variant = defaultdict(list), defaultdict(list)
    for row in rows:
        by_category[row[0]].append(row)
        by_variant[row[1]].append(row)
    variant_iou = {}
    for variant in by_variant:
        keep = np.array([r["variant"] == variant for r in frames.records])
        part = frames.select(keep)
        values = [v for v in iou_table(part, labels[keep], categories).values() if v is not None]
        variant_iou[variant] = float(np.mean(values)) if values else None

    def line(name, iou, group):
        found = sum(r[2] is not None for r in group)
        close = sum(r[2] is not None and r[2] <= CLOSE for r in group)
        return (f"| {name} | {'-' if iou is None else f'{iou:.2f}'} | {found}/{len(group)} | "
                f"{close}/{len(group)} | {med(r[2] for r in group)} | "
                f"{med(r[3] for r in group)} |")

    head = ["| {} | mask IoU | found | within 1.5 cm | error, learned masks (cm) | error, "
            "privileged masks (cm) |", "| --- | --- | --- | --- | --- | --- |"]
    lines = [f"Held-out init states (`init_state % {args.holdout} == {args.holdout - 1}`) of "
             f"{', '.join(f'`{d}`' for d in args.datasets)}: {len(frames)} frames "
             f"({frames.rgb.shape[1]}x{frames.rgb.shape[2]}), {len(rows)} object instances; "
             f"agent view + wrist fused, errors are medians of 3-D distances to the true "
             f"centre. Measured by `benchmarks/perception.py`.", "",
             head[0].format("category"), head[1]]
    lines += [line(c, ious.get(c), g) for c, g in sorted(by_category.items())]
    lines += ["", head[0].format("variant"), head[1]]
    lines += [line(v, variant_iou[v], g) for v, g in sorted(by_variant.items())]
    all_iou = [v for v in ious.values() if v is not None]
    lines += ["", line("all (mean IoU)", float(np.mean(all_iou)), rows).replace("| all",
                                                                                   "| **all**"),
              "", f"Inference per {segmenter.config.size[0]}x{segmenter.config.size[1]} frame "
              f"on {args.threads} CPU thread(s): median {1000 * cpus[len(cpus) // 2]:.1f} ms "
              f"of CPU time, {1000 * walls[len(walls) // 2]:.1f} ms of wall time on this shared "
              f"machine (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)."]
    text = "\n".join(lines)
    print(text)
    if args.card:
        (args.checkpoint / EVALUATION).write_text(text + "\n", encoding="utf-8")
        write_card(args.checkpoint)


if __name__ == "__main__":
    main()
