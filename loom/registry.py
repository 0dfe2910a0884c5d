"""Op registries: the declaration set that printing, parsing, verifying and serializing accept.

``ops=`` arguments everywhere accept ``None`` (every declared op), an :class:`OpRegistry`, or any
iterable of :class:`~loom.dsl.OpDef`. An op whose name is not in the set is reported, never
printed or written anyway.
"""

from __future__ import annotations

import difflib
import keyword
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

from loom.dsl import OpDef, python_name


class UnknownOpError(LookupError):
    """An op name outside the declaration set."""


class OpRegistry:
    """An immutable, ordered set of op declarations with lookups by name and builder name."""

    __slots__ = ("_by_name", "_builder_names", "_implicit_terminators", "_plans", "__weakref__")

    def __init__(self, defs: Iterable[OpDef]) -> None:
        by_name: dict[str, OpDef] = {}
        for d in defs:
            if not isinstance(d, OpDef):
                raise TypeError(f"expected op declarations (OpDef), got {d!r}")
            if d.name in by_name and by_name[d.name] is not d:
                raise ValueError(f"op '{d.name}' is declared twice")
            by_name[d.name] = d
        self._by_name = by_name
        self._builder_names = _builder_names(by_name.values())
        self._implicit_terminators = frozenset(
            r.terminator
            for d in by_name.values()
            for r in d.regions
            if r.implicit_terminator and r.terminator
        )
        self._plans: dict[Callable[[OpRegistry], Any], Any] = {}

    def plan(self, factory: Callable[[OpRegistry], Any]) -> Any:
        """``factory(self)``, computed once per registry (``factory`` is the key).

        Tables a layer derives from the whole declaration set (highlighting words, parse
        tables...) live here, next to the set they describe, instead of in module-level caches.
        """
        made = self._plans.get(factory)
        if made is None:
            made = self._plans[factory] = factory(self)
        return made

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[OpDef]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> OpDef | None:
        """The declaration of ``name``, or None."""
        return self._by_name.get(name)

    def lookup(self, name: str) -> OpDef:
        """The declaration of ``name``; raises :class:`UnknownOpError` with suggestions."""
        d = self._by_name.get(name)
        if d is None:
            raise UnknownOpError(self.unknown_message(name))
        return d

    def unknown_message(self, name: str) -> str:
        """``unknown op 'x' (did you mean 'y'?)``."""
        close = self.suggest(name)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        return f"unknown op '{name}'{hint}; it is not in this declaration set"

    def suggest(self, name: str) -> list[str]:
        """Registered names close to ``name``."""
        return difflib.get_close_matches(name, self._by_name, n=2, cutoff=0.7)

    def builder_name(self, d: OpDef) -> str:
        """The generated builder method name of ``d`` within this set."""
        return self._builder_names[d.name]

    @property
    def implicit_terminators(self) -> frozenset[str]:
        """Terminators that some region of this set adds and elides when they pass nothing."""
        return self._implicit_terminators

    @property
    def names(self) -> tuple[str, ...]:
        """Every op name, in order."""
        return tuple(self._by_name)

    def dialects(self) -> dict[str, list[OpDef]]:
        """Declarations grouped by dialect, in order."""
        out: dict[str, list[OpDef]] = {}
        for d in self._by_name.values():
            out.setdefault(d.dialect, []).append(d)
        return out


BUILDER_MEMBERS = frozenset(
    (
        "insertion_block",
        "ir",
        "location",
        "module",
        "region",
        "value",
        "build",
        "registry",
        "last_op",
    )
)
"""LoomBuilder's own attributes: a dialect of one of these names gets a trailing ``_``."""


def namespace_attr(dialect: str) -> str:
    """The LoomBuilder attribute holding ``dialect``'s methods (``kernel``, ``module_``,
    ``global_``...)."""
    return dialect + "_" if dialect in BUILDER_MEMBERS or keyword.iskeyword(dialect) else dialect


def _builder_names(defs: Iterable[OpDef]) -> dict[str, str]:
    """Apply the naming rule: override, else the last name segment when unique in the dialect,
    else the whole dialect-local name with dots as underscores; Python keywords get ``_``."""
    defs = list(defs)
    last_counts: dict[tuple[str, str], int] = {}
    for d in defs:
        key = (d.dialect, d.name.rsplit(".", 1)[1])
        last_counts[key] = last_counts.get(key, 0) + 1
    names: dict[str, str] = {}
    taken: dict[tuple[str, str], str] = {}
    for d in defs:
        last = d.name.rsplit(".", 1)[1]
        if d.builder:
            base = d.builder
        elif last_counts[(d.dialect, last)] == 1:
            base = last
        else:
            base = d.local_name.replace(".", "_")
        method = python_name(base)
        other = taken.get((d.dialect, method))
        if other is not None:
            raise ValueError(
                f"ops '{other}' and '{d.name}' both map to builder method '{d.dialect}.{method}'"
            )
        taken[(d.dialect, method)] = d.name
        names[d.name] = method
    return names


def default_ops() -> tuple[OpDef, ...]:
    """Every declared op."""
    from loom.dialects import ALL_OPS

    return ALL_OPS


@lru_cache(maxsize=1)
def default_registry() -> OpRegistry:
    """The registry of every declared op (one per process: the declarations never change)."""
    return OpRegistry(default_ops())


@lru_cache(maxsize=64)
def _registry_of(defs: tuple[OpDef, ...]) -> OpRegistry:
    # Keyed by the declarations themselves (each hashes by identity and is kept alive by the
    # key), so equal sets share one registry and the plans derived from it.
    return OpRegistry(defs)


def as_registry(ops: OpRegistry | Iterable[OpDef] | None) -> OpRegistry:
    """Normalise an ``ops=`` argument to a registry (the same one for the same declarations)."""
    if ops is None:
        return default_registry()
    if isinstance(ops, OpRegistry):
        return ops
    defs = ops if isinstance(ops, tuple) else tuple(ops)
    if defs is default_ops():
        return default_registry()
    return _registry_of(defs)
