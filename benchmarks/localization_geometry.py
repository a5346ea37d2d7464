"""Camera localization's geometry against the simulator's boxes: the old rule beside the new.

Over a perception dataset's scenes (`tether collect-perception`: each (task, init state,
variant) rendered from the agent view and the wrist), every object's box is estimated from its
back-projected mask and compared with its true geometry box (`scene.extent_of`, read by
re-opening each scene exactly as the collection did: the dataset stores only true centres; the
boxes are cached in `--truth` as JSON). Errors: the 3-D centre distance and, per axis, the size
error (estimated side minus true side; negative: too small), in cm, median and 90th percentile
over all instances, per size class of the true box (thin: narrower than 5 cm; flat: lower than
4 cm; other). Masks are the simulator's instance masks (the geometry's error alone) or the
shipped segmenter's category masks (`localize_instances`, matched to the nearest true instance).

    python benchmarks/localization_geometry.py /work/perception-data/seg_all \
        --truth /tmp/seg_all_boxes.json [--segmenter models/checkpoints/segmenter]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np


def true_boxes(root: Path, cache: Path) -> dict[str, dict]:
    """Each instance's true box (`lower`, `upper`) and whether it is `movable` (not a fixture) by
    `task|init_state|variant|entity`, re-opened scene by scene as `collect_perception` did
    (cached in `cache`)."""
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    from tether.datasets.perception import ALWAYS
    from tether.models.perception.dataset import read_meta
    from tether.scenes.perturbations import build
    from tether.scenes.perturbations.base import SCENE
    from tether.scenes.scene_cache import SceneCache

    meta = read_meta(root)
    collect = meta["collect"]
    variants = {v or "none": [build(ALWAYS), *([build(v)] if v else [])]
                for v in collect["variants"]}
    groups: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    centres = {}
    for r in meta["records"]:
        for inst in r["instances"]:
            groups[(r["task"], r["init_state"], r["variant"])].add(inst["entity"])
            centres[(r["task"], r["init_state"], r["variant"], inst["entity"])] = inst["centre"]
    out: dict[str, dict] = {}

    def same_as_unperturbed(task: str, init_state: int, variant: str) -> bool:
        """A variant that moved nothing (appearance only): every instance's recorded centre is
        its unperturbed box's."""
        for entity in groups[(task, init_state, variant)]:
            box = out.get(f"{task}|{init_state}|none|{entity}")
            if box is None or np.linalg.norm((np.array(box["lower"]) + box["upper"]) / 2
                                             - centres[(task, init_state, variant, entity)]
                                             ) > 0.002:
                return False
        return True

    scenes = SceneCache(size=1)
    try:  # the unperturbed scenes first: the variants that move nothing reuse their boxes
        for task, variant, init_state in sorted(((t, v, i) for t, i, v in groups),
                                                key=lambda k: (k[1] != "none", k)):
            if variant != "none" and same_as_unperturbed(task, init_state, variant):
                for entity in groups[(task, init_state, variant)]:
                    out[f"{task}|{init_state}|{variant}|{entity}"] = out[
                        f"{task}|{init_state}|none|{entity}"]
                continue
            perturbations = variants[variant]
            scene_stage = any(p.stage == SCENE for p in perturbations)
            seed = collect["seed"] if scene_stage else collect["seed"] + init_state
            scene = scenes.open(task, perturbations, init_state=init_state, seed=seed)
            for entity in sorted(groups[(task, init_state, variant)]):
                lower, upper = scene.extent_of(entity)
                out[f"{task}|{init_state}|{variant}|{entity}"] = {
                    "lower": [round(float(v), 5) for v in lower],
                    "upper": [round(float(v), 5) for v in upper],
                    "movable": entity in scene.objects()}
            print(f"\r{len(out)} boxes", end="", flush=True)
    finally:
        scenes.close()
    for key in list(out):  # the boxes must be the ones the dataset recorded
        task, init_state, variant, entity = key.split("|")
        centre = np.array(centres[(task, int(init_state), variant, entity)])
        if np.linalg.norm((np.array(out[key]["lower"]) + out[key]["upper"]) / 2 - centre) > 0.002:
            raise SystemExit(f"{key}: the re-opened scene's box is not where the dataset "
                             f"saw it")
    print()
    cache.write_text(json.dumps(out) + "\n", encoding="utf-8")
    return out


RULES = {  # name: the LocalizeConfig of the rule (each adds to the one above it)
    "old (CameraWorld)": dict(erode=1, low=0.5, high=99.5),
    "no erosion": dict(erode=0, low=0.5, high=99.5),
    "+ gap 2 cm": dict(erode=0, low=0.5, high=99.5, gap=0.02),
    "+ far side": dict(erode=0, low=0.5, high=99.5, gap=0.02, far_side=True),
    "+ pad": dict(erode=0, low=0.5, high=99.5, gap=0.02, far_side=True, pad=True),
    "+ support 3 cm": dict(erode=0, low=0.5, high=99.5, gap=0.02, far_side=True, pad=True,
                           support=0.03),
    "+ support 6 cm": dict(erode=0, low=0.5, high=99.5, gap=0.02, far_side=True, pad=True,
                           support=0.06),
}


def shape_of(lower: np.ndarray, upper: np.ndarray) -> str:
    """The size class of a true box: flat (under 4 cm high), thin (a side under 5 cm), other."""
    side = upper - lower
    return "flat" if side[2] < 0.04 else "thin" if side[:2].min() < 0.05 else "other"


def scenes_of(frames, cameras):
    """Per (task, init state, variant): the frames' indices of `cameras`."""
    groups = defaultdict(list)
    for i, r in enumerate(frames.records):
        if r["camera"] in cameras:
            groups[(r["task"], r["init_state"], r["variant"])].append(i)
    return groups


def errors(frames, boxes, groups, config, labels=None, categories=()):
    """Per movable true instance: (shape, centre error, size error (3,), bottom error) in m,
    from the simulator's instance masks, or the segmenter's category `labels` when given (each
    true instance matched to the nearest unmatched estimate of its category; unmatched: left
    out)."""
    from tether.models.perception.dataset import geometry_of
    from tether.scenes.localization import Sighting, localize, localize_instances

    rows = []
    for (task, init_state, variant), idx in groups.items():
        truth = {}
        for i in idx:
            for inst in frames.records[i]["instances"]:
                box = boxes.get(f"{task}|{init_state}|{variant}|{inst['entity']}")
                if box is not None and box["movable"]:
                    truth[inst["entity"]] = (inst, np.array(box["lower"]), np.array(box["upper"]))
        if labels is None:
            sightings = [Sighting(geometry_of(frames.records[i]), frames.depth[i], {
                inst["entity"]: frames.instance[i] == inst["id"]
                for inst in frames.records[i]["instances"]}) for i in idx]
            found = {e: f for e, f in localize(sightings, list(truth), config).items() if f.found}
        else:
            sightings = [Sighting(geometry_of(frames.records[i]), frames.depth[i], {
                c: labels[i] == k for k, c in enumerate(categories, start=1)}) for i in idx]
            found = {}
            for category in {t[0]["category"] for t in truth.values()} & set(categories):
                entities = [e for e, t in truth.items() if t[0]["category"] == category]
                located = localize_instances(sightings, category, config)
                pairs = sorted((float(np.linalg.norm(f.position - (truth[e][1] + truth[e][2]) / 2)),
                                e, j) for e in entities for j, f in enumerate(located))
                used = set()
                for _, e, j in pairs:
                    if e not in found and j not in used:
                        found[e], _ = located[j], used.add(j)
        for e, f in found.items():
            _, lower, upper = truth[e]
            rows.append((shape_of(lower, upper),
                         float(np.linalg.norm(f.position - (lower + upper) / 2)),
                         (f.upper - f.lower) - (upper - lower), float(f.lower[2] - lower[2])))
    return rows


def table(title, results):
    """A markdown table: per rule and shape class, median and 90th percentile of the centre
    error, each axis's size error and the bottom's error (cm)."""
    lines = [f"{title}", "",
             "| rule | shape | n | centre p50 / p90 | size x p50 / p90 | size y p50 / p90 | "
             "size z p50 / p90 | bottom z p50 / p90 |", "| --- | --- | --- | --- | --- | --- | --- "
             "| --- |"]

    def q(values):  # signed median, 90th percentile of the magnitude
        v = 100 * np.asarray(values)
        return f"{np.median(v):+.2f} / {np.percentile(np.abs(v), 90):.2f}"

    for rule, rows in results.items():
        for shape in ("all", "flat", "thin", "other"):
            part = [r for r in rows if shape in ("all", r[0])]
            if not part:
                continue
            centre = 100 * np.array([r[1] for r in part])
            size = np.array([r[2] for r in part])
            lines.append(f"| {rule} | {shape} | {len(part)} | {np.median(centre):.2f} / "
                         f"{np.percentile(centre, 90):.2f} | {q(size[:, 0])} | {q(size[:, 1])} | "
                         f"{q(size[:, 2])} | {q([r[3] for r in part])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--truth", type=Path, required=True, help="cache of the true boxes")
    parser.add_argument("--segmenter", type=Path, help="also with this checkpoint's masks")
    parser.add_argument("--cameras", nargs="+", default=["agentview"])
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    args = parser.parse_args()

    from tether.models.perception.dataset import load
    from tether.scenes.localization import LocalizeConfig

    boxes = true_boxes(args.dataset, args.truth)
    frames = load(args.dataset)
    groups = scenes_of(frames, args.cameras)
    where = (f"`{args.dataset}`: {len(groups)} scenes (task x init state x variant), "
             f"{' + '.join(args.cameras)} at {frames.rgb.shape[1]}x{frames.rgb.shape[2]}; errors "
             f"in cm against the simulator's geometry boxes; size and bottom errors signed "
             f"(estimate - truth) median / 90th percentile of the magnitude")
    configs = {r: LocalizeConfig(**RULES[r]) for r in args.rules}
    print(table(f"Simulator's instance masks, {where}.",
                {r: errors(frames, boxes, groups, c) for r, c in configs.items()}))
    if args.segmenter is not None:
        import torch

        from tether.models.perception.category_segmenter import CategorySegmenter

        torch.set_num_threads(1)
        segmenter = CategorySegmenter.load(args.segmenter)
        idx = sorted(i for g in groups.values() for i in g)
        labels = np.zeros(frames.category.shape, np.uint8)
        for k in range(0, len(idx), 32):
            labels[idx[k:k + 32]] = segmenter.predict(frames.rgb[idx[k:k + 32]])
        categories = list(segmenter.config.categories)
        print()
        print(table(f"Segmenter `{args.segmenter}` masks (instances matched to the nearest "
                    f"estimate of their category), {where}.",
                    {r: errors(frames, boxes, groups, c, labels, categories)
                     for r, c in configs.items()}))


if __name__ == "__main__":
    main()
