"""Loom types: scalars, buffers, shaped types (views, vectors, tensors, tiles), functions.

Types are immutable and hashable. Scalar types are interned singletons. Dynamic dimensions of
shaped types carry the SSA value that binds them (``view<[%n]xf32>``), so a type can be printed
in the context of the value that owns it.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from loom.ir.values import Value


class TypeKind(Enum):
    """Families of Loom types."""

    SCALAR = "scalar"
    BUFFER = "buffer"
    VIEW = "view"
    VECTOR = "vector"
    TENSOR = "tensor"
    TILE = "tile"
    FUNCTION = "function"
    OPAQUE = "opaque"
    FUNC_REF = "func_ref"


class ScalarTypeKind(Enum):
    """Scalar element kinds; the value is the canonical spelling."""

    INDEX = "index"
    OFFSET = "offset"
    I1 = "i1"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"


_INT_WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64, "offset": 64}
_FLOAT_WIDTHS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_BYTE_SIZES = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "index": 8,
    "offset": 8,
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
}


class Type:
    """Base class of all Loom types."""

    __slots__ = ()
    kind: TypeKind

    def __repr__(self) -> str:
        from loom.ir.type_text import type_to_text

        return f"<loom type {type_to_text(self)}>"

    def __str__(self) -> str:
        from loom.ir.type_text import type_to_text

        return type_to_text(self)


class ScalarType(Type):
    """An integer, float or address scalar (``i32``, ``f16``, ``index``...)."""

    __slots__ = ("scalar_kind", "spelling", "bit_width", "byte_size")
    kind = TypeKind.SCALAR
    _interned: dict[ScalarTypeKind, ScalarType] = {}

    def __new__(cls, scalar_kind: ScalarTypeKind) -> ScalarType:
        existing = cls._interned.get(scalar_kind)
        if existing is not None:
            return existing
        obj = super().__new__(cls)
        obj.scalar_kind = scalar_kind
        obj.spelling = scalar_kind.value
        obj.bit_width = _INT_WIDTHS.get(obj.spelling) or _FLOAT_WIDTHS[obj.spelling]
        obj.byte_size = _BYTE_SIZES[obj.spelling]
        cls._interned[scalar_kind] = obj
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (ScalarType, (self.scalar_kind,))

    @property
    def is_address(self) -> bool:
        """True for ``index`` and ``offset``."""
        return self.scalar_kind in (ScalarTypeKind.INDEX, ScalarTypeKind.OFFSET)

    @property
    def is_integer(self) -> bool:
        """True for the fixed-width integers ``i1`` .. ``i64``."""
        return self.spelling in _INT_WIDTHS and not self.is_address

    @property
    def is_float(self) -> bool:
        """True for ``f16``, ``bf16``, ``f32``, ``f64``."""
        return self.spelling in _FLOAT_WIDTHS


class BufferType(Type):
    """The opaque, untyped storage root ``buffer`` (a singleton)."""

    __slots__ = ()
    kind = TypeKind.BUFFER
    _instance: BufferType | None = None

    def __new__(cls) -> BufferType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self) -> tuple[Any, ...]:
        return (BufferType, ())


_OPAQUE_NAME = re.compile(r"[A-Za-z_]\w*(?:(?:\.[A-Za-z_]\w*)+|<[a-z_]+>|<[1-9][0-9]{0,18}>)?")
_FAMILY_NAME = re.compile(r"([A-Za-z_]\w*)<([1-9][0-9]{0,18})>")


class OpaqueType(Type):
    """A parameterless dialect type written as one name: dotted (``kernel.async.token``), a
    dialect word (``encoding``) or a word with one fixed role (``encoding<layout>``).

    Dialects declare them (:func:`opaque_type`); the name is the whole spelling, so text,
    bytecode and diagnostics need no per-type code. Interned: one object per name."""

    __slots__ = ("name", "doc")
    kind = TypeKind.OPAQUE
    _registered: dict[str, OpaqueType] = {}

    def __new__(cls, name: str, doc: str = "") -> OpaqueType:
        existing = cls._registered.get(name)
        if existing is not None:
            return existing
        if _OPAQUE_NAME.fullmatch(name) is None:
            raise ValueError(
                "an opaque type name is dotted identifiers (a.b.c) or a word with one "
                f"<role> (word<role>), got {name!r}"
            )
        obj = super().__new__(cls)
        obj.name = name
        obj.doc = doc
        cls._registered[name] = obj
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (OpaqueType, (self.name,))


_FAMILIES: dict[str, str] = {}


def opaque_family(word: str, doc: str) -> None:
    """Declare a family of opaque types ``word<N>`` (N a positive integer), made on first use."""
    if _OPAQUE_NAME.fullmatch(word) is None or "<" in word or "." in word:
        raise ValueError(f"an opaque family is one word, got {word!r}")
    _FAMILIES[word] = doc


def opaque_families() -> tuple[str, ...]:
    """The words of every declared ``word<N>`` opaque family."""
    return tuple(_FAMILIES)


def opaque_type(name: str) -> OpaqueType | None:
    """The declared opaque type spelled ``name`` (a family member ``word<N>`` is made on first
    use), or None."""
    t = OpaqueType._registered.get(name)
    if t is None and (m := _FAMILY_NAME.fullmatch(name)) is not None:
        doc = _FAMILIES.get(m.group(1))
        if doc is not None:
            t = OpaqueType(name, doc)
    return t


ENCODING_TYPE_NAME = "encoding"
"""The word that spells the encoding dialect's opaque types (``encoding``, ``encoding<role>``)."""


def is_encoding_type(t: Type) -> bool:
    """True for ``encoding`` and its role-qualified forms (``encoding<schema>``...)."""
    return isinstance(t, OpaqueType) and t.name.split("<", 1)[0] == ENCODING_TYPE_NAME


def opaque_types() -> tuple[OpaqueType, ...]:
    """Every declared opaque type, in declaration order."""
    return tuple(OpaqueType._registered.values())


class StaticDim:
    """A dimension with a compile-time size."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"a static dimension must be a non-negative int, got {size!r}")
        self.size = size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StaticDim) and other.size == self.size

    def __hash__(self) -> int:
        return hash(("static", self.size))

    def __repr__(self) -> str:
        return f"StaticDim({self.size})"


class DynamicDim:
    """A dimension whose size is an SSA value (``[%n]``); ``value`` may be unbound (``?``)."""

    __slots__ = ("value",)

    def __init__(self, value: Value | None = None) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DynamicDim) and other.value is self.value

    def __hash__(self) -> int:
        return hash(("dynamic", id(self.value)))

    def __repr__(self) -> str:
        name = "?" if self.value is None else f"%{self.value.display_name}"
        return f"DynamicDim({name})"


Dim = StaticDim | DynamicDim
_SHAPED_KINDS = frozenset((TypeKind.VIEW, TypeKind.VECTOR, TypeKind.TENSOR, TypeKind.TILE))


class ShapedType(Type):
    """``view<...>``, ``vector<...>``, ``tensor<...>`` or ``tile<...>``: dims, an element type
    and an optional attachment (a view's layout, a tile's encoding).

    A ``tensor`` is a value-semantic dense row-major array of a check case (host data, no
    layout, any rank including 0); views and vectors are the kernel-side shapes. A ``tile`` is
    a value-semantic array (any rank including 0) whose storage may carry an encoding
    attachment: a static ``#spec`` or an SSA encoding value (``tile<[%n]xi8, #q8_0<block=32>>``)."""

    __slots__ = ("kind", "element_type", "dims", "encoding")

    def __init__(
        self,
        type_kind: TypeKind,
        element_type: ScalarType,
        dims: tuple[Dim | int, ...] | list[Dim | int],
        encoding: str | Value | None = None,
    ) -> None:
        if type_kind not in _SHAPED_KINDS:
            raise ValueError(
                f"shaped types are views, vectors, tensors or tiles, not {type_kind.value}"
            )
        if not isinstance(element_type, ScalarType):
            raise TypeError(f"element type must be a scalar type, got {element_type!r}")
        norm = tuple(StaticDim(d) if isinstance(d, int) else d for d in dims)
        for d in norm:
            if not isinstance(d, (StaticDim, DynamicDim)):
                raise TypeError(f"dimension must be an int, StaticDim or DynamicDim, got {d!r}")
        if type_kind is TypeKind.VECTOR:
            if not norm:
                raise ValueError("a vector type needs rank >= 1")
            if encoding is not None:
                raise ValueError("a vector type has no layout")
        if type_kind is TypeKind.TENSOR and encoding is not None:
            raise ValueError("a tensor type has no layout")
        self.kind = type_kind
        self.element_type = element_type
        self.dims = norm
        self.encoding = encoding

    @property
    def rank(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    @property
    def static_shape(self) -> tuple[int | None, ...]:
        """Sizes with ``None`` for dynamic dimensions."""
        return tuple(d.size if isinstance(d, StaticDim) else None for d in self.dims)

    def _key(self) -> tuple[Any, ...]:
        enc = (
            self.encoding
            if isinstance(self.encoding, str) or self.encoding is None
            else id(self.encoding)
        )
        return (self.kind, self.element_type, self.dims, enc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapedType) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())


def same_type_along(a: Type, b: Type, rename: dict[int, Value]) -> bool:
    """``a == b`` once the values ``a`` mentions (dynamic dims, a layout) are replaced by
    ``rename[id(value)]`` where given: a type passed along an edge, yielded to an op's results
    or tied to them, names the values on the other side."""
    if not isinstance(a, ShapedType) or not isinstance(b, ShapedType):
        return a == b
    if (a.kind, a.element_type, len(a.dims)) != (b.kind, b.element_type, len(b.dims)):
        return False
    for x, y in zip(a.dims, b.dims):
        if isinstance(x, DynamicDim) and isinstance(y, DynamicDim):
            if rename.get(id(x.value), x.value) is not y.value:
                return False
        elif x != y:
            return False
    ea, eb = a.encoding, b.encoding
    if isinstance(ea, str) or ea is None or isinstance(eb, str) or eb is None:
        return ea == eb
    return rename.get(id(ea), ea) is eb


def view_type(
    element_type: ScalarType, *dims: Dim | int | Value, layout: str | Value | None = None
) -> ShapedType:
    """Convenience: ``view_type(F32, n_value, 4)`` is ``view<[%n]x4xf32>``."""
    from loom.ir.values import Value

    return ShapedType(
        TypeKind.VIEW,
        element_type,
        tuple(DynamicDim(d) if isinstance(d, Value) else d for d in dims),
        layout,
    )


def tensor_type(element_type: ScalarType, *dims: Dim | int | Value) -> ShapedType:
    """Convenience: ``tensor_type(F32, m_value, 4)`` is ``tensor<[%m]x4xf32>``."""
    from loom.ir.values import Value

    return ShapedType(
        TypeKind.TENSOR,
        element_type,
        tuple(DynamicDim(d) if isinstance(d, Value) else d for d in dims),
    )


def tile_type(
    element_type: ScalarType, *dims: Dim | int | Value, encoding: str | Value | None = None
) -> ShapedType:
    """Convenience: ``tile_type(I8, n_value, encoding="#q8_0<block=32>")`` is
    ``tile<[%n]xi8, #q8_0<block=32>>`` (``encoding`` a static spec or an encoding value)."""
    from loom.ir.values import Value

    return ShapedType(
        TypeKind.TILE,
        element_type,
        tuple(DynamicDim(d) if isinstance(d, Value) else d for d in dims),
        encoding,
    )


def vector_type(element_type: ScalarType, *dims: int) -> ShapedType:
    """Convenience: ``vector_type(F32, 8)`` is ``vector<8xf32>``."""
    return ShapedType(TypeKind.VECTOR, element_type, dims)


MAX_TYPE_NESTING = 32
"""Deepest nesting of function types (and function references) in one type: deeper types are
refused when made, so printing, comparing and hashing them never exhaust the stack."""


def _nesting(types: tuple[Type, ...]) -> int:
    return max((getattr(t, "nesting", 0) for t in types), default=0)


class FunctionType(Type):
    """``(T, U) -> (V)``."""

    __slots__ = ("inputs", "results", "nesting")
    kind = TypeKind.FUNCTION

    def __init__(self, inputs: tuple[Type, ...], results: tuple[Type, ...]) -> None:
        self.inputs = tuple(inputs)
        self.results = tuple(results)
        self.nesting = 1 + _nesting(self.inputs + self.results)
        if self.nesting > MAX_TYPE_NESTING:
            raise ValueError(f"function types nest more than {MAX_TYPE_NESTING} deep")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FunctionType)
            and other.inputs == self.inputs
            and other.results == self.results
        )

    def __hash__(self) -> int:
        return hash((self.inputs, self.results))


class FuncRefType(Type):
    """``func.ref<[yieldable] (A, ...) -> (R, ...)>``: a first-class function value.

    ``signature`` is the exact callable signature (a :class:`FunctionType` in valid IR; the
    parser keeps any type so the verifier can name a malformed one); ``yieldable`` permits the
    referenced function to suspend, a synchronous reference (the default) promises it does not.
    The type's name is declared by its dialect (:func:`declare_func_ref`).
    """

    __slots__ = ("signature", "yieldable", "nesting")
    kind = TypeKind.FUNC_REF
    spelling: ClassVar[str] = "<undeclared function reference type>"
    """The name that opens the type in text, set by :func:`declare_func_ref` when the func
    dialect is imported (parsing, building and the registry import it)."""

    def __init__(self, signature: Type, yieldable: bool = False) -> None:
        if not isinstance(signature, Type):
            raise TypeError(
                f"a function reference signature must be a Loom type, got {signature!r}"
            )
        self.signature = signature
        self.yieldable = bool(yieldable)
        self.nesting = 1 + _nesting((signature,))
        if self.nesting > MAX_TYPE_NESTING:
            raise ValueError(f"function reference types nest more than {MAX_TYPE_NESTING} deep")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FuncRefType)
            and other.yieldable == self.yieldable
            and other.signature == self.signature
        )

    def __hash__(self) -> int:
        return hash((TypeKind.FUNC_REF, self.yieldable, self.signature))


def declare_func_ref(name: str) -> None:
    """Name the function-reference type (its dialect does, once)."""
    FuncRefType.spelling = name


YIELDABLE = "yieldable"
"""The keyword of a yieldable function reference."""


INDEX = ScalarType(ScalarTypeKind.INDEX)
OFFSET = ScalarType(ScalarTypeKind.OFFSET)
I1 = ScalarType(ScalarTypeKind.I1)
I8 = ScalarType(ScalarTypeKind.I8)
I16 = ScalarType(ScalarTypeKind.I16)
I32 = ScalarType(ScalarTypeKind.I32)
I64 = ScalarType(ScalarTypeKind.I64)
F16 = ScalarType(ScalarTypeKind.F16)
BF16 = ScalarType(ScalarTypeKind.BF16)
F32 = ScalarType(ScalarTypeKind.F32)
F64 = ScalarType(ScalarTypeKind.F64)
BUFFER_TYPE = BufferType()

SCALAR_TYPES: dict[str, ScalarType] = {
    t.spelling: t for t in (INDEX, OFFSET, I1, I8, I16, I32, I64, F16, BF16, F32, F64)
}
"""Every scalar type by its spelling."""
