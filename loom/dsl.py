"""The declaration vocabulary: every Loom op is declared once with these records.

An :class:`OpDef` names the op and lists its operands, results, attributes (with enums and
flag sets), regions, traits, type constraints, assembly format, builder name, a one-line doc and
canonical examples. The builder, printer, parser, verifier, bytecode, interpreter and highlighter
all read these records; none of them spells an op name.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loom.format import elements as _elements
from loom.ir.types import (
    BUFFER_TYPE,
    I1,
    I32,
    INDEX,
    OFFSET,
    FuncRefType,
    FunctionType,
    ScalarType,
    ShapedType,
    Type,
    TypeKind,
)

# --------------------------------------------------------------------------- type constraints


@dataclass(frozen=True)
class TypeConstraint:
    """A named set of types an operand or result may have."""

    description: str
    accepts: Callable[[Type], bool] = field(compare=False)
    fixed: Type | None = None
    """The single allowed type, when there is one (lets builders and parsers infer it)."""

    def __call__(self, t: Type) -> bool:
        return self.accepts(t)

    def __str__(self) -> str:
        return self.description


def _scalar(pred: Callable[[ScalarType], bool]) -> Callable[[Type], bool]:
    return lambda t: isinstance(t, ScalarType) and pred(t)


def Is(t: Type) -> TypeConstraint:  # noqa: N802 - reads like a type in declarations
    """Exactly type ``t``."""
    return TypeConstraint(str(t), lambda x: x == t, fixed=t)


ANY = TypeConstraint("any type", lambda t: True)
INDEX_T = Is(INDEX)
OFFSET_T = Is(OFFSET)
I1_T = Is(I1)
I32_T = Is(I32)
BUFFER_T = Is(BUFFER_TYPE)
ADDRESS = TypeConstraint("index or offset", _scalar(lambda t: t.is_address))
INTEGER = TypeConstraint("an integer type (i1..i64)", _scalar(lambda t: t.is_integer))
FLOAT = TypeConstraint("a float type", _scalar(lambda t: t.is_float))
INTEGER_OR_ADDRESS = TypeConstraint(
    "an integer, index or offset type", _scalar(lambda t: t.is_integer or t.is_address)
)
NUMERIC = TypeConstraint("an integer or float type", _scalar(lambda t: t.is_integer or t.is_float))
SCALAR = TypeConstraint("a scalar type", lambda t: isinstance(t, ScalarType))
BYTE_PATTERN = TypeConstraint(
    "an 8-, 16-, 32- or 64-bit integer or float type",
    _scalar(lambda t: (t.is_integer and t.bit_width >= 8) or t.is_float),
)
VIEW = TypeConstraint(
    "a view type", lambda t: isinstance(t, ShapedType) and t.kind is TypeKind.VIEW
)
FUNC_REF = TypeConstraint(
    "func.ref with a function signature",
    lambda t: isinstance(t, FuncRefType) and isinstance(t.signature, FunctionType),
)
VALUE_TYPE = TypeConstraint(
    "a scalar, buffer, view, vector, tensor or tile type", lambda t: t.kind is not TypeKind.FUNCTION
)
TENSOR = TypeConstraint(
    "a tensor type", lambda t: isinstance(t, ShapedType) and t.kind is TypeKind.TENSOR
)
SCALAR_OR_TENSOR = TypeConstraint(
    "a scalar or tensor type",
    lambda t: (
        isinstance(t, ScalarType) or (isinstance(t, ShapedType) and t.kind is TypeKind.TENSOR)
    ),
)

# --------------------------------------------------------------------------- fields


@dataclass(frozen=True)
class Operand:
    """An operand field. ``variadic`` takes a list; ``optional`` takes zero or one value."""

    name: str
    constraint: TypeConstraint = ANY
    variadic: bool = False
    optional: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Result:
    """A result field; ``variadic`` results are a list whose length the caller chooses."""

    name: str
    constraint: TypeConstraint = ANY
    variadic: bool = False
    doc: str = ""


@dataclass(frozen=True)
class EnumDef:
    """A closed set of keyword cases (stored and passed as strings; encoded by ordinal)."""

    name: str
    cases: tuple[str, ...]


@dataclass(frozen=True)
class FlagSetDef:
    """Optional flags printed ``<a|b>``; stored as the canonical ``"a|b"`` string."""

    name: str
    flags: tuple[str, ...]

    def canonical(self, text: str) -> str:
        """Normalise ``"nuw|nsw"`` to declaration order; raise ValueError on unknown flags."""
        parts = [p.strip() for p in text.split("|") if p.strip()]
        unknown = [p for p in parts if p not in self.flags]
        if unknown or not parts:
            raise ValueError(
                f"unknown {self.name} flag(s) {unknown or [text]}; expected some of "
                + ", ".join(self.flags)
            )
        if len(set(parts)) != len(parts):
            raise ValueError(f"repeated {self.name} flag in {text!r}")
        return "|".join(f for f in self.flags if f in parts)


class AttrKind:
    """Kinds of attribute values."""

    INT = "int"
    FLOAT = "float"
    NUMBER = "number"  # int, bool or float literal (constants)
    LITERAL = "literal"  # a NUMBER, a static encoding spec ('#family<...>') or a [...] list
    STRING = "string"
    NAME = "name"  # a dotted name written bare (``target.feature``); a string in memory
    DICT = "dict"  # ``{key = value, ...}``: a :class:`loom.ir.attributes.DictAttr`
    BOOL = "bool"
    ENUM = "enum"
    SYMBOL = "symbol"
    I64_ARRAY = "i64_array"
    TYPE_ARRAY = "type_array"
    PREDICATES = "predicates"
    UNIT = "unit"
    FLAGS = "flags"
    BLOCK = "block"  # a successor: the label of a block in the op's own region (``^exit``)
    BLOCK_LIST = "block_list"  # successors: labels of blocks in the op's region (``[^a, ^b]``)
    ENCODING = "encoding"  # a static encoding spec, kept as its canonical '#family<...>' text


@dataclass(frozen=True)
class AttrDef:
    """An attribute field."""

    name: str
    kind: str
    enum: EnumDef | None = None
    flags: FlagSetDef | None = None
    optional: bool = False
    default: Any = None
    """Elided from the attribute dictionary when equal to this value."""
    builder_keyword: str | None = None
    """Keyword name in builder methods when it differs from ``name``."""
    doc: str = ""
    missing_code: str = "STRUCTURE/010"
    """The verifier's code when a required attribute is absent (upstream reports some as an
    attribute-kind mismatch, TYPE/005, with actual kind 0 = absent)."""

    @property
    def keyword(self) -> str:
        """The builder keyword for this attribute."""
        return python_name(self.builder_keyword or self.name)


class ArgSource:
    """Where a region's entry-block arguments come from."""

    NONE = "none"
    PAIRS = "pairs"  # builder keyword takes [(name, type)]
    VALUES = "values"  # builder keyword takes [Value] created with builder.value()
    DERIVED = "derived"  # types derived from operand/result fields


@dataclass(frozen=True)
class RegionDef:
    """A region field."""

    name: str
    terminator: str | None = None
    """Op that must end each block (``None``: any terminator or none)."""
    implicit_terminator: bool = False
    """An empty terminator at the end is elided in text and inserted by builder and parser."""
    optional: bool = False
    single_block: bool = True
    variadic: bool = False
    """Zero or more regions of this kind (only the last region field may be variadic; it
    takes every region from its position on)."""
    arg_source: str = ArgSource.NONE
    arg_keyword: str | None = None
    """Builder keyword for PAIRS/VALUES arguments."""
    yields: str | None = None
    """Field (results, operands or a type-array attribute) whose types the terminator's passed-on
    values must match."""
    derived_from: tuple[str, ...] = ()
    """For DERIVED: fields whose types give the entry args, in order (operand or result names;
    a leading ``~`` takes only the first value's type, e.g. the loop induction variable)."""
    side_effect_free: bool = False
    """Ops in the region (at any depth) may not read or write memory, be convergent or call
    a function that is not pure (a kernel's launch-config region)."""
    doc: str = ""


# --------------------------------------------------------------------------- traits


@dataclass(frozen=True)
class Trait:
    """Base of op traits."""


@dataclass(frozen=True)
class Pure(Trait):
    """No side effects; may be removed when unused."""


@dataclass(frozen=True)
class Terminator(Trait):
    """Must be the last op of its block; ``values`` names the operand field it passes on."""

    values: str | None = None


@dataclass(frozen=True)
class HasParent(Trait):
    """The immediately enclosing op must be one of ``parents``."""

    parents: tuple[str, ...]


@dataclass(frozen=True)
class HasAncestor(Trait):
    """Some enclosing op (up to an isolated-from-above boundary, inclusive) must be ``ancestor``."""

    ancestor: str


@dataclass(frozen=True)
class NoAncestor(Trait):
    """No enclosing op may be ``ancestor``."""

    ancestor: str


@dataclass(frozen=True)
class IsolatedFromAbove(Trait):
    """Regions cannot use values defined outside the op."""


@dataclass(frozen=True)
class Symbol(Trait):
    """Defines a module-level symbol named by attribute ``attr``; lives at top level."""

    attr: str
    kind: str = "func"
    """Symbol kind: ``record`` (targets), ``kernel`` or ``func``."""


@dataclass(frozen=True)
class SymbolUse(Trait):
    """Attribute ``attr`` names a symbol whose defining op must be one of ``kinds``."""

    attr: str
    kinds: tuple[str, ...]
    what: str | None = None
    """How diagnostics name the expected kinds (default: the kinds joined by "or")."""


@dataclass(frozen=True)
class SameType(Trait):
    """All listed operand/result fields (every value of variadic ones) have one type."""

    fields: tuple[str, ...]


@dataclass(frozen=True)
class SameTypeAt(Trait):
    """Value lists ``a`` and ``b`` have equal lengths and equal types position by position."""

    a: str
    b: str


@dataclass(frozen=True)
class MemoryEffect(Trait):
    """Reads and/or writes memory (affects config-region purity and the sanitizer)."""

    reads: bool = False
    writes: bool = False


@dataclass(frozen=True)
class Convergent(Trait):
    """Every workitem of the scope must reach it together (barriers).

    ``scope_attr`` names the enum attribute giving the scope that must reach it; the verifier
    then requires control above the op to be uniform at that scope."""

    scope_attr: str | None = None


@dataclass(frozen=True)
class Uniformity(Trait):
    """How results vary across workitems regardless of operands: ``uniform`` (same for the
    whole launch or workgroup), ``subgroup`` (same within a subgroup) or ``lane`` (per workitem).
    Ops without this trait are uniform exactly when their operands are."""

    level: str


@dataclass(frozen=True)
class ControlFlow(Trait):
    """The op's regions run depending on the values of ``operands`` (or, with
    ``terminator_operand``, on that operand of its regions' terminators); ``kind`` names the
    control in diagnostics (``region_selector``, ``loop_upper_bound``, ``loop_condition``)."""

    kind: str
    operands: tuple[str, ...] = ()
    terminator_operand: str | None = None


@dataclass(frozen=True)
class Call(Trait):
    """Calls the function named by symbol attribute ``callee``; its effects are the callee's."""

    callee: str


@dataclass(frozen=True)
class NoReturn(Trait):
    """A terminator that ends the whole invocation (it may end a block of any region in place
    of the region's declared terminator)."""


@dataclass(frozen=True)
class Branch(Trait):
    """A terminator that jumps to blocks of its own region. ``successors`` name its BLOCK
    attributes; ``args`` name, per successor, the operand field whose values become that
    block's arguments (``None``: the successor takes no values)."""

    successors: tuple[str, ...]
    args: tuple[str | None, ...] = ()

    def args_of(self, index: int) -> str | None:
        """The operand field passed to successor field ``index``."""
        return self.args[index] if index < len(self.args) else None

    def edges(self, attributes: Any) -> list[tuple[Any, int]]:
        """``(label, successor field index)`` of every edge, in order: a BLOCK attribute is
        one edge, a BLOCK_LIST attribute one per label (edge numbers index this list)."""
        out: list[tuple[Any, int]] = []
        for k, attr in enumerate(self.successors):
            label = attributes.get(attr)
            if isinstance(label, tuple):
                out.extend((x, k) for x in label)
            else:
                out.append((label, k))
        return out


@dataclass(frozen=True)
class PureWhen(Trait):
    """A callable that is side-effect free when attribute ``attr`` equals ``value``."""

    attr: str
    value: Any


@dataclass(frozen=True)
class RequiresTogether(Trait):
    """If any of ``attrs`` is present, all of them must be."""

    attrs: tuple[str, ...]


@dataclass(frozen=True)
class RequiresAttr(Trait):
    """Attribute ``attr`` may only be present together with ``requires``."""

    attr: str
    requires: str


@dataclass(frozen=True)
class DefersPlacement(Trait):
    """When attribute ``attr`` equals ``value`` (a required-inline function), the
    required-ancestor placement of the ops inside (:class:`HasAncestor`) is checked where the
    op is inlined, not here."""

    attr: str
    value: Any


@dataclass(frozen=True)
class Declaration(Trait):
    """A symbol defined elsewhere: its regions hold only the signature's entry arguments (no
    body to run; the interpreter runs a host-provided function in its place)."""


# --------------------------------------------------------------------------- format elements
# Each element class owns its text syntax in loom/format/elements.py; declarations keep
# importing them from here.

FormatElement = _elements.FormatElement
Ref = _elements.Ref
Refs = _elements.Refs
Subscript = _elements.Subscript
IndexList = _elements.IndexList
AlignedRefs = _elements.AlignedRefs
TypeOf = _elements.TypeOf
TypesOf = _elements.TypesOf
ResultTypeList = _elements.ResultTypeList
LocalType = _elements.LocalType
CoResultType = _elements.CoResultType
Attr = _elements.Attr
SymbolRef = _elements.SymbolRef
TemplateParam = _elements.TemplateParam
Flags = _elements.Flags
TemplateFlags = _elements.TemplateFlags
Kw = _elements.Kw
Glue = _elements.Glue
Clause = _elements.Clause
AttrDict = _elements.AttrDict
Dictionary = _elements.Dictionary
OptionalGroup = _elements.OptionalGroup
BlockArgs = _elements.BlockArgs
RegionArg = _elements.RegionArg
BindingList = _elements.BindingList
PredicateList = _elements.PredicateList
RegionRef = _elements.RegionRef
RegionTable = _elements.RegionTable
AttrTable = _elements.AttrTable
TypedRefs = _elements.TypedRefs
EncodingAttr = _elements.EncodingAttr
ParamDict = _elements.ParamDict
Requirements = _elements.Requirements
named_values = _elements.named_values


# --------------------------------------------------------------------------- examples and ops

MAX_VARIADIC_REGIONS = 1 << 16
"""The most regions an op with a variadic region field may have."""


@dataclass(frozen=True)
class Violation:
    """A problem found by a per-op verifier hook; ``field`` names the offending field."""

    code: str
    message: str
    field: str | None = None
    at: Any = None
    """The op the problem is reported on, when it is not the op being verified (a use that
    observes the op's result, for example)."""


@dataclass(frozen=True)
class Example:
    """Canonical text of the op. ``args`` declares the free values it uses
    (``"%a: i32, %b: i32"``); ``top_level`` examples are whole modules."""

    text: str
    args: str = ""
    top_level: bool = False


@dataclass(frozen=True, eq=False)
class OpDef:
    """The one declaration of an op."""

    name: str
    doc: str
    operands: tuple[Operand, ...] = ()
    results: tuple[Result, ...] = ()
    attrs: tuple[AttrDef, ...] = ()
    regions: tuple[RegionDef, ...] = ()
    traits: tuple[Trait, ...] = ()
    format: tuple[FormatElement, ...] = ()
    legacy_formats: tuple[tuple[FormatElement, ...], ...] = ()
    """Older spellings the parser also accepts; the printer always uses ``format``."""
    builder: str | None = None
    """Builder method name override (else derived by the naming rule)."""
    examples: tuple[Example, ...] = ()
    verifier: Callable[..., Any] | None = None
    """Extra per-op check ``verifier(op, ctx)`` for rules the generic checks cannot express."""
    verifier_cacheable: bool = False
    """The ``verifier`` hook looks only at operand/result types, operand counts and attributes,
    so the verifier may reuse its verdict for ops that agree on those."""

    def __post_init__(self) -> None:
        names = (
            [o.name for o in self.operands]
            + [r.name for r in self.results]
            + [a.name for a in self.attrs]
            + [r.name for r in self.regions]
        )
        if len(set(names)) != len(names):
            raise ValueError(f"'{self.name}' declares a field name twice: {names}")
        if any(r.variadic for r in self.regions[:-1]):
            raise ValueError(f"'{self.name}': only the last region field may be variadic")
        if not self.examples:
            raise ValueError(f"'{self.name}' needs at least one canonical example")
        object.__setattr__(self, "_operand_index", {o.name: o for o in self.operands})
        object.__setattr__(self, "_result_index", {r.name: r for r in self.results})
        object.__setattr__(self, "_attr_index", {a.name: a for a in self.attrs})
        object.__setattr__(self, "_region_index", {r.name: r for r in self.regions})
        object.__setattr__(self, "_plans", {})

    def plan(self, factory: Callable[[OpDef], Any]) -> Any:
        """``factory(self)``, computed once per declaration and layer (``factory`` is the key).

        Builder, printer, parser, verifier and bytecode compile each declaration into their own
        plan on first use and keep it here, next to the declaration it was derived from.
        """
        plans = self._plans  # type: ignore[attr-defined]
        made = plans.get(factory)
        if made is None:
            made = plans[factory] = factory(self)
        return made

    @property
    def index_lists(self) -> dict[str, str]:
        """Operand field -> static attribute of each ``IndexList`` in the format."""
        lists = (e for e in _elements.walk(self.format) if isinstance(e, IndexList))
        return {e.dynamic: e.static for e in lists}

    def drop_plans(self) -> None:
        """Forget every cached plan (after changing what plans are derived from, or in tests)."""
        self._plans.clear()  # type: ignore[attr-defined]

    @property
    def dialect(self) -> str:
        """The dialect prefix (``kernel`` for ``kernel.barrier``)."""
        return self.name.split(".", 1)[0]

    @property
    def local_name(self) -> str:
        """The name after the dialect prefix."""
        return self.name.split(".", 1)[1]

    def operand(self, name: str) -> Operand | None:
        """The operand field called ``name``."""
        return self._operand_index.get(name)  # type: ignore[attr-defined]

    def result(self, name: str) -> Result | None:
        """The result field called ``name``."""
        return self._result_index.get(name)  # type: ignore[attr-defined]

    def attr(self, name: str) -> AttrDef | None:
        """The attribute field called ``name``."""
        return self._attr_index.get(name)  # type: ignore[attr-defined]

    def region(self, name: str) -> RegionDef | None:
        """The region field called ``name``."""
        return self._region_index.get(name)  # type: ignore[attr-defined]

    @property
    def max_regions(self) -> int:
        """The most regions an op of this declaration may have."""
        if self.regions and self.regions[-1].variadic:
            return MAX_VARIADIC_REGIONS
        return len(self.regions)

    def region_def_at(self, index: int) -> RegionDef | None:
        """The region field holding region ``index`` of an op (a variadic last field holds
        every region from its position on)."""
        regions = self.regions
        if index < len(regions):
            return regions[index]
        if regions and regions[-1].variadic:
            return regions[-1]
        return None

    def trait(self, kind: type) -> Any:
        """The first trait of class ``kind``, or None."""
        for t in self.traits:
            if isinstance(t, kind):
                return t
        return None

    def traits_of(self, kind: type) -> list[Any]:
        """Every trait of class ``kind``."""
        return [t for t in self.traits if isinstance(t, kind)]

    @property
    def is_terminator(self) -> bool:
        """True when the op ends its block."""
        return self.trait(Terminator) is not None

    @property
    def symbol_trait(self) -> Symbol | None:
        """The Symbol trait of a symbol-defining op."""
        return self.trait(Symbol)


def python_name(name: str) -> str:
    """A field or method name made safe for Python (``if`` -> ``if_``)."""
    return name + "_" if keyword.iskeyword(name) else name


def op(name: str, doc: str, **kwargs: Any) -> OpDef:
    """Declare an op (tuple-ifies list arguments)."""
    for key in ("operands", "results", "attrs", "regions", "traits", "format", "examples"):
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    if "legacy_formats" in kwargs:
        kwargs["legacy_formats"] = tuple(tuple(f) for f in kwargs["legacy_formats"])
    return OpDef(name=name, doc=doc, **kwargs)


def ops_by_dialect(defs: Iterable[OpDef]) -> dict[str, list[OpDef]]:
    """Group declarations by dialect, keeping order."""
    out: dict[str, list[OpDef]] = {}
    for d in defs:
        out.setdefault(d.dialect, []).append(d)
    return out
