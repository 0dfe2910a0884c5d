"""Memory vocabulary shared by kernel, buffer and view: cache policy and atomic enums, and the
facts per-op verifiers derive from the module (memory space of a view, footprints, uses).

Enum case order is the ordinal upstream assigns (bytecode encodes enums by ordinal), so the
numbers in diagnostics (``"cache_temporal" "3"``) are the case's position here.
"""

from __future__ import annotations

from typing import Any

from loom.dsl import AttrDef, AttrKind, EnumDef, Violation
from loom.ir import BUFFER_TYPE, Operation, ScalarType, ShapedType, StaticDim, Type, TypeKind, Value

CACHE_SCOPE = EnumDef("cache_scope", ("cu", "se", "device", "system"))
CACHE_TEMPORAL = EnumDef(
    "cache_temporal",
    (
        "regular",
        "non_temporal",
        "high_temporal",
        "last_use",
        "writeback",
        "non_temporal_regular",
        "regular_non_temporal",
        "non_temporal_high_temporal",
        "non_temporal_writeback",
        "bypass",
    ),
)
ATOMIC_KIND = EnumDef(
    "kind",
    (
        "xchgi",
        "xchgf",
        "addi",
        "addf",
        "subi",
        "andi",
        "ori",
        "xori",
        "minsi",
        "maxsi",
        "minui",
        "maxui",
        "minimumf",
        "maximumf",
        "minnumf",
        "maxnumf",
    ),
)
FLOAT_ATOMIC_KINDS = frozenset(("xchgf", "addf", "minimumf", "maximumf", "minnumf", "maxnumf"))
COMBINING_KIND = EnumDef(
    "kind",
    (
        "addi",
        "addf",
        "muli",
        "mulf",
        "minsi",
        "maxsi",
        "minui",
        "maxui",
        "andi",
        "ori",
        "xori",
        "minimumf",
        "maximumf",
        "minnumf",
        "maxnumf",
    ),
)
ORDERINGS = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
LOAD_ORDERING = EnumDef("ordering", ("relaxed", "acquire", "seq_cst"))
STORE_ORDERING = EnumDef("ordering", ("relaxed", "release", "seq_cst"))
FENCE_ORDERING = EnumDef("ordering", ("acquire", "release", "acq_rel", "seq_cst"))


def cache_attrs() -> list[AttrDef]:
    """The optional paired cache-policy attributes (printed in the attribute dictionary)."""
    return [
        AttrDef("cache_scope", AttrKind.ENUM, enum=CACHE_SCOPE, optional=True),
        AttrDef("cache_temporal", AttrKind.ENUM, enum=CACHE_TEMPORAL, optional=True),
    ]


def ordinal(enum: EnumDef, value: Any) -> int:
    """Upstream's number of an enum case (the position in the declaration)."""
    try:
        return enum.cases.index(value)
    except ValueError:
        return -1


def cache_policy(op: Operation, use: str, required: bool = False) -> list[Violation]:
    """Cache-policy rules; ``use`` is ``load``, ``store``, ``atomic`` or ``copy``."""
    scope = op.attributes.get("cache_scope")
    temporal = op.attributes.get("cache_temporal")
    if scope is None and temporal is None and not required:
        return []
    if temporal is None:
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'cache_temporal' (0) must be present when cache_scope is present",
                "cache_temporal",
            )
        ]
    if scope is None:
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'cache_scope' (0) must be present when cache_temporal is present",
                "cache_scope",
            )
        ]
    t = ordinal(CACHE_TEMPORAL, temporal)
    sc = ordinal(CACHE_SCOPE, scope)
    if use == "atomic" and temporal not in ("regular", "non_temporal"):
        return [_policy("cache_temporal", temporal, t, "regular or non_temporal temporal hint")]
    if use == "store" and temporal == "last_use":
        return [_policy("cache_temporal", temporal, t, "store-compatible temporal hint")]
    if use == "load" and temporal in ("writeback", "non_temporal_writeback"):
        return [_policy("cache_temporal", temporal, t, "load-compatible temporal hint")]
    if temporal == "bypass" and scope != "system":
        return [_policy("cache_scope", scope, sc, "system scope for bypass temporal hint")]
    if temporal == "last_use" and scope == "system":
        return [_policy("cache_scope", scope, sc, "non-system scope for last_use temporal hint")]
    return []


def _policy(attr: str, value: str, number: int, want: str) -> Violation:
    return Violation(
        "STRUCTURE/014", f"attribute '{attr}' value {value} ({number}) requires a {want}", attr
    )


def is_byte_scalar(t: Type) -> bool:
    """8/16/32/64-bit integer or float scalars (what atomics and fills move)."""
    return isinstance(t, ScalarType) and ((t.is_integer and t.bit_width >= 8) or t.is_float)


BYTE_SCALAR_TEXT = "byte-addressable fixed-width integer or floating-point scalar"


def static_footprint(t: Type) -> int | None:
    """Bytes a dense view of static shape covers (None when dynamic or not byte-sized)."""
    if not isinstance(t, ShapedType) or t.kind is not TypeKind.VIEW:
        return None
    elem = t.element_type
    if elem.bit_width % 8 or elem.is_address:
        return None
    n = elem.byte_size
    for d in t.dims:
        if not isinstance(d, StaticDim):
            return None
        n *= d.size
    return n


class ModuleFacts:
    """Producers and users of every value of a module, computed once per verification."""

    def __init__(self, ctx: Any) -> None:
        self.producer: dict[int, Operation] = {}
        self.arg_owner: dict[int, Operation] = {}
        self.users: dict[int, list[Operation]] = {}
        for top in ctx.module.ops:
            self._walk(top)

    def _walk(self, op: Operation) -> None:
        stack = [op]
        while stack:
            o = stack.pop()
            for r in o.results:
                if isinstance(r, Value):
                    self.producer[r.id] = o
            for v in o.operands:
                if isinstance(v, Value):
                    self.users.setdefault(v.id, []).append(o)
            for region in o.regions:
                for block in region.blocks:
                    for a in block.args:
                        self.arg_owner[a.id] = o
                    stack.extend(block.ops)


def facts(ctx: Any) -> ModuleFacts:
    """The :class:`ModuleFacts` of the module being verified (kept on the verify context)."""
    f = getattr(ctx, "_memory_facts", None)
    if f is None or f[0] is not ctx.module:
        f = (ctx.module, ModuleFacts(ctx))
        ctx._memory_facts = f
    return f[1]


_KERNEL_DEF = "kernel.def"
_SPACE_OPS = {"buffer.alloca", "buffer.assume.memory_space"}
_THROUGH = {
    "buffer.view": 0,
    "view.subview": 0,
    "view.refine": 0,
    "buffer.assume.alignment": None,
    "buffer.assume.noalias": None,
    "buffer.assume.same_root": 0,
}
"""Ops whose result names the same storage as an operand (None: the operand at the result's
position)."""


def memory_space(ctx: Any, v: Value) -> str | None:
    """The memory-space fact of a buffer or view value (None when nothing establishes one)."""
    f = facts(ctx)
    for _ in range(64):
        owner = f.arg_owner.get(v.id)
        if owner is not None:
            is_root = v.type is BUFFER_TYPE or getattr(v.type, "kind", None) is TypeKind.VIEW
            return "global" if owner.name == _KERNEL_DEF and is_root else None
        op = f.producer.get(v.id)
        if op is None:
            return None
        if op.name in _SPACE_OPS:
            return op.attributes.get("memory_space")
        if op.name not in _THROUGH:
            return None
        k = _THROUGH[op.name]
        if k is None:
            k = list(op.results).index(v)
        if k >= len(op.operands):
            return None
        v = op.operands[k]
    return None
