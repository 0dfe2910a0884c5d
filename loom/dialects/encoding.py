"""encoding: address layouts, storage schemas and numeric transforms as SSA values.

An encoding value has type ``encoding`` or a role-qualified ``encoding<layout>``,
``encoding<schema>``, ``encoding<storage>``, ``encoding<transform>``. A layout value attached
to a view type (``view<16x32xf32, %layout>``) says where each logical element lives: dense
row-major (``encoding.layout.dense``, or no attachment) or per-axis element strides
(``encoding.layout.strided``). Static encodings are ``#family<name=value, ...>`` specs
(:mod:`loom.ir.encoding_spec`); :data:`FAMILIES` says what each family accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loom.dsl import (
    ANY,
    I1_T,
    INDEX_T,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    EncodingAttr,
    EnumDef,
    Example,
    IndexList,
    Kw,
    Operand,
    ParamDict,
    Pure,
    Ref,
    Requirements,
    Result,
    SameType,
    TypeConstraint,
    TypeOf,
    Violation,
    op,
)
from loom.ir import DYNAMIC_INDEX, OpaqueType, ShapedType, StaticDim, Type
from loom.ir.encoding_spec import EncodingSpec, Quoted, SpecError, parse_spec

ENCODING = OpaqueType("encoding", "An encoding value of any role.")
LAYOUT = OpaqueType("encoding<layout>", "An address layout: where a view's elements live.")
SCHEMA = OpaqueType("encoding<schema>", "A storage schema: how values are coded in bytes.")
STORAGE = OpaqueType("encoding<storage>", "Physical storage: a layout and a schema together.")
TRANSFORM = OpaqueType("encoding<transform>", "A numeric transform (Hadamard, JL...).")
ROLE_TYPES: dict[str, OpaqueType] = {
    "layout": LAYOUT,
    "schema": SCHEMA,
    "storage": STORAGE,
    "transform": TRANSFORM,
}
ENCODING_TYPES = frozenset((ENCODING, *ROLE_TYPES.values()))
_ROLE_TEXT = {
    "layout": "an address layout encoding",
    "schema": "a storage schema encoding",
    "storage": "a physical storage encoding",
    "transform": "a numeric transform encoding",
}

ANY_ENCODING = TypeConstraint(
    "an encoding type (encoding, encoding<layout|schema|storage|transform>)",
    lambda t: t in ENCODING_TYPES,
)
LAYOUT_T = TypeConstraint("encoding<layout>", lambda t: t is LAYOUT, fixed=LAYOUT)
SCHEMA_T = TypeConstraint("encoding<schema>", lambda t: t is SCHEMA, fixed=SCHEMA)
DYNAMIC_STRIDE = DYNAMIC_INDEX
"""The ``static_strides`` entry of a stride given by an operand (INT64_MIN)."""
LAYOUT_KIND = {"dense": 1, "strided": 2}
"""Layout kinds as upstream's fact codes number them."""

# --------------------------------------------------------------------------- families

NUMERIC_FORMATS = [
    "none",
    "f64",
    "f32",
    "tf32",
    "f16",
    "bf16",
    "i32",
    "u32",
    "i16",
    "u16",
    "i8",
    "u8",
    "i6",
    "u6",
    "i5",
    "u5",
    "i4",
    "u4",
    "i3",
    "u3",
    "i2",
    "u2",
    "i1",
    "u1",
    "f8e4m3",
    "f8e5m2",
    "f8e4m3fn",
    "f8e4m3fnuz",
    "f8e5m2fnuz",
    "e8m0",
    "bf8",
    "f6e3m2",
    "f6e2m3",
    "bf6",
    "f4e2m1",
    "ternary",
    "sign_bit",
    "codebook_index",
    "quant_i8",
    "quant_i6",
    "quant_i4",
    "bfp16ebs8",
]
PAYLOAD_PACKINGS = [
    "dense_lanes",
    "little_endian_nibbles",
    "big_endian_nibbles",
    "bitfield_stream",
    "bitplane_stream",
    "multi_stream",
    "base_n_packed",
    "codebook_indices",
    "target_fragment",
    "interleaved_scale_payload",
    "separate_scale_payload",
]
SCALE_TOPOLOGIES = [
    "none",
    "tensor_global",
    "row",
    "column",
    "channel",
    "group_1d",
    "block_1d",
    "block_2d",
    "subblock_in_superblock",
    "hierarchical",
    "per_token",
    "per_head",
    "per_page",
    "runtime_amax_derived",
]
AFFINE_POLICIES = [
    "none",
    "scale_only",
    "scale_plus_min",
    "scale_plus_zero_point",
    "scale_plus_bias",
    "super_scale_times_subscale",
    "sum_correction",
]
ROUNDING_POLICIES = [
    "none",
    "nearest_even",
    "nearest_away",
    "toward_zero",
    "down",
    "up",
    "stochastic",
    "satfinite",
    "overflow_to_inf",
    "overflow_to_nan",
    "flush_subnormal",
    "preserve_subnormal",
    "relu_clamp",
    "finite_only",
    "finite_flush_subnormal",
]
CODEBOOK_POLICIES = [
    "none",
    "static_builtin_table",
    "static_symbol_table",
    "global_data_table",
    "dynamic_table_operand",
    "per_superblock_table",
]
SPARSITY_POLICIES = [
    "none",
    "mask",
    "n_m_structured",
    "block_sparse",
    "bsr",
    "csr",
    "coo",
    "page_table",
    "moe_routing",
    "outlier_side_stream",
]
TRANSFORM_FAMILIES = ("hadamard", "hadamard_sign", "sign_permute_hadamard", "jl_dense")


@dataclass(frozen=True)
class Param:
    """One static parameter: ``kind`` is int, bool, ints, word, string or a role (nested
    spec); ``cases`` the accepted words or strings (empty: any)."""

    kind: str
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """What a static encoding family accepts."""

    role: str
    params: dict[str, Param] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    dynamic: dict[str, str] | None = None
    """Dynamic parameter name -> expected type ('encoding<layout>', 'any'...); None: any name."""
    check: Callable[[str, EncodingSpec, dict[str, Any]], list[Violation]] | None = None
    check_values: Callable[[EncodingSpec, dict[str, Any], Any], list[Violation]] | None = None
    """Checks of the dynamic parameters' values (their types, the specs that define them) once
    the spec itself is valid: ``(spec, dynamic, verify context)``."""


_INT, _BOOL, _INTS = Param("int"), Param("bool"), Param("ints")


def _word(cases: list[str] | tuple[str, ...]) -> Param:
    return Param("word", tuple(cases))


_OPERAND_PARAMS = {
    "element_format": _word(NUMERIC_FORMATS),
    "payload_elements": _INT,
    "payload_registers": _INT,
    "payload_packing": _word(PAYLOAD_PACKINGS),
    "affine": _word(AFFINE_POLICIES),
    "codebook": _word(CODEBOOK_POLICIES),
    "rounding": _word(ROUNDING_POLICIES),
    "scale_format": _word(NUMERIC_FORMATS),
    "secondary_scale_format": _word(NUMERIC_FORMATS),
    "scale_group_elements": _INT,
    "scale_group_shape": _INTS,
    "scale_operands": _INT,
    "scale_topology": _word(SCALE_TOPOLOGIES),
    "sparsity": _word(SPARSITY_POLICIES),
    "sparsity_group_elements": _INT,
    "sparsity_group_nonzero_elements": _INT,
    "zero_scale_fallback": _BOOL,
}


def _check_operand(name: str, spec: EncodingSpec, dyn: dict[str, Any]) -> list[Violation]:
    regs = spec.get("payload_registers")
    if isinstance(regs, int) and regs <= 0:
        return [
            Violation(
                "STRUCTURE/014",
                f"#{name} parameter 'payload_registers' is {regs}; it must be at least 1",
                "spec",
            )
        ]
    topology = spec.get("scale_topology")
    scaled = spec.get("scale_format") is not None or topology not in (None, "none")
    group = spec.get("scale_group_elements") is not None or spec.get("scale_group_shape")
    operands = spec.get("scale_operands", 0)
    if (scaled or group) and (not group or not isinstance(operands, int) or operands < 1):
        return [
            Violation(
                "STRUCTURE/014",
                f"#{name}: a scaled schema needs auxiliary operand 'scale' (scale_operands >= 1, "
                f"found {operands}) and a scale group (scale_group_elements or "
                "scale_group_shape)",
                "spec",
            )
        ]
    shape = spec.get("scale_group_shape")
    if isinstance(shape, tuple) and (not shape or any(x <= 0 for x in shape)):
        return [
            Violation(
                "STRUCTURE/014",
                f"#{name} parameter 'scale_group_shape' {list(shape)} needs positive extents",
                "spec",
            )
        ]
    return []


def _check_transform(name: str, spec: EncodingSpec, dyn: dict[str, Any]) -> list[Violation]:
    fam = spec.get("family")
    given = set(dyn) | set(spec.names)
    if fam == "hadamard" and "signs" in given:
        return [
            Violation(
                "ENCODING/008",
                f"#{name} family \"hadamard\" does not take parameter 'signs'",
                "params",
            )
        ]
    if fam in ("hadamard_sign", "sign_permute_hadamard"):
        if "signs" in given and "seed" in given:
            return [
                Violation(
                    "ENCODING/014",
                    f"#{name} parameters 'signs' and 'seed' are mutually exclusive",
                    "params",
                )
            ]
        if "signs" not in given and "seed" not in given:
            return [
                Violation(
                    "ENCODING/007",
                    f'#{name} family "{fam}" needs parameter signs or seed',
                    "params",
                )
            ]
        if fam == "sign_permute_hadamard" and "permutation" not in given:
            return [
                Violation(
                    "ENCODING/007",
                    f"#{name} family \"{fam}\" needs parameter 'permutation'",
                    "params",
                )
            ]
    if fam == "jl_dense":
        if "matrix" not in given:
            return [
                Violation(
                    "ENCODING/007",
                    f"#{name} family \"jl_dense\" needs parameter 'matrix'",
                    "params",
                )
            ]
        if spec.get("normalization") == "orthonormal":
            return [
                Violation(
                    "ENCODING/013",
                    f"#{name} parameter 'normalization' value \"orthonormal\" is not "
                    'supported by family "jl_dense"',
                    "spec",
                )
            ]
    return []


def _alias_check(fmt: str) -> Callable[[str, EncodingSpec, dict[str, Any]], list[Violation]]:
    def check(name: str, spec: EncodingSpec, dyn: dict[str, Any]) -> list[Violation]:
        if "element_format" in spec.names:
            return [
                Violation(
                    "ENCODING/008",
                    f"#{name} fixes element_format={fmt}; it cannot be restated",
                    "spec",
                )
            ]
        return _check_operand(name, spec, dyn)

    return check


def _element_count(t: Any) -> int | None:
    """The static element count of a shaped type (None when a dim is dynamic)."""
    dims = getattr(t, "dims", None)
    if dims is None or not all(isinstance(d, StaticDim) for d in dims):
        return None
    count = 1
    for d in dims:
        count *= d.size
    return count


def _defined_family(value: Any, ctx: Any) -> str | None:
    """The ``family`` parameter of the static spec an ``encoding.define`` gives ``value``."""
    owner = ctx.defining_op(value)
    text = owner.attributes.get("spec") if owner is not None else None
    if not isinstance(text, str):
        return None
    try:
        family = parse_spec(text).get("family")
    except SpecError:
        return None
    return str(family) if family is not None else None


def _check_turboquant(spec: EncodingSpec, dyn: dict[str, Any], ctx: Any) -> list[Violation]:
    """A TurboQuant KV record: ``logical_elems`` codes of ``first_stage_bits`` bits, then
    ``qjl_rows`` residual sign bits of ``residual_bits`` each; ``2**bits - 1`` thresholds and
    ``2**bits`` centroids of the logical element type; a transform of ``transform_family`` and a
    dense JL residual projection."""
    name, out = spec.family, []
    bits, elems = spec.get("first_stage_bits"), spec.get("logical_elems")
    rows, residual = spec.get("qjl_rows"), spec.get("residual_bits")
    want_bytes = -(-elems * bits // 8) + -(-rows * residual // 8)
    if spec.get("record_bytes") != want_bytes:
        out.append(
            Violation(
                "STRUCTURE/014",
                f"#{name} record_bytes {spec.get('record_bytes')} does not match the record "
                f"layout ({want_bytes} bytes: {elems} x {bits}-bit codes and {rows} x "
                f"{residual}-bit residual signs)",
                "spec",
            )
        )
    for param, want in (("thresholds", 2**bits - 1), ("centroids", 2**bits)):
        v = dyn.get(param)
        t = getattr(v, "type", None)
        if not isinstance(t, ShapedType):
            continue
        if param == "centroids" and t.element_type.spelling != str(spec.get("logical_element")):
            out.append(
                Violation(
                    "ENCODING/009",
                    f'#{name} dynamic parameter "{param}" has type {t}; expected elements of '
                    f"the logical element type {spec.get('logical_element')}",
                    "params",
                )
            )
        count = _element_count(t)
        if count is not None and count != want:
            out.append(
                Violation(
                    "STRUCTURE/014",
                    f'#{name} dynamic parameter "{param}" has {count} elements; '
                    f"{bits}-bit codes need {want}",
                    "params",
                )
            )
    for param, want in (("transform", spec.get("transform_family")), ("qjl_transform", "jl_dense")):
        v = dyn.get(param)
        got = _defined_family(v, ctx) if v is not None else None
        if got is not None and got != want:
            out.append(
                Violation(
                    "ENCODING/013",
                    f'#{name} dynamic parameter "{param}" is a "{got}" transform; expected '
                    f'family "{want}"',
                    "params",
                )
            )
    return out


FAMILIES: dict[str, Family] = {
    # address layouts
    "dense": Family("layout"),
    "strided": Family("layout", {"stride": _INT}, ("stride",)),
    "encoding.layout.dense": Family("layout"),
    "encoding.layout.strided": Family("layout", {"strides": _INTS}, ("strides",)),
    # physical storage
    "physical_storage": Family(
        "storage",
        {"layout": Param("layout"), "schema": Param("schema")},
        ("schema",),
        {"layout": "layout", "schema": "schema"},
    ),
    "encoding.storage": Family(
        "storage",
        {"layout": Param("layout"), "schema": Param("schema")},
        (),
        {"layout": "layout", "schema": "schema"},
    ),
    # storage schemas (older spellings)
    "q8_0": Family("schema", {"block": _INT}),
    "ggml_q4_0": Family("schema", {"block_elems": _INT, "storage_bytes": _INT}),
    "ggml_q8_0": Family("schema", {"block_elems": _INT, "storage_bytes": _INT}),
    "matrix_operand": Family(
        "schema",
        _OPERAND_PARAMS,
        ("element_format", "payload_elements"),
        {},
        _check_operand,
    ),
    "turboquant_kv": Family(
        "schema",
        {
            "first_stage_bits": _INT,
            "logical_element": Param("string"),
            "logical_elems": _INT,
            "pack_order": Param("string", ("lsb0",)),
            "qjl_rows": _INT,
            "record_bytes": _INT,
            "residual_bits": _INT,
            "scalar_quantizer": Param("string"),
            "transform_family": Param("string", TRANSFORM_FAMILIES),
        },
        (
            "first_stage_bits",
            "logical_element",
            "logical_elems",
            "pack_order",
            "qjl_rows",
            "record_bytes",
            "residual_bits",
            "scalar_quantizer",
            "transform_family",
        ),
        {
            "centroids": "any",
            "qjl_transform": "transform",
            "thresholds": "any",
            "transform": "transform",
        },
        check_values=_check_turboquant,
    ),
    "ieee_fp8_e4m3": Family("schema"),
    "ieee_fp8_e5m2": Family("schema"),
    **{
        f: Family(
            "schema", {"rounding": Param("word", tuple(ROUNDING_POLICIES)), "storage_bits": _INT}
        )
        for f in ("fp8_e4m3fn", "fp8_e4m3fnuz", "fp8_e5m2fnuz")
    },
    # storage schemas (namespaced spellings)
    **{
        f"ggml.{q}": Family("schema", {}, (), {})
        for q in ("q4_0", "q8_0", "q4_k", "q5_k", "q6_k", "q8_1_x4")
    },
    "encoding.operand": Family(
        "schema", _OPERAND_PARAMS, ("element_format", "payload_elements"), {}, _check_operand
    ),
    **{
        f"encoding.{fmt}": Family("schema", _OPERAND_PARAMS, (), {}, _alias_check(fmt))
        for fmt in NUMERIC_FORMATS[1:35]
    },
    # numeric transforms
    "numeric_transform": Family(
        "transform",
        {
            "family": Param("string", TRANSFORM_FAMILIES),
            "input_elems": _INT,
            "output_elems": _INT,
            "normalization": Param("string", ("orthonormal",)),
        },
        ("family", "input_elems", "output_elems"),
        {"signs": "any", "seed": "any", "permutation": "any", "matrix": "any"},
        _check_transform,
    ),
    "transform.hadamard": Family(
        "transform", {"normalization": _word(("none", "orthonormal"))}, (), {}
    ),
}
"""Every static family by name (older flat spellings and namespaced ones)."""


def family_role(family: str) -> str | None:
    """The role (layout, schema, storage, transform) of a known family, or None."""
    fam = FAMILIES.get(family)
    return fam.role if fam is not None else None


def _kind_ok(p: Param, v: Any) -> bool:
    if p.kind == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if p.kind == "bool":
        return isinstance(v, bool)
    if p.kind == "ints":
        return isinstance(v, tuple)
    if p.kind == "word":
        return isinstance(v, str) and not isinstance(v, Quoted)
    if p.kind == "string":
        return isinstance(v, Quoted)
    return isinstance(v, EncodingSpec)


def spec_problems(spec: EncodingSpec, dynamic: dict[str, Any] | None = None) -> list[Violation]:
    """Violations of ``spec`` (and the dynamic parameters, name -> value) against its family."""
    fam = FAMILIES.get(spec.family)
    if fam is None:
        return []
    dyn = dynamic or {}
    out: list[Violation] = []
    for k, v in spec.params:
        out += _static_param_problems(spec.family, fam, k, v)
    for k, v in dyn.items():
        out += _dynamic_param_problems(spec, fam, k, v)
    given = set(spec.names) | set(dyn)
    for k in fam.required:
        if k not in given:
            out.append(Violation("ENCODING/007", f'#{spec.family} needs parameter "{k}"', "spec"))
    if not out and fam.check is not None:
        out += fam.check(spec.family, spec, dyn)
    return out


def _static_param_problems(name: str, fam: Any, k: str, v: Any) -> list[Violation]:
    """A static parameter ``k = v`` of family ``name``: known, of its kind, one of its cases,
    a nested spec of the right role (itself checked)."""
    p = fam.params.get(k)
    if p is None:
        return [Violation("ENCODING/008", f"#{name} does not take parameter '{k}'", "spec")]
    if not _kind_ok(p, v):
        return [
            Violation(
                "ENCODING/010",
                f"#{name} parameter '{k}' must be {_KIND_TEXT.get(p.kind, p.kind)}, got {v!r}",
                "spec",
            )
        ]
    if p.cases and v not in p.cases:
        return [
            Violation(
                "ENCODING/013",
                f"#{name} parameter '{k}' value \"{v}\" is not one of " + ", ".join(p.cases),
                "spec",
            )
        ]
    if p.kind not in ROLE_TYPES:
        return []
    inner = family_role(v.family)
    if inner is not None and inner != p.kind:
        return [
            Violation(
                "ENCODING/011",
                f"#{name} parameter '{k}' must be {_ROLE_TEXT[p.kind]}, got "
                f"#{v.family} ({_ROLE_TEXT[inner]})",
                "spec",
            )
        ]
    return spec_problems(v)


def _dynamic_param_problems(spec: EncodingSpec, fam: Any, k: str, v: Any) -> list[Violation]:
    """A dynamic parameter ``k`` (an SSA value ``v``): not also static, known to the family,
    of an encoding type of the right role where the family wants an encoding."""
    name = spec.family
    if k in spec.names:
        return [
            Violation(
                "ENCODING/006",
                f'parameter "{k}" of #{name} is given both statically and dynamically',
                "params",
            )
        ]
    if fam.dynamic is None:
        return []
    want = fam.dynamic.get(k)
    if want is None:
        return [
            Violation("ENCODING/008", f'#{name} does not take dynamic parameter "{k}"', "params")
        ]
    if want not in ROLE_TYPES:
        return []
    t = getattr(v, "type", None)
    if t not in ENCODING_TYPES:
        return [
            Violation(
                "ENCODING/009",
                f'#{name} dynamic parameter "{k}" has type {t}; expected_type='
                f'"encoding" ({ROLE_TYPES[want]})',
                "params",
            )
        ]
    if t is not ENCODING and t is not ROLE_TYPES[want]:
        return [
            Violation(
                "ENCODING/011",
                f'#{name} dynamic parameter "{k}" has type {t}; expected_role="{_ROLE_TEXT[want]}"',
                "params",
            )
        ]
    return []


_KIND_TEXT = {
    "int": "an integer",
    "bool": "true or false",
    "ints": "a list of integers",
    "word": "a keyword",
    "string": "a quoted string",
    **{r: _ROLE_TEXT[r] for r in ROLE_TYPES},
}


def _spec_of(op: Any, attr: str = "spec") -> tuple[EncodingSpec | None, list[Violation]]:
    text = op.attributes.get(attr)
    if not isinstance(text, str):
        return None, []
    try:
        return parse_spec(text), []
    except SpecError as e:
        return None, [Violation(e.code, f"bad encoding spec: {e}", attr)]


def _role_problem(op: Any, spec: EncodingSpec, t: Type) -> list[Violation]:
    role = family_role(spec.family)
    if role is None or t is ROLE_TYPES[role]:
        return []
    return [
        Violation(
            "ENCODING/012",
            f'#{spec.family} is {_ROLE_TEXT[role]}: encoding_name="{spec.family}", '
            f'actual_type="{t}", expected_type="{ROLE_TYPES[role]}"',
            "result",
        )
    ]


def spec_mismatch(t: Type, value: Any) -> str | None:
    """Why literal ``value`` cannot be a value of encoding type ``t`` (None when it can): it
    must be a static spec whose family, when known, has the role ``t`` names."""
    if not isinstance(value, str):
        return f"type {t} takes a static encoding spec ('#family<...>'), got {value!r}"
    try:
        spec = parse_spec(value)
    except SpecError as e:
        return f"bad encoding spec: {e}"
    role = family_role(spec.family)
    if role is None or t is ENCODING or t is ROLE_TYPES[role]:
        return None
    return f"#{spec.family} is {_ROLE_TEXT[role]}, not a value of type {t}"


def _dynamic_params(op: Any, ctx: Any) -> dict[str, Any]:
    vals = ctx.operand_values(op, "params")
    names = op.attributes.get("param_names")
    if not vals or not isinstance(names, str):
        return {}
    return dict(zip(names.split(","), vals))


def _verify_define(op, ctx) -> list[Violation]:  # noqa: ANN001
    spec, bad = _spec_of(op)
    if spec is None:
        return bad
    names = op.attributes.get("param_names")
    vals = ctx.operand_values(op, "params")
    listed = names.split(",") if isinstance(names, str) and names else []
    if listed != sorted(set(listed)) or not all(k.isidentifier() for k in listed):
        return [
            Violation(
                "STRUCTURE/014",
                f"param_names {names!r} must be distinct identifiers in sorted order",
                "param_names",
            )
        ]
    count = len(listed)
    if count != len(vals):
        return [
            Violation(
                "STRUCTURE/014",
                f"param_names names {count} parameters for {len(vals)} operands",
                "param_names",
            )
        ]
    if op.results:
        problems = _role_problem(op, spec, op.results[0].type)
        if problems:
            return problems
    dyn = _dynamic_params(op, ctx)
    problems = spec_problems(spec, dyn)
    if problems:
        return problems
    fam = FAMILIES.get(spec.family)
    if fam is not None and fam.check_values is not None:
        return fam.check_values(spec, dyn, ctx)
    return []


def _verify_assume_spec(op, ctx) -> list[Violation]:  # noqa: ANN001
    spec, bad = _spec_of(op)
    if spec is None:
        return bad
    enc = ctx.operand_values(op, "enc")
    if enc:
        problems = _role_problem(op, spec, enc[0].type)
        if problems:
            return problems
    return spec_problems(spec)


def _verify_strided(op, ctx) -> list[Violation]:  # noqa: ANN001
    static = op.attributes.get("static_strides")
    if static is None:
        return []
    for s in static:
        if s < 0 and s != DYNAMIC_STRIDE:
            return [
                Violation(
                    "STRUCTURE/014",
                    f'attribute "static_strides" entry "{s}" is invalid: expected '
                    '"stride >= 0 or dynamic sentinel"',
                    "static_strides",
                )
            ]
    if len(static) > 255:
        return [Violation("STRUCTURE/014", "a layout has at most 255 strides", "static_strides")]
    return []


def _verify_rank(op, ctx) -> list[Violation]:  # noqa: ANN001
    rank = op.attributes.get("rank")
    if isinstance(rank, int) and not 0 <= rank <= 255:
        return [
            Violation(
                "STRUCTURE/014",
                f'attribute "rank" value "{rank}" is invalid: expected "rank in [0, 255]"',
                "rank",
            )
        ]
    return []


# --------------------------------------------------------------------------- ops

LAYOUT_DENSE = op(
    "encoding.layout.dense",
    "The dense row-major address layout (last axis contiguous), as a value views can carry.",
    results=[Result("result", LAYOUT_T)],
    traits=[Pure()],
    format=[Kw(":"), TypeOf("result")],
    builder="layout_dense",
    examples=[Example("%layout = encoding.layout.dense : encoding<layout>")],
)

LAYOUT_STRIDED = op(
    "encoding.layout.strided",
    "A strided address layout: one element stride per axis, in axis order (static or index "
    "operands); element i is at sum(i[d] * stride[d]) elements from the view's base.",
    operands=[Operand("strides", INDEX_T, variadic=True)],
    attrs=[AttrDef("static_strides", AttrKind.I64_ARRAY, optional=True)],
    results=[Result("result", LAYOUT_T)],
    traits=[Pure()],
    format=[
        IndexList("strides", "static_strides", signed=True, glued=False),
        Kw(":"),
        TypeOf("result"),
    ],
    builder="layout_strided",
    verifier=_verify_strided,
    verifier_cacheable=True,
    examples=[
        Example(
            "%layout = encoding.layout.strided [%row_stride, 1] : encoding<layout>",
            "%row_stride: index",
        ),
        Example("%layout = encoding.layout.strided [1, 64] : encoding<layout>"),
    ],
)

DEFINE = op(
    "encoding.define",
    "An encoding value from a static spec and named dynamic parameters (one namespace: a name "
    "is either static or dynamic).",
    operands=[Operand("params", ANY, variadic=True)],
    attrs=[
        AttrDef("spec", AttrKind.ENCODING),
        AttrDef(
            "param_names",
            AttrKind.STRING,
            optional=True,
            doc="comma-joined names of the params operands, sorted",
        ),
    ],
    results=[Result("result", ANY_ENCODING)],
    traits=[Pure()],
    format=[EncodingAttr("spec"), ParamDict("params", "param_names"), Kw(":"), TypeOf("result")],
    verifier=_verify_define,
    examples=[
        Example("%enc = encoding.define #q8_0<block=32> : encoding<schema>"),
        Example(
            "%enc = encoding.define #q8_0<block=32> {group_size = %g : index} : encoding<schema>",
            "%g: index",
        ),
        Example(
            "%s = encoding.define #physical_storage {layout = %l : encoding<layout>, "
            "schema = %q : encoding<schema>} : encoding<storage>",
            "%l: encoding<layout>, %q: encoding<schema>",
        ),
    ],
)

ISA = op(
    "encoding.isa",
    'True when the encoding belongs to a category ("quantized"...) or, with a spec, is '
    "exactly that static encoding.",
    operands=[Operand("enc", ANY_ENCODING)],
    attrs=[AttrDef("category", AttrKind.STRING)],
    results=[Result("result", I1_T)],
    traits=[Pure()],
    format=[Ref("enc"), Kw(","), Attr("category"), Kw(":"), TypeOf("result")],
    examples=[Example('%q = encoding.isa %enc, "quantized" : i1', "%enc: encoding<schema>")],
)

ASSUME_DENSE = op(
    "encoding.layout.assume.dense",
    "The same layout value, promised to be dense row-major (a false promise is undefined).",
    operands=[Operand("layout", LAYOUT_T)],
    results=[Result("result", LAYOUT_T)],
    traits=[Pure(), SameType(("layout", "result"))],
    format=[Ref("layout"), Kw(":"), TypeOf("result")],
    builder="layout_assume_dense",
    examples=[
        Example(
            "%d = encoding.layout.assume.dense %layout : encoding<layout>",
            "%layout: encoding<layout>",
        )
    ],
)

ASSUME_STRIDED = op(
    "encoding.layout.assume.strided",
    "The same layout value, promised to be strided of the given rank (strides unknown, "
    "non-negative).",
    operands=[Operand("layout", LAYOUT_T)],
    attrs=[AttrDef("rank", AttrKind.INT)],
    results=[Result("result", LAYOUT_T)],
    traits=[Pure(), SameType(("layout", "result"))],
    format=[Ref("layout"), AttrDict(), Kw(":"), TypeOf("result")],
    builder="layout_assume_strided",
    verifier=_verify_rank,
    verifier_cacheable=True,
    examples=[
        Example(
            "%s = encoding.layout.assume.strided %layout {rank = 2} : encoding<layout>",
            "%layout: encoding<layout>",
        )
    ],
)

ASSUME_SPEC = op(
    "encoding.assume.spec",
    "The same encoding value, promised to be exactly the static spec.",
    operands=[Operand("enc", ANY_ENCODING)],
    attrs=[AttrDef("spec", AttrKind.ENCODING)],
    results=[Result("result", ANY_ENCODING)],
    traits=[Pure(), SameType(("enc", "result"))],
    format=[Ref("enc"), Kw(","), EncodingAttr("spec"), Kw(":"), TypeOf("result")],
    builder="assume_spec",
    verifier=_verify_assume_spec,
    examples=[
        Example(
            "%s2 = encoding.assume.spec %s, #ggml_q4_0<block_elems=32, storage_bytes=18> : "
            "encoding<schema>",
            "%s: encoding<schema>",
        )
    ],
)

MATCH_ATTRS = (
    AttrDef(
        "element_format",
        AttrKind.ENUM,
        enum=EnumDef("element_format", tuple(NUMERIC_FORMATS)),
        optional=True,
    ),
    AttrDef(
        "payload_packing",
        AttrKind.ENUM,
        enum=EnumDef("payload_packing", tuple(PAYLOAD_PACKINGS)),
        optional=True,
    ),
    AttrDef("affine", AttrKind.ENUM, enum=EnumDef("affine", tuple(AFFINE_POLICIES)), optional=True),
)
"""The summary fields ``encoding.matches`` compares (omitted: any value matches)."""
MATCH_FIELDS = tuple(a.name for a in MATCH_ATTRS)

MATCHES = op(
    "encoding.matches",
    "True when the schema's summary has every stated field (element_format, payload_packing, "
    "affine; omitted fields match anything).",
    operands=[Operand("enc", SCHEMA_T)],
    attrs=MATCH_ATTRS,
    results=[Result("result", I1_T)],
    traits=[Pure()],
    format=[Requirements(*MATCH_FIELDS), Ref("enc"), Kw(":"), TypeOf("enc")],
    examples=[
        Example(
            "%ok = encoding.matches<element_format = u4, affine = scale_plus_min> %s : "
            "encoding<schema>",
            "%s: encoding<schema>",
        )
    ],
)

ASSUME_MATCH = op(
    "encoding.assume.match",
    "The same schema value, promised to have the stated summary fields.",
    operands=[Operand("enc", SCHEMA_T)],
    attrs=MATCH_ATTRS,
    results=[Result("result", SCHEMA_T)],
    traits=[Pure(), SameType(("enc", "result"))],
    format=[Requirements(*MATCH_FIELDS), Ref("enc"), Kw(":"), TypeOf("result")],
    builder="assume_match",
    examples=[
        Example(
            "%s2 = encoding.assume.match<affine = scale_plus_min> %s : encoding<schema>",
            "%s: encoding<schema>",
        )
    ],
)

OPS = (
    LAYOUT_DENSE,
    LAYOUT_STRIDED,
    DEFINE,
    ISA,
    ASSUME_DENSE,
    ASSUME_STRIDED,
    ASSUME_SPEC,
    MATCHES,
    ASSUME_MATCH,
)


def _static_stride_count(spec: EncodingSpec) -> int | None:
    if spec.family == "strided":
        return 1
    if spec.family == "encoding.layout.strided":
        strides = spec.get("strides")
        return len(strides) if isinstance(strides, tuple) else None
    return None


def _rank_problem(t: Any, strides: Any, field: str) -> list[Violation]:
    if not isinstance(strides, int) or strides == t.rank:
        return []
    return [
        Violation(
            "SHAPE/001",
            f"result type {t} has rank {t.rank} but its layout stride list has {strides} "
            f'stride{"s" if strides != 1 else ""}: result type rank "{t.rank}", layout '
            f'stride list "{strides}"',
            field,
        )
    ]


def view_layout_problems(t: Any, field: str, ctx: Any = None) -> list[Violation]:
    """Why the layout attached to view type ``t`` is not an address layout (empty when it is
    or when there is none): a value must be an ``encoding<layout>`` (or storage) value, a
    static attachment a layout or storage spec."""
    enc = t.encoding if isinstance(t, ShapedType) else None
    if enc is None:
        return []
    if isinstance(enc, str):
        try:
            spec = parse_spec(enc)
        except SpecError as e:
            return [Violation("TYPE/004", f"the layout of {t} is not a valid spec: {e}", field)]
        role = family_role(spec.family)
        if role not in (None, "layout", "storage"):
            return [
                Violation(
                    "TYPE/004",
                    f"the layout of {t} is #{spec.family}, {_ROLE_TEXT[role]}; expected an "
                    "address layout (or physical storage)",
                    field,
                )
            ]
        problems = spec_problems(spec)
        if problems:
            return problems
        layout = spec.get("layout") if role == "storage" else spec
        if isinstance(layout, EncodingSpec):
            return _rank_problem(t, _static_stride_count(layout), field)
        return []
    vt = getattr(enc, "type", None)
    if vt is LAYOUT and ctx is not None:
        owner = ctx.defining_op(enc)
        strides = None
        if owner is not None and owner.name == LAYOUT_STRIDED.name:
            strides = len(owner.operands)
            static = owner.attributes.get("static_strides")
            strides = len(static) if static is not None else strides
        elif owner is not None and owner.name == ASSUME_STRIDED.name:
            strides = owner.attributes.get("rank")
        problem = _rank_problem(t, strides, field)
        if problem:
            return problem
    if vt not in (ENCODING, LAYOUT, STORAGE):
        return [
            Violation(
                "TYPE/004",
                f"the layout of {t} is %{enc.display_name} of type {vt}; expected "
                "encoding<layout> (or encoding<storage>)",
                field,
            )
        ]
    return []


def kept_layout_problems(
    source: Any, result: Any, field: str, adds: bool = False
) -> list[Violation]:
    """A view derived from ``source`` (subview, refine) keeps its layout: the result type must
    carry the same attachment (``adds``: a source without one may gain one)."""
    if not isinstance(source, ShapedType) or not isinstance(result, ShapedType):
        return []
    a, b = source.encoding, result.encoding
    if a is b or (isinstance(a, str) and a == b) or (adds and a is None):
        return []
    want = "no layout" if a is None else (a if isinstance(a, str) else f"%{a.display_name}")
    return [
        Violation(
            "ENCODING/001",
            f"result type layout of {result} must be the view type's layout ({want}) of {source}",
            field,
        )
    ]


def is_dense_layout(t: Any, ctx: Any = None) -> bool:
    """True when view type ``t`` is dense row-major: no attachment, a dense spec, or a value
    made by ``encoding.layout.dense`` / ``encoding.layout.assume.dense``."""
    enc = t.encoding if isinstance(t, ShapedType) else None
    if enc is None:
        return True
    if isinstance(enc, str):
        try:
            return parse_spec(enc).family in ("dense", "encoding.layout.dense")
        except SpecError:
            return False
    owner = ctx.defining_op(enc) if ctx is not None else None
    return owner is not None and owner.name in (LAYOUT_DENSE.name, ASSUME_DENSE.name)


def view_layout_check(op, ctx) -> list[Violation]:  # noqa: ANN001
    """Verifier hook of ops whose result is a view: its layout must be an address layout."""
    return view_layout_problems(op.results[0].type, "result", ctx) if op.results else []
