"""kernel: asynchronous transfers between global and workgroup memory, their groups and waits.

A transfer returns a ``kernel.async.token``; tokens are committed in program order into a
``kernel.async.group``; ``kernel.async.wait`` completes a group (and every older one) and the
copied bytes become visible there.
"""

from __future__ import annotations

from loom.dialects._memory import (
    CACHE_SCOPE,
    CACHE_TEMPORAL,
    cache_policy,
    facts,
    memory_space,
    static_footprint,
)
from loom.dsl import (
    I1_T,
    I32_T,
    VIEW,
    AttrDef,
    AttrDict,
    AttrKind,
    Clause,
    EnumDef,
    Example,
    Is,
    Kw,
    MemoryEffect,
    OpDef,
    Operand,
    OptionalGroup,
    Ref,
    Refs,
    Result,
    TypeConstraint,
    TypeOf,
    TypesOf,
    Violation,
    op,
)
from loom.ir import OpaqueType, ShapedType, StaticDim, TypeKind, Value

ASYNC_TOKEN = OpaqueType("kernel.async.token", "One started asynchronous transfer.")
ASYNC_GROUP = OpaqueType("kernel.async.group", "An ordered commit group of transfers.")
LDS_DESCRIPTOR = OpaqueType(
    "kernel.tensor.lds.descriptor", "An AMDGPU tensor-memory descriptor bundle."
)
TYPES = (ASYNC_TOKEN, ASYNC_GROUP, LDS_DESCRIPTOR)

DIRECTION = EnumDef("direction", ("global_to_workgroup", "workgroup_to_global"))
TOKEN_T = Is(ASYNC_TOKEN)
GROUP_T = Is(ASYNC_GROUP)
DESCRIPTOR_T = Is(LDS_DESCRIPTOR)
DGROUP = TypeConstraint(
    "vector<4xi32> or vector<8xi32>",
    lambda t: (
        isinstance(t, ShapedType)
        and t.kind is TypeKind.VECTOR
        and t.rank == 1
        and t.element_type.spelling == "i32"
    ),
)

_LOAD_SOURCES = ("global", "constant", "descriptor")
_LOAD_TEXT = "global, constant, or descriptor memory-space fact"
_STORE_DESTS = ("global", "descriptor")
_STORE_TEXT = "global or descriptor memory-space fact"
_WG_TEXT = "workgroup memory-space fact"
TRANSFERS: set[str] = set()
"""Names of the ops whose result is a transfer token (filled below)."""


def _type_problem(field: str, t: object, want: str) -> Violation:
    return Violation("TYPE/003", f"operand '{field}' has type {t}; expected a {want}", field)


def _space(ctx, op, field: str, allowed: tuple[str, ...], text: str) -> list[Violation]:  # noqa: ANN001
    vals = ctx.operand_values(op, field)
    if not vals:
        return []
    space = memory_space(ctx, vals[0])
    if space not in allowed:
        return [
            Violation(
                "TYPE/003",
                f"operand '{field}' has memory-space fact {space or 'unknown'}; expected a {text}",
                field,
            )
        ]
    return []


def _direction_rules(ctx, op, load: bool) -> list[Violation]:  # noqa: ANN001
    # like upstream, only the first side that breaks the direction's rule is reported
    if load:
        return _space(ctx, op, "source", _LOAD_SOURCES, _LOAD_TEXT) or _space(
            ctx, op, "dest", ("workgroup",), _WG_TEXT
        )
    return _space(ctx, op, "source", ("workgroup",), _WG_TEXT) or _space(
        ctx, op, "dest", _STORE_DESTS, _STORE_TEXT
    )


def _footprints(ctx, op) -> tuple[list[Violation], int | None, int | None]:  # noqa: ANN001
    out: list[Violation] = []
    sizes = []
    for field in ("source", "dest"):
        vals = ctx.operand_values(op, field)
        n = static_footprint(vals[0].type) if vals else None
        if vals and n is None:
            out.append(
                _type_problem(field, vals[0].type, "view with a static byte-addressable footprint")
            )
        sizes.append(n)
    return out, sizes[0], sizes[1]


def _token_uses(ctx, op) -> list[Violation]:  # noqa: ANN001
    if not op.results:
        return []
    tok = op.results[0]
    users = facts(ctx).users.get(tok.id, [])
    groups = [u for u in users if u.name == GROUP.name]
    if len(users) != 1 or len(groups) != 1:
        return [
            Violation(
                "DOMINANCE/009",
                f"transfer token 'copy' has {len(users)} uses; it needs exactly one "
                "kernel.async.group use",
                "token",
            )
        ]
    return []


def _verify_copy(op, ctx) -> list[Violation]:  # noqa: ANN001
    out, src, dst = _footprints(ctx, op)
    if src is not None and dst is not None and src != dst:
        out.append(
            _type_problem("dest", op.operands[1].type, "same static byte footprint as source")
        )
    load = op.attributes.get("direction") != "workgroup_to_global"
    out += _direction_rules(ctx, op, load)
    out += cache_policy(op, "load" if load else "store", required=True)
    return out + _token_uses(ctx, op)


def _verify_gather(op, ctx) -> list[Violation]:  # noqa: ANN001
    out: list[Violation] = []
    src_v = ctx.operand_values(op, "source")
    dst_v = ctx.operand_values(op, "dest")
    if src_v and dst_v:
        st, dt = src_v[0].type, dst_v[0].type
        src = static_footprint(st)
        if src is None:
            out.append(_type_problem("source", st, "view with a static byte-addressable footprint"))
        if isinstance(st, ShapedType) and isinstance(dt, ShapedType):
            if dt.rank != st.rank + 1:
                out.append(_type_problem("dest", dt, "view with one leading subgroup-lane axis"))
            else:
                slot = ShapedType(TypeKind.VIEW, dt.element_type, dt.dims[1:])
                n = static_footprint(slot)
                if n is None:
                    out.append(
                        _type_problem(
                            "dest", dt, "view with static byte-addressable trailing lane footprint"
                        )
                    )
                elif src is not None and n < src:
                    out.append(
                        _type_problem(
                            "dest", dt, "trailing lane byte footprint at least source footprint"
                        )
                    )
    out += _direction_rules(ctx, op, True)
    out += cache_policy(op, "load", required=True)
    return out + _token_uses(ctx, op)


def _verify_cluster_gather(op, ctx) -> list[Violation]:  # noqa: ANN001
    out, src, dst = _footprints(ctx, op)
    if src is not None and src not in (1, 4, 8, 16):
        out.append(
            _type_problem(
                "source", op.operands[0].type, "view with static 1, 4, 8, or 16 byte footprint"
            )
        )
    elif src is not None and dst is not None and src != dst:
        out.append(
            _type_problem("dest", op.operands[1].type, "same static byte footprint as source")
        )
    out += _direction_rules(ctx, op, True)
    out += cache_policy(op, "load", required=True)
    return out + _token_uses(ctx, op)


def _verify_tensor(load: bool):  # noqa: ANN202
    def check(op, ctx) -> list[Violation]:  # noqa: ANN001
        out: list[Violation] = []
        src_v = ctx.operand_values(op, "source")
        dst_v = ctx.operand_values(op, "dest")
        if src_v and dst_v:
            st, dt = src_v[0].type, dst_v[0].type
            if isinstance(st, ShapedType) and isinstance(dt, ShapedType):
                if not 1 <= st.rank <= 5:
                    out.append(_type_problem("source", st, "view rank in [1, 5]"))
                if dt.rank != st.rank:
                    out.append(_type_problem("dest", dt, "same rank as source"))
                if dt.element_type != st.element_type:
                    out.append(_type_problem("dest", dt, "same element type as source"))
                if st.element_type.byte_size not in (1, 2, 4, 8) or st.element_type.is_address:
                    out.append(
                        _type_problem("source", st, "view with 1, 2, 4, or 8 byte element type")
                    )
        out += _direction_rules(ctx, op, load)
        out += cache_policy(op, "load" if load else "store", required=True)
        return out + _token_uses(ctx, op)

    return check


def _cache() -> list[AttrDef]:
    return [
        AttrDef("cache_scope", AttrKind.ENUM, enum=CACHE_SCOPE),
        AttrDef("cache_temporal", AttrKind.ENUM, enum=CACHE_TEMPORAL),
    ]


def _transfer(
    name: str,
    doc: str,
    example: str,
    args: str,
    *,
    extra: tuple[tuple[str, object, str], ...] = (),
    direction: bool = False,
    verifier,  # noqa: ANN001
    using: str | None = None,
) -> OpDef:
    """``%t = NAME %src to %dst [using %x][, %pred] {attrs} : S to D[, X][, i1] -> token``."""
    operands = [Operand("source", VIEW), Operand("dest", VIEW)]
    fmt: list = [Ref("source"), Kw("to"), Ref("dest")]
    tail: list = [Kw(":"), TypeOf("source"), Kw("to"), TypeOf("dest")]
    for field, constraint, joiner in extra:
        operands.append(Operand(field, constraint))
        fmt += [Kw(joiner), Ref(field)]
        tail += [Kw(","), TypeOf(field)]
    attrs = _cache()
    if direction:
        attrs.append(AttrDef("direction", AttrKind.ENUM, enum=DIRECTION))
    TRANSFERS.add(name)
    return op(
        name,
        doc,
        operands=operands,
        results=[Result("token", TOKEN_T)],
        attrs=attrs,
        traits=[MemoryEffect(reads=True, writes=True)],
        format=[*fmt, AttrDict(), *tail, Kw("->"), TypeOf("token")],
        examples=[Example(example, args)],
        verifier=verifier,
    )


def _with_group(body: str, scratch: str = "view<16xi8>", store: bool = False) -> str:
    """The transfer ``body`` between a global launch argument and fresh workgroup scratch."""
    side = "%src" if store else "%dst"
    return (
        "%z = index.constant 0 : offset\n"
        "%n = index.constant 4096 : offset\n"
        "%s = buffer.alloca %n {base_alignment = 64, memory_space = workgroup} : buffer\n"
        f"{side} = buffer.view %s[%z] : buffer -> {scratch}\n"
        + body
        + "\n%g = kernel.async.group %t : kernel.async.token -> kernel.async.group"
        + "\nkernel.async.wait %g {newer_groups = 0} : kernel.async.group"
    )


_PREDICATE = ("predicate", I1_T, ",")
"""``, %p``: the predicate of a masked transfer (false: nothing is accessed)."""
_CLUSTER_MASK = ("cluster_mask", I32_T, "using")
"""``using %m``: the cluster workgroups a cluster gather delivers to."""
_DESCRIPTOR = ("descriptor", DESCRIPTOR_T, "using")
"""``using %d``: the LDS descriptor of a tensor transfer."""
_VIEWS = "%src: view<16xi8>"
_COPY_ATTRS = "{cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup}"
_LOAD_ATTRS = "{cache_scope = cu, cache_temporal = regular}"

COPY = _transfer(
    "kernel.async.copy",
    "Starts copying the bytes of the source view into the dest view (equal static footprints); "
    "they become visible at the wait of the token's group.",
    _with_group(
        f"%t = kernel.async.copy %src to %dst {_COPY_ATTRS} : view<16xi8> to view<16xi8>"
        " -> kernel.async.token"
    ),
    _VIEWS,
    direction=True,
    verifier=_verify_copy,
)
COPY_MASK = _transfer(
    "kernel.async.copy.mask",
    "kernel.async.copy under a predicate: when false nothing is accessed and the token is "
    "complete at once.",
    _with_group(
        f"%t = kernel.async.copy.mask %src to %dst, %p {_COPY_ATTRS}"
        " : view<16xi8> to view<16xi8>, i1 -> kernel.async.token"
    ),
    _VIEWS + ", %p: i1",
    extra=(_PREDICATE,),
    direction=True,
    verifier=_verify_copy,
)
GATHER = _transfer(
    "kernel.async.gather",
    "Subgroup collective: lane L's source bytes go to slot L of the dest tile (leading lane "
    "axis); visible at the wait.",
    _with_group(
        f"%t = kernel.async.gather %src to %dst {_LOAD_ATTRS}"
        " : view<4xi8> to view<64x4xi8> -> kernel.async.token",
        "view<64x4xi8>",
    ),
    "%src: view<4xi8>",
    verifier=_verify_gather,
)
GATHER_MASK = _transfer(
    "kernel.async.gather.mask",
    "kernel.async.gather under a per-lane predicate (false lanes copy nothing).",
    _with_group(
        f"%t = kernel.async.gather.mask %src to %dst, %p {_LOAD_ATTRS}"
        " : view<4xi8> to view<64x4xi8>, i1 -> kernel.async.token",
        "view<64x4xi8>",
    ),
    "%src: view<4xi8>, %p: i1",
    extra=(_PREDICATE,),
    verifier=_verify_gather,
)
CLUSTER_GATHER = _transfer(
    "kernel.async.cluster.gather",
    "One global read of 1, 4, 8 or 16 bytes delivered to the dest of every workgroup of the "
    "cluster named by the mask's bits.",
    _with_group(
        f"%t = kernel.async.cluster.gather %src to %dst using %m {_LOAD_ATTRS}"
        " : view<4xi8> to view<4xi8>, i32 -> kernel.async.token",
        "view<4xi8>",
    ),
    "%src: view<4xi8>, %m: i32",
    extra=(_CLUSTER_MASK,),
    verifier=_verify_cluster_gather,
)
CLUSTER_GATHER_MASK = _transfer(
    "kernel.async.cluster.gather.mask",
    "kernel.async.cluster.gather under a predicate.",
    _with_group(
        f"%t = kernel.async.cluster.gather.mask %src to %dst using %m, %p {_LOAD_ATTRS}"
        " : view<4xi8> to view<4xi8>, i32, i1 -> kernel.async.token",
        "view<4xi8>",
    ),
    "%src: view<4xi8>, %m: i32, %p: i1",
    extra=(_CLUSTER_MASK, _PREDICATE),
    verifier=_verify_cluster_gather,
)
TENSOR_LOAD = _transfer(
    "kernel.async.tensor.load.to.lds",
    "AMDGPU (gfx1250) tensor load of a global tile into workgroup memory, described by an LDS "
    "descriptor; not executable on the reference target.",
    _with_group(
        f"%t = kernel.async.tensor.load.to.lds %src to %dst using %d {_LOAD_ATTRS}"
        " : view<8x8xf32> to view<8x8xf32>, kernel.tensor.lds.descriptor -> kernel.async.token",
        "view<8x8xf32>",
    ),
    "%src: view<8x8xf32>, %d: kernel.tensor.lds.descriptor",
    extra=(_DESCRIPTOR,),
    verifier=_verify_tensor(True),
)
TENSOR_STORE = _transfer(
    "kernel.async.tensor.store.from.lds",
    "AMDGPU (gfx1250) tensor store of a workgroup-memory tile to global memory; not "
    "executable on the reference target.",
    _with_group(
        "%t = kernel.async.tensor.store.from.lds %src to %dst using %d"
        " {cache_scope = device, cache_temporal = non_temporal}"
        " : view<8x8xf32> to view<8x8xf32>, kernel.tensor.lds.descriptor -> kernel.async.token",
        "view<8x8xf32>",
        store=True,
    ),
    "%dst: view<8x8xf32>, %d: kernel.tensor.lds.descriptor",
    extra=(_DESCRIPTOR,),
    verifier=_verify_tensor(False),
)


def _verify_descriptor(op, ctx) -> list[Violation]:  # noqa: ANN001
    n = len(op.operands)
    if n not in (2, 4):
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'dgroups' count {n} must be two or four AMDGPU tensor dgroups",
                "dgroups",
            )
        ]
    for i, v in enumerate(op.operands):
        want = 8 if i == 1 else 4
        t = v.type
        if not (isinstance(t, ShapedType) and t.dims == (StaticDim(want),)):
            label = f"D{i} vector<{want}xi32>"
            return [
                Violation(
                    "TYPE/003", f"operand 'dgroups' has type {t}; expected {label}", "dgroups"
                )
            ]
    return []


DESCRIPTOR = op(
    "kernel.tensor.lds.descriptor",
    "Bundles two or four AMDGPU tensor dgroups (D1 is vector<8xi32>, the others vector<4xi32>) "
    "into a descriptor value; not executable on the reference target.",
    operands=[Operand("dgroups", DGROUP, variadic=True)],
    results=[Result("result", DESCRIPTOR_T)],
    format=[
        Clause("dgroups", Refs("dgroups")),
        Kw(":"),
        TypesOf("dgroups"),
        Kw("->"),
        TypeOf("result"),
    ],  # fmt: skip
    examples=[
        Example(
            "%d = kernel.tensor.lds.descriptor dgroups(%a, %b)"
            " : vector<4xi32>, vector<8xi32> -> kernel.tensor.lds.descriptor",
            "%a: vector<4xi32>, %b: vector<8xi32>",
        )
    ],
    verifier=_verify_descriptor,
)


def _verify_group(op, ctx) -> list[Violation]:  # noqa: ANN001
    out: list[Violation] = []
    f = facts(ctx)
    for v in op.operands:
        if not isinstance(v, Value) or v.type is not ASYNC_TOKEN:
            continue
        producer = f.producer.get(v.id)
        if producer is None or producer.name not in TRANSFERS:
            name = "<null>" if producer is None else producer.name
            out.append(
                Violation(
                    "DOMINANCE/010",
                    f"operand 'token' is defined by {name}; expected a kernel async "
                    "transfer result",
                    "tokens",
                )
            )
    if op.results and not f.users.get(op.results[0].id):
        out.append(
            Violation(
                "DOMINANCE/009",
                "result 'group' has 0 uses; it needs at least one wait or carried group use",
                "group",
            )
        )
    return out


GROUP = op(
    "kernel.async.group",
    "Commits the tokens, in program order, as one group; the group completes when all its "
    "transfers do.",
    operands=[Operand("tokens", TOKEN_T, variadic=True)],
    results=[Result("group", GROUP_T)],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[
        Refs("tokens"),
        OptionalGroup("tokens", Kw(":"), TypesOf("tokens")),
        Kw("->"),
        TypeOf("group"),
    ],
    examples=[
        Example(
            "%g = kernel.async.group -> kernel.async.group\n"
            "kernel.async.wait %g {newer_groups = 0} : kernel.async.group"
        )
    ],
    verifier=_verify_group,
)


def _verify_wait(op, ctx) -> list[Violation]:  # noqa: ANN001
    n = op.attributes.get("newer_groups")
    if isinstance(n, int) and not 0 <= n <= 65535:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'newer_groups' value {n} must be a nonnegative i16 wait count",
                "newer_groups",
            )
        ]
    if op.operands:
        producer = facts(ctx).producer.get(op.operands[0].id)
        if producer is not None and producer.name != GROUP.name:
            return [
                Violation(
                    "DOMINANCE/010",
                    f"operand 'group' is defined by {producer.name}; expected a "
                    "kernel.async.group result",
                    "group",
                )
            ]
    return []


WAIT = op(
    "kernel.async.wait",
    "Completes the group and every older group, leaving at most `newer_groups` younger "
    "groups in flight; their bytes are visible afterwards. Not a barrier.",
    operands=[Operand("group", GROUP_T)],
    attrs=[AttrDef("newer_groups", AttrKind.INT)],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[Ref("group"), AttrDict(), Kw(":"), TypeOf("group")],
    examples=[
        Example(
            "%g = kernel.async.group -> kernel.async.group\n"
            "kernel.async.wait %g {newer_groups = 0} : kernel.async.group"
        )
    ],
    verifier=_verify_wait,
)

OPS = (
    COPY,
    COPY_MASK,
    GATHER,
    GATHER_MASK,
    GROUP,
    WAIT,
    DESCRIPTOR,
    TENSOR_LOAD,
    TENSOR_STORE,
    CLUSTER_GATHER,
    CLUSTER_GATHER_MASK,
)
