"""`tether memory`: inspect and manage a long-term experience store.

    tether memory list [--partition P] [--task T]     entries, newest last
    tether memory search QUERY [-k N]                 top-k per partition, with similarity
    tether memory show ID                             one entry in full (its trace as text)
    tether memory stats                               counts, embedder, index, integrity
    tether memory export FILE / import FILE           JSON lines (vectors are re-embedded)
    tether memory rebuild-index                       rebuild the faiss index from SQLite

Every verb takes `--store PATH` (default `runs/memory.db`, the store `tether run` uses). A store
that does not exist is an error (only `import` creates one).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tether.cli.options import out
from tether.errors import TetherError

memory_app = typer.Typer(name="memory", no_args_is_help=True, add_completion=False,
                         help="Inspect and manage the long-term memory store.")
StoreOpt = Annotated[Path, typer.Option("--store", "-s", help="The store file.")]
DEFAULT_STORE = Path("runs/memory.db")


def _open(path: Path, *, create_with: str | None = None):
    """Open the store at `path`; only with `create_with` (an embedder name) may it be new."""
    from tether.memory.store import ExperienceStore

    if not path.is_file():
        if create_with is None:
            raise TetherError(f"no memory store at {path} (tether run creates one; or pass "
                              "--store)")
        return ExperienceStore(path, create_with)
    return ExperienceStore(path)


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


@memory_app.command("list")
def list_(store: StoreOpt = DEFAULT_STORE,
          partition: Annotated[str | None, typer.Option(
              help="successes, failures or rules")] = None,
          task: Annotated[str | None, typer.Option(help="Only this task.")] = None) -> None:
    """List the store's entries, oldest first."""
    table = Table("id", "partition", "task", "n", "conf", "params", "diagnosis")
    with _open(store) as s:
        for e in s.all(partition, task):
            table.add_row(e.id, e.partition, e.task, str(e.count), f"{e.confidence:.2f}",
                          _short(json.dumps(e.params), 40), _short(e.diagnosis))
    out.print(table)


@memory_app.command()
def search(query: Annotated[str, typer.Argument(help="Text to search for.")],
           store: StoreOpt = DEFAULT_STORE,
           k: Annotated[int, typer.Option("-k", min=1, help="Hits per partition.")] = 3,
           threshold: Annotated[float, typer.Option(help="Minimum similarity.")] = -1.0) -> None:
    """Search every partition for QUERY (top k each, by cosine similarity)."""
    with _open(store) as s:
        found = s.search(query, k=k, threshold=threshold)
    table = Table("partition", "similarity", "id", "task", "params", "diagnosis")
    for partition, hits in found.items():
        for h in hits:
            e = h.experience
            table.add_row(partition, f"{h.similarity:.3f}", e.id, e.task,
                          _short(json.dumps(e.params), 40), _short(e.diagnosis))
    out.print(table)


@memory_app.command()
def show(id: Annotated[str, typer.Argument(help="An entry id (a unique prefix will do).")],
         store: StoreOpt = DEFAULT_STORE) -> None:
    """Show one entry in full, its trace rendered as "At step k, ..." lines."""
    from tether.blackboard.events import Event, render_events

    with _open(store) as s:
        e = s.find(id)
    data = e.to_dict()
    trace = data.pop("trace")
    out.print(json.dumps({**data, "confidence": round(e.confidence, 3)}, indent=2),
              markup=False)
    if trace:
        out.print(f"trace ({len(trace)} events):", markup=False)
        out.print(render_events([Event(**t) for t in trace]), markup=False)


@memory_app.command()
def stats(store: StoreOpt = DEFAULT_STORE) -> None:
    """Entries per partition, embedder, generation, index and integrity."""
    with _open(store) as s:
        counts = s.counts()
        out.print(f"store {s.path}: {sum(counts.values())} entries "
                  + ", ".join(f"{n} {p}" for p, n in counts.items()))
        out.print(f"  embedder {s.embedder_name} ({s.dim}-d), generation {s.generation()}, "
                  f"{s.path.stat().st_size / 1e6:.1f} MB, integrity {s.check()}")
        out.print(f"  index: {'saved' if s.index_path.is_file() else 'not saved yet'} "
                  f"({s.index_path})")


@memory_app.command("export")
def export(file: Annotated[Path, typer.Argument(help="JSON-lines file to write.")],
           store: StoreOpt = DEFAULT_STORE) -> None:
    """Write every entry as one JSON line."""
    with _open(store) as s:
        out.print(f"exported {s.export(file)} entries to {file}")


@memory_app.command("import")
def import_(file: Annotated[Path, typer.Argument(help="A file written by `export`.")],
            store: StoreOpt = DEFAULT_STORE,
            embedder: Annotated[str, typer.Option(
                help="Embedder of a store created by this import (minilm or hashing).")] = "minilm",
            ) -> None:
    """Add the entries of an export file whose ids are new (creating the store if needed)."""
    with _open(store, create_with=embedder) as s:
        added, skipped = s.import_(file)
    out.print(f"imported {added} entries into {store} ({skipped} already there)")


@memory_app.command("rebuild-index")
def rebuild_index(store: StoreOpt = DEFAULT_STORE) -> None:
    """Rebuild the faiss index from SQLite and save it next to the store."""
    with _open(store) as s:
        seconds = s.rebuild_index()
        out.print(f"rebuilt the index of {len(s)} entries in {seconds:.2f} s ({s.index_path})")


def register(app: typer.Typer) -> None:
    """Add the `memory` group to the tether app."""
    app.add_typer(memory_app)
