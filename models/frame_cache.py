"""A LeRobotDataset's frames held in memory, served as training batches.

`FrameCache(dataset)` reads every row of a LeRobotDataset stored without videos once, through
the dataset's own Hugging Face transform, keeping RGB images as uint8 (a quarter of the float
tensors they become) and every other column as one stacked tensor (strings as lists). From then
on `cache.batch(indices)` is a collated batch built by tensor indexing: it equals
`default_collate([dataset[i] for i in indices])`, the same keys, dtypes and values, with the
`delta_timestamps` chunks (e.g. `action`) and their `<key>_is_pad` masks cut at the episode's
bounds as lerobot's reader cuts them, and the `task` strings. What it saves is the per-frame
Arrow queries and PNG decoding `LeRobotDataset.__getitem__` repeats at every step: about a fifth
of a `tether train` step on one CPU core (docs/policies.md).

It caches the whole dataset (no episode selection), without image transforms (they draw fresh
randomness per sample) and without video features (lerobot decodes those per query).

    dataset = LeRobotDataset(repo, root=root, delta_timestamps={"action": [0.0, 0.05]})
    cache = FrameCache(dataset)
    batch = cache.batch([3, 17, 42])  # as a DataLoader with batch_sampler would give
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ROWS = 512  # rows decoded at a time while filling the cache


class FrameCache:
    """Every frame of a LeRobotDataset in memory (see the module)."""

    def __init__(self, dataset: Any) -> None:
        import torch
        from lerobot.datasets.feature_utils import get_delta_indices

        meta = dataset.meta
        if meta.video_keys or dataset.episodes is not None or dataset.image_transforms:
            raise ValueError("FrameCache holds whole datasets stored without videos and read "
                             "without image transforms")
        self.rgb = [k for k in meta.camera_keys if k not in meta.depth_keys]
        rows = dataset.hf_dataset
        parts: dict[str, list] = {}
        for start in range(0, len(rows), ROWS):
            for key, values in rows[start:start + ROWS].items():
                parts.setdefault(key, []).append(
                    values if isinstance(values[0], str) else self._stack(key, values))
        self.columns: dict[str, Any] = {
            k: [s for part in v for s in part] if isinstance(v[0], list) else torch.cat(v)
            for k, v in parts.items()}
        self.tasks = [str(name) for name in meta.tasks.index]
        self.chunks: dict[str, tuple[Any, Any]] = {}  # key: (rows to read, padding mask)
        deltas = get_delta_indices(dataset.delta_timestamps, meta.fps) \
            if dataset.delta_timestamps else {}
        episodes = self.columns["episode_index"]
        first = torch.tensor(list(meta.episodes["dataset_from_index"]))[episodes].unsqueeze(1)
        end = torch.tensor(list(meta.episodes["dataset_to_index"]))[episodes].unsqueeze(1)
        for key, delta in deltas.items():
            wanted = self.columns["index"].unsqueeze(1) + torch.tensor(delta).unsqueeze(0)
            self.chunks[key] = (torch.minimum(torch.maximum(wanted, first), end - 1),
                                (wanted < first) | (wanted >= end))

    def __len__(self) -> int:
        return len(self.columns["index"])

    def _stack(self, key: str, values: list) -> Any:
        """One decoded slice of a column as a tensor; RGB images back to their uint8 values."""
        import torch

        stacked = torch.stack(values)
        if key not in self.rgb:
            return stacked
        pixels = stacked.mul(255).round().to(torch.uint8)
        if not torch.equal(pixels.float().div(255), stacked):
            raise ValueError(f"{key}: not 8-bit RGB images")
        return pixels

    def batch(self, indices: Sequence[int]) -> dict[str, Any]:
        """The collated frames at `indices` (see the module)."""
        import torch

        at = torch.as_tensor(list(indices), dtype=torch.long)
        out: dict[str, Any] = {}
        for key, column in self.columns.items():
            if isinstance(column, list):
                out[key] = [column[i] for i in at.tolist()]
            elif key in self.chunks:
                rows, pad = self.chunks[key]
                out[key], out[f"{key}_is_pad"] = column[rows[at]], pad[at]
            elif key in self.rgb:
                out[key] = column[at].float().div(255)  # as torchvision's ToTensor
            else:
                out[key] = column[at]
        out["task"] = [self.tasks[i] for i in self.columns["task_index"][at].tolist()]
        return out
