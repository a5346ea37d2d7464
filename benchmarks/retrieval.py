"""Long-term store performance: add throughput, query latency (p50/p95) and index rebuild time
at 1k, 10k, 100k and 1M entries (targets: p95 <= 2 ms at 100k, <= 10 ms at 1M).

Entries are real `Experience` records (JSON in SQLite, WAL) with **random unit vectors** of
MiniLM's dimension (384): embedding a million texts with MiniLM on this machine's CPU would take
hours (the measured MiniLM rate is printed), and the store's cost does not depend on where the
vectors came from. A query is `ExperienceStore.search` (faiss over every partition, top-5 each,
plus fetching the hits' records from SQLite); "index only" is the faiss search alone. Queries are
stored vectors plus noise; recall@1 is how often the index finds that stored vector, recall@5
how much of the exact top 5 it finds (random vectors are the worst case for an approximate
index: apart from the one planted neighbour, the nearest ones are hardly nearer than the rest).
The index kind and its parameters (`tether.memory.index`) are printed per size.

    python benchmarks/retrieval.py [--sizes 1000 10000 100000 1000000] [--queries 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np
from rich.console import Console
from rich.table import Table

from tether.memory import index as vector_index
from tether.memory.experience import PARTITIONS, Experience
from tether.memory.store import ExperienceStore
from tether.models.embedders import MiniLMEmbedder

DIM = 384


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def record(i: int) -> Experience:
    return Experience(partition=PARTITIONS[i % 2], task=f"bench/{i % 500}",
                      instruction=f"synthetic task {i}", objects=["bowl", "plate"],
                      outcome="failure" if i % 2 else "success", diagnosis="synthetic",
                      params={"approach": [0.0, 0.0, 0.1]})


def minilm_rate() -> float:
    e = MiniLMEmbedder()
    e.embed(["warm up"])
    texts = [f"put the bowl {i} on the plate Objects: bowl, plate" for i in range(256)]
    start = time.perf_counter()
    e.embed(texts)
    return len(texts) / (time.perf_counter() - start)


def bench(n: int, queries: int, folder: Path, rng: np.random.Generator) -> dict:
    store = ExperienceStore(folder / f"store-{n}.db", MiniLMEmbedder())  # not loaded: vectors given
    vectors = unit(rng, n)
    batch = 10_000
    start = time.perf_counter()
    for lo in range(0, n, batch):
        hi = min(n, lo + batch)
        store.add_many([record(i) for i in range(lo, hi)], vectors[lo:hi])
    bulk = n / (time.perf_counter() - start)
    start = time.perf_counter()
    singles = 200
    extra = unit(rng, singles)
    for i in range(singles):  # one transaction per experience, as consolidation writes
        store.add(record(n + i), extra[i])
    single = singles / (time.perf_counter() - start)
    seqs = np.arange(1, n + singles + 1)  # row numbers, in insertion order
    rebuild = store.rebuild_index(save=False)
    picks = rng.choice(n, queries)
    qs = vectors[picks] + 0.05 * unit(rng, queries)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    full, index_only = [], []
    for q in qs:
        t = time.perf_counter()
        store.search(q, k=5)
        full.append(time.perf_counter() - t)
    idx = store.indexes[PARTITIONS[0]]
    for q in qs:
        t = time.perf_counter()
        idx.search(q, 5)
        index_only.append(time.perf_counter() - t)
    # recall of partition 0's index against exact search over the same vectors
    everything = np.concatenate([vectors, extra])
    mine = np.arange(n + singles) % 2 == 0  # record(i) is in PARTITIONS[i % 2]
    exact = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    exact.add_with_ids(everything[mine], seqs[mine])
    truths = exact.search(qs, 5)[1]  # every query, batched
    recall1, recall5 = [], []
    for q, pick, truth in zip(qs, picks, truths, strict=True):
        got = [seq for seq, _ in idx.search(q, 5)]
        if pick % 2 == 0:  # the planted vector is in this partition
            recall1.append(float(got[:1] == list(truth[:1])))
        recall5.append(len(set(truth) & set(got)) / 5)
    kind = idx.kind()
    store.close()
    ms = lambda xs, p: 1000 * float(np.percentile(xs, p))  # noqa: E731
    return {"n": n, "bulk": bulk, "single": single, "p50": ms(full, 50), "p95": ms(full, 95),
            "i50": ms(index_only, 50), "i95": ms(index_only, 95), "rebuild": rebuild,
            "recall1": float(np.mean(recall1)), "recall5": float(np.mean(recall5)),
            "index": kind}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=1000)
    args = ap.parse_args()
    console = Console(width=160)
    rate = minilm_rate()
    console.print(f"MiniLM embeds {rate:.0f} texts/s here: 1M texts would take "
                  f"{1e6 / rate / 3600:.1f} h, so entries use random 384-d unit vectors")
    rng = np.random.default_rng(0)
    table = Table("entries", "index (per partition)", "bulk add/s", "1-txn add/s", "p50 ms",
                  "p95 ms", "index p50/p95 ms", "recall@1/@5", "rebuild s")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            r = bench(n, args.queries, Path(tmp), rng)
            table.add_row(f"{n:,}", r["index"], f"{r['bulk']:,.0f}", f"{r['single']:,.0f}",
                          f"{r['p50']:.3f}", f"{r['p95']:.3f}", f"{r['i50']:.3f} / {r['i95']:.3f}",
                          f"{r['recall1']:.2f} / {r['recall5']:.2f}", f"{r['rebuild']:.2f}")
    console.print(table)
    console.print("Queries search both populated partitions (successes, failures; half the "
                  "entries each) and fetch the hits' records; single adds are one WAL "
                  "transaction each; faiss runs on one thread (tether.memory.index.one_thread). "
                  f"Index: {vector_index.describe()}.")


if __name__ == "__main__":
    main()
