"""kernel: subgroup queries and subgroup/workgroup collectives (convergent, kernel-only)."""

from __future__ import annotations

from loom.dialects._memory import COMBINING_KIND
from loom.dsl import (
    I1_T,
    I32_T,
    INDEX_T,
    AttrDef,
    AttrDict,
    AttrKind,
    Convergent,
    EnumDef,
    Example,
    HasAncestor,
    Kw,
    OpDef,
    Operand,
    Pure,
    Ref,
    Result,
    SameType,
    TemplateParam,
    TypeConstraint,
    TypeOf,
    Uniformity,
    Violation,
    op,
)
from loom.ir import ScalarType, ShapedType, TypeKind

SHUFFLE_MODE = EnumDef("mode", ("xor", "up", "down", "index"))
SCAN_MODE = EnumDef("mode", ("inclusive", "exclusive"))
SCAN_DIRECTION = EnumDef("direction", ("forward", "reverse"))

_KERNEL = "kernel.def"
_U32_MAX = 2**32 - 1

COLLECTIVE_VALUE = TypeConstraint(
    "scalar or rank-1 vector",
    lambda t: (
        isinstance(t, ScalarType)
        or (isinstance(t, ShapedType) and t.kind is TypeKind.VECTOR and t.rank == 1)
    ),
)
MASK_INT = TypeConstraint(
    "i32 or i64", lambda t: isinstance(t, ScalarType) and t.spelling in ("i32", "i64")
)
LANE_INT = TypeConstraint(
    "an i32 integer", lambda t: isinstance(t, ScalarType) and t.spelling == "i32"
)
ANY_SCALAR = TypeConstraint("a scalar type", lambda t: isinstance(t, ScalarType))


def _element(t: object) -> ScalarType | None:
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, ShapedType):
        return t.element_type
    return None


def combining_kind_rule(op, ctx) -> list[Violation]:  # noqa: ANN001
    """Integer kinds (``...i``) need integer elements, float kinds (``...f``) float ones."""
    kind = op.attributes.get("kind")
    if not op.operands or not isinstance(kind, str):
        return []
    value = op.operands[0].type
    elem = _element(value)
    if elem is None or not COLLECTIVE_VALUE(value):
        return []
    if kind.endswith("f") and not elem.is_float:
        return [
            Violation(
                "TYPE/003",
                f"operand 'value' has type {value}; kind {kind} needs a "
                "floating-point element type for combining kind",
                "value",
            )
        ]
    if kind.endswith("i") and not (elem.is_integer or elem.is_address):
        return [
            Violation(
                "TYPE/003",
                f"operand 'value' has type {value}; kind {kind} needs an "
                "integer element type for combining kind",
                "value",
            )
        ]
    return []


def _cluster_rule(op, ctx) -> list[Violation]:  # noqa: ANN001
    attrs = op.attributes
    if "cluster_stride" in attrs and "cluster_size" not in attrs:
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'cluster_size' (0) must be present when cluster_stride is present",
                "cluster_size",
            )
        ]
    for name in ("cluster_size", "cluster_stride"):
        v = attrs.get(name)
        if isinstance(v, int) and not 0 < v <= _U32_MAX:
            return [
                Violation(
                    "STRUCTURE/014", f"attribute '{name}' value {v} must be a positive u32", name
                )
            ]
    return []


def _reduce_rules(op, ctx) -> list[Violation]:  # noqa: ANN001
    return combining_kind_rule(op, ctx) or _cluster_rule(op, ctx)


def _query(name: str, doc: str, example: str, uniformity: str) -> OpDef:
    return op(
        name,
        doc,
        results=[Result("result", INDEX_T)],
        traits=[Pure(), HasAncestor(_KERNEL), Uniformity(uniformity)],
        format=[Kw(":"), TypeOf("result")],
        examples=[Example(example)],
    )


SUBGROUP_ID = _query(
    "kernel.subgroup.id",
    "The subgroup's index within its workgroup (flat workitem id divided by the width).",
    "%sg = kernel.subgroup.id : index",
    "subgroup",
)
SUBGROUP_COUNT = _query(
    "kernel.subgroup.count",
    "How many subgroups the workgroup has (the last one may be partial).",
    "%n = kernel.subgroup.count : index",
    "uniform",
)
SUBGROUP_SIZE = _query(
    "kernel.subgroup.size",
    "The subgroup width of the target, inactive lanes included.",
    "%w = kernel.subgroup.size : index",
    "uniform",
)
LANE_ID = _query(
    "kernel.subgroup.lane.id",
    "The workitem's lane within its subgroup (flat workitem id modulo the width).",
    "%lane = kernel.subgroup.lane.id : index",
    "lane",
)

_CONVERGENT = [Convergent(), HasAncestor(_KERNEL)]


def _value_traits(level: str) -> list:
    """A convergent op whose result has the type of its ``value``, uniform at ``level``."""
    return [*_CONVERGENT, SameType(("value", "result")), Uniformity(level)]


SHUFFLE = op(
    "kernel.subgroup.shuffle",
    "Reads the value of another lane of the subgroup (xor, up, down or index addressing "
    "within segments of `width` lanes); `valid` is false when that lane is out of range.",
    operands=[
        Operand("value", COLLECTIVE_VALUE),
        Operand("offset", I32_T),
        Operand("width", I32_T),
    ],
    results=[Result("result"), Result("valid", I1_T)],
    attrs=[AttrDef("mode", AttrKind.ENUM, enum=SHUFFLE_MODE)],
    traits=_value_traits("lane"),
    format=[
        TemplateParam("mode"),
        Ref("value"),
        Kw(","),
        Ref("offset"),
        Kw(","),
        Ref("width"),
        Kw(":"),
        TypeOf("result"),
        Kw(","),
        TypeOf("offset"),
        Kw(","),
        TypeOf("width"),
    ],
    examples=[
        Example(
            "%r, %ok = kernel.subgroup.shuffle<xor> %v, %off, %w : f32, i32, i32",
            "%v: f32, %off: i32, %w: i32",
        )
    ],
)

BROADCAST = op(
    "kernel.subgroup.broadcast",
    "Every lane receives the value held by lane `lane` of the subgroup.",
    operands=[Operand("value", COLLECTIVE_VALUE), Operand("lane", LANE_INT)],
    results=[Result("result")],
    traits=_value_traits("subgroup"),
    format=[
        Ref("value"),
        Kw("from"),
        Ref("lane"),
        Kw(":"),
        TypeOf("result"),
        Kw(","),
        TypeOf("lane"),
    ],  # fmt: skip
    examples=[Example("%r = kernel.subgroup.broadcast %v from %l : f32, i32", "%v: f32, %l: i32")],
)

BROADCAST_FIRST = op(
    "kernel.subgroup.broadcast.first",
    "Every lane receives the value of the lowest active lane of the subgroup.",
    operands=[Operand("value", COLLECTIVE_VALUE)],
    results=[Result("result")],
    traits=_value_traits("subgroup"),
    format=[Ref("value"), Kw(":"), TypeOf("result")],
    examples=[Example("%r = kernel.subgroup.broadcast.first %v : f32", "%v: f32")],
)

_CLUSTER = [
    AttrDef("cluster_size", AttrKind.INT, optional=True),
    AttrDef("cluster_stride", AttrKind.INT, optional=True),
]


def _combining(
    name: str, doc: str, example: str, level: str, clusters: bool, extra: tuple = ()
) -> OpDef:
    """``%r = NAME<kind> %v {attrs} : T``: combines the value across the scope by ``kind`` (over
    lane clusters when ``clusters``); ``extra`` attributes follow."""
    return op(
        name,
        doc,
        operands=[Operand("value", COLLECTIVE_VALUE)],
        results=[Result("result")],
        attrs=[
            AttrDef("kind", AttrKind.ENUM, enum=COMBINING_KIND),
            *(_CLUSTER if clusters else ()),
            *extra,
        ],
        traits=_value_traits(level),
        format=[TemplateParam("kind"), Ref("value"), AttrDict(), Kw(":"), TypeOf("result")],
        examples=[Example(example, "%v: f32")],
        verifier=_reduce_rules if clusters else combining_kind_rule,
        verifier_cacheable=True,
    )


def _reduce(name: str, doc: str, example: str, level: str, clusters: bool) -> OpDef:
    return _combining(name, doc, example, level, clusters)


_SCAN_ATTRS = (
    AttrDef("direction", AttrKind.ENUM, enum=SCAN_DIRECTION),
    AttrDef("mode", AttrKind.ENUM, enum=SCAN_MODE),
)


def _scan(name: str, doc: str, example: str, clusters: bool) -> OpDef:
    return _combining(name, doc, example, "lane", clusters, _SCAN_ATTRS)


SUBGROUP_REDUCE = _reduce(
    "kernel.subgroup.reduce",
    "Combines the value over the active lanes of the subgroup (or of each lane cluster); "
    "every lane receives the result.",
    "%s = kernel.subgroup.reduce<addf> %v : f32",
    "subgroup",
    True,
)
SUBGROUP_SCAN = _scan(
    "kernel.subgroup.scan",
    "Prefix-combines the value over the active lanes in lane order (reverse: from the "
    "highest lane); exclusive scans leave out the lane's own value.",
    "%p = kernel.subgroup.scan<addf> %v {direction = forward, mode = inclusive} : f32",
    True,
)
WORKGROUP_REDUCE = _reduce(
    "kernel.workgroup.reduce",
    "Combines the value over the workgroup's workitems; every workitem receives the result.",
    "%s = kernel.workgroup.reduce<maxnumf> %v : f32",
    "uniform",
    False,
)
WORKGROUP_SCAN = _scan(
    "kernel.workgroup.scan",
    "Prefix-combines the value over the workgroup in flat workitem order.",
    "%p = kernel.workgroup.scan<addf> %v {direction = reverse, mode = exclusive} : f32",
    False,
)


def _vote(name: str, doc: str, example: str, level: str, result=I1_T, result_name="result"):  # noqa: ANN001, ANN202
    fixed = result is I1_T
    return op(
        name,
        doc,
        operands=[Operand("predicate", I1_T)],
        results=[Result(result_name, result)],
        traits=[*_CONVERGENT, Uniformity(level)],
        format=[Ref("predicate"), Kw(":"), TypeOf("predicate")]
        + ([] if fixed else [Kw("->"), TypeOf(result_name)]),
        examples=[Example(example, "%p: i1")],
    )


SUBGROUP_ANY = _vote(
    "kernel.subgroup.vote.any",
    "True on every lane when the predicate holds on some active lane of the subgroup.",
    "%a = kernel.subgroup.vote.any %p : i1",
    "subgroup",
)
SUBGROUP_ALL = _vote(
    "kernel.subgroup.vote.all",
    "True on every lane when the predicate holds on every active lane of the subgroup.",
    "%a = kernel.subgroup.vote.all %p : i1",
    "subgroup",
)
BALLOT = _vote(
    "kernel.subgroup.vote.ballot",
    "A mask whose bit i is set when lane i is active and its predicate holds.",
    "%m = kernel.subgroup.vote.ballot %p : i1 -> i64",
    "subgroup",
    MASK_INT,
    "mask",
)
WORKGROUP_ANY = _vote(
    "kernel.workgroup.vote.any",
    "True on every workitem when the predicate holds on some workitem of the workgroup.",
    "%a = kernel.workgroup.vote.any %p : i1",
    "uniform",
)
WORKGROUP_ALL = _vote(
    "kernel.workgroup.vote.all",
    "True on every workitem when the predicate holds on every workitem of the workgroup.",
    "%a = kernel.workgroup.vote.all %p : i1",
    "uniform",
)
WORKGROUP_COUNT_VOTE = _vote(
    "kernel.workgroup.vote.count",
    "How many workitems of the workgroup have the predicate true.",
    "%n = kernel.workgroup.vote.count %p : i1 -> i32",
    "uniform",
    MASK_INT,
)

ACTIVE_MASK = op(
    "kernel.subgroup.active.mask",
    "A mask with one bit set per active lane of the subgroup.",
    results=[Result("mask", MASK_INT)],
    traits=[*_CONVERGENT, Uniformity("subgroup")],
    format=[Kw(":"), TypeOf("mask")],
    examples=[Example("%m = kernel.subgroup.active.mask : i64")],
)

MATCH_ANY = op(
    "kernel.subgroup.match.any",
    "Per lane, the mask of active lanes whose value equals this lane's value.",
    operands=[Operand("value", ANY_SCALAR)],
    results=[Result("mask", MASK_INT)],
    traits=[*_CONVERGENT, Uniformity("lane")],
    format=[Ref("value"), Kw(":"), TypeOf("value"), Kw("->"), TypeOf("mask")],
    examples=[Example("%m = kernel.subgroup.match.any %v : i32 -> i64", "%v: i32")],
)

MATCH_ALL = op(
    "kernel.subgroup.match.all",
    "Whether every active lane holds the same value, with the mask of active lanes when "
    "they do (else 0).",
    operands=[Operand("value", ANY_SCALAR)],
    results=[Result("mask", MASK_INT), Result("all_equal", I1_T)],
    traits=[*_CONVERGENT, Uniformity("subgroup")],
    format=[
        Ref("value"),
        Kw(":"),
        TypeOf("value"),
        Kw("->"),
        TypeOf("mask"),
        Kw(","),
        TypeOf("all_equal"),
    ],
    examples=[Example("%m, %same = kernel.subgroup.match.all %v : i32 -> i64, i1", "%v: i32")],
)

OPS = (
    SUBGROUP_ID,
    SUBGROUP_COUNT,
    SUBGROUP_SIZE,
    LANE_ID,
    SHUFFLE,
    BROADCAST,
    BROADCAST_FIRST,
    SUBGROUP_REDUCE,
    SUBGROUP_SCAN,
    SUBGROUP_ANY,
    SUBGROUP_ALL,
    BALLOT,
    ACTIVE_MASK,
    MATCH_ANY,
    MATCH_ALL,
    WORKGROUP_REDUCE,
    WORKGROUP_SCAN,
    WORKGROUP_ANY,
    WORKGROUP_ALL,
    WORKGROUP_COUNT_VOTE,
)
