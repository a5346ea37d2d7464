"""Registries: what YAML files and the command line select by name.

Node types, predicates, policies, planners, verifiers, diagnosers and perturbations are each
kept in one `Registry` (lerobot's `register_subclass` style): registered once by name, looked
up with a located "did you mean" error, listed for help texts and generated docs.

    PLANNERS: Registry[PlannerFactory] = Registry("planner")

    @PLANNERS.register("memory")
    def memory_planner(options): ...

    PLANNERS.get("memroy", where="plan.yaml:3: ")
    # TetherError: plan.yaml:3: unknown planner 'memroy' (did you mean 'memory'?); known: memory
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar, overload

from tether.errors import TetherError, did_you_mean

T = TypeVar("T")


class Registry(Mapping[str, T]):
    """Named entries of one kind; a read-only mapping once registered."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, entry: T) -> T: ...

    def register(self, name: str, entry: Any = None) -> Any:
        """Register `entry` as `name`, or decorate it: `@registry.register(name)`."""
        def add(value: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} '{name}' registered twice")
            self._entries[name] = value
            return value

        return add if entry is None else add(entry)

    def unregister(self, name: str) -> None:
        """Remove `name` if it is registered (a temporary entry, such as a test double)."""
        self._entries.pop(name, None)

    def get(self, name: str, default: Any = None, *, where: str = "") -> T:  # type: ignore[override]
        """The entry named `name`; a `TetherError` naming the known ones when there is none
        (or `default`, when one is given)."""
        if name in self._entries:
            return self._entries[name]
        if default is not None:
            return default
        raise TetherError(f"{where}unknown {self.kind} '{name}'"
                          f"{did_you_mean(name, self._entries)}; known: {', '.join(self)}")

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self)})"
