"""kernel: dispatchable kernels, launch configuration, workitem coordinates, barriers,
subgroup/workgroup collectives, asynchronous transfers and host launch programs."""

from loom.dialects import _kernel_async as _async
from loom.dialects import _kernel_collectives as _collectives
from loom.dialects._memory import facts
from loom.dialects._shapes import (
    DIMENSION,
    LINKAGE,
    MEMORY_SPACE,
    ORDERING,
    RETAIN,
    RETAIN_FORMAT,
    SCOPE,
    SYNC_CLAUSE_FORMAT,
    SYNC_FORMAT,
    TARGET,
    TARGET_FORMAT,
    TARGET_USE,
    WHERE,
    WHERE_FORMAT,
)
from loom.dialects.encoding import is_dense_layout
from loom.dsl import (
    BUFFER_T,
    I1_T,
    INDEX_T,
    OFFSET_T,
    VALUE_TYPE,
    ArgSource,
    Attr,
    AttrDef,
    AttrKind,
    BlockArgs,
    Clause,
    ControlFlow,
    Convergent,
    Example,
    Glue,
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    Kw,
    MemoryEffect,
    NoAncestor,
    OpDef,
    Operand,
    OptionalGroup,
    Pure,
    Ref,
    Refs,
    RegionDef,
    RegionRef,
    Result,
    Subscript,
    Symbol,
    SymbolRef,
    SymbolUse,
    TemplateParam,
    Terminator,
    TypeOf,
    TypesOf,
    Uniformity,
    Violation,
    op,
)
from loom.ir import TypeKind


def _verify_linkage(op, ctx) -> list[Violation]:  # noqa: ANN001
    if "export_linkage" in op.attributes and "export_symbol" not in op.attributes:
        return [
            Violation(
                "STRUCTURE/014",
                "attribute 'export_linkage' requires 'export_symbol' (export is 0: it must be "
                "present when linkage is present)",
                "export_symbol",
            )
        ]
    return []


_PLACEMENT = [RETAIN_FORMAT, TARGET_FORMAT]
"""``retain target(@t)``: how every kernel symbol starts."""
_ENTRY_PREFIX = [
    *_PLACEMENT,
    OptionalGroup("export_symbol", Clause("export", Attr("export_symbol"))),
    OptionalGroup("export_linkage", Clause("linkage", Attr("export_linkage"))),
]
_KERNEL_TRAITS = [Symbol("callee", kind="kernel"), IsolatedFromAbove(), TARGET_USE]
"""A kernel symbol: named by ``callee``, isolated, built for a target record."""


def _entry_attrs() -> list[AttrDef]:
    return [
        RETAIN,
        TARGET,
        AttrDef("export_symbol", AttrKind.STRING, optional=True),
        AttrDef("export_linkage", AttrKind.ENUM, optional=True, enum=LINKAGE),
        AttrDef("callee", AttrKind.SYMBOL),
        WHERE,
    ]


KERNEL_DEF = op(
    "kernel.def",
    "A dispatchable kernel: a config region computing the launch grid, then the device body.",
    attrs=_entry_attrs(),
    regions=[
        RegionDef(
            "config",
            terminator="kernel.launch.config",
            arg_source=ArgSource.PAIRS,
            arg_keyword="config_args",
            side_effect_free=True,
            doc="Host-side launch computation (pure).",
        ),
        RegionDef(
            "body",
            terminator="kernel.return",
            arg_source=ArgSource.VALUES,
            arg_keyword="args",
            single_block=False,
            doc="Device body; entry args are the launch arguments (cfg branches join blocks).",
        ),
    ],
    traits=_KERNEL_TRAITS,
    format=[
        *_ENTRY_PREFIX,
        SymbolRef("callee"),
        BlockArgs("config"),
        RegionRef("config"),
        Kw("launch"),
        BlockArgs("body"),
        WHERE_FORMAT,
        RegionRef("body"),
    ],
    examples=[
        Example(
            "kernel.def @noop(%n: index) {\n"
            "  %one = index.constant 1 : index\n"
            "  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%one, %one, %one)"
            " : index\n"
            "} launch(%data: buffer) {\n"
            "  kernel.return\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_linkage,
    verifier_cacheable=True,
)

_GRID_FIELDS = (
    "workgroup_count_x",
    "workgroup_count_y",
    "workgroup_count_z",
    "workgroup_size_x",
    "workgroup_size_y",
    "workgroup_size_z",
)
_CLUSTER_FIELDS = (
    "workgroup_cluster_size_x",
    "workgroup_cluster_size_y",
    "workgroup_cluster_size_z",
)

LAUNCH_CONFIG = op(
    "kernel.launch.config",
    "Ends a kernel's config region with the grid size (in workgroups) and the workgroup size.",
    operands=[
        *(Operand(f, INDEX_T) for f in _GRID_FIELDS),
        *(Operand(f, INDEX_T, optional=True) for f in _CLUSTER_FIELDS),
        Operand("dynamic_workgroup_storage", OFFSET_T, optional=True),
    ],
    traits=[Terminator(), HasParent(("kernel.def",))],
    format=[
        Clause("workgroups", Refs(*_GRID_FIELDS[:3])),
        Clause("workgroup_size", Refs(*_GRID_FIELDS[3:])),
        OptionalGroup("workgroup_cluster_size_x", Clause("cluster_size", Refs(*_CLUSTER_FIELDS))),
        OptionalGroup(
            "dynamic_workgroup_storage",
            Clause("dynamic_workgroup_storage", Ref("dynamic_workgroup_storage")),
        ),
        Kw(":"),
        TypeOf("workgroup_count_x"),
    ],
    builder="config",
    examples=[
        Example(
            "kernel.def @grid() {\n"
            "  %c1 = index.constant 1 : index\n"
            "  %c64 = index.constant 64 : index\n"
            "  kernel.launch.config workgroups(%c64, %c1, %c1) workgroup_size(%c64, %c1, %c1)"
            " : index\n"
            "} launch() {\n"
            "  kernel.return\n"
            "}",
            top_level=True,
        )
    ],
)

RETURN = op(
    "kernel.return",
    "Ends a kernel body (or the region of kernel.exit).",
    traits=[Terminator(), HasParent(("kernel.def", "kernel.exit"))],
    examples=[
        Example(
            "kernel.def @empty() {\n"
            "  %c1 = index.constant 1 : index\n"
            "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
            " : index\n"
            "} launch() {\n"
            "  kernel.return\n"
            "}",
            top_level=True,
        )
    ],
)


def _coordinate(
    name: str, doc: str, example: str, builder: str | None = None, uniformity: str = "uniform"
):
    return op(
        name,
        doc,
        attrs=[AttrDef("dimension", AttrKind.ENUM, enum=DIMENSION)],
        results=[Result("result", INDEX_T)],
        traits=[Pure(), HasAncestor("kernel.def"), Uniformity(uniformity)],
        format=[TemplateParam("dimension"), Kw(":"), TypeOf("result")],
        builder=builder,
        examples=[Example(example)],
    )


WORKITEM_ID = _coordinate(
    "kernel.workitem.id",
    "The workitem's coordinate within its workgroup.",
    "%t = kernel.workitem.id<x> : index",
    uniformity="lane",
)
WORKGROUP_ID = _coordinate(
    "kernel.workgroup.id",
    "The workgroup's coordinate in the grid.",
    "%g = kernel.workgroup.id<y> : index",
)
WORKGROUP_SIZE = _coordinate(
    "kernel.workgroup.size",
    "The launch's workgroup size along a dimension.",
    "%s = kernel.workgroup.size<x> : index",
    builder="workgroup_size",
)
WORKGROUP_COUNT = _coordinate(
    "kernel.workgroup.count",
    "The launch's grid size in workgroups along a dimension.",
    "%n = kernel.workgroup.count<z> : index",
    builder="workgroup_count",
)
DISPATCH_ID = _coordinate(
    "kernel.workitem.dispatch.id",
    "The global coordinate: workgroup.id * workgroup.size + workitem.id.",
    "%i = kernel.workitem.dispatch.id<x> : index",
    uniformity="lane",
)


def _barrier_problem(attr: str, value: str, number: int, want: str) -> list[Violation]:
    return [
        Violation(
            "STRUCTURE/014", f"attribute '{attr}' value {value} ({number}) requires {want}", attr
        )
    ]


def _verify_barrier(op, ctx) -> list[Violation]:  # noqa: ANN001
    """Upstream's barrier rules (the verify corpus' version; older versions also let global
    memory through with acquire/release orderings); numbers are the enum ordinals upstream
    reports."""
    space = op.attributes.get("memory_space")
    scope = op.attributes.get("scope")
    ordering = op.attributes.get("ordering")
    if space != "workgroup":
        n = MEMORY_SPACE.cases.index(space) if space in MEMORY_SPACE.cases else -1
        return _barrier_problem("memory_space", space, n, "workgroup memory space")
    if ordering != "acq_rel":
        n = ORDERING.cases.index(ordering) if ordering in ORDERING.cases else -1
        return _barrier_problem("ordering", ordering, n, "acq_rel ordering")
    if scope not in ("subgroup", "workgroup"):
        n = SCOPE.cases.index(scope) if scope in SCOPE.cases else -1
        return _barrier_problem("scope", scope, n, "subgroup or workgroup scope")
    return []


BARRIER = op(
    "kernel.barrier",
    "Waits until every workitem of the scope arrives, fencing the memory space.",
    attrs=[
        AttrDef("memory_space", AttrKind.ENUM, enum=MEMORY_SPACE),
        AttrDef("scope", AttrKind.ENUM, enum=SCOPE),
        AttrDef("ordering", AttrKind.ENUM, enum=ORDERING),
    ],
    traits=[
        Convergent(scope_attr="scope"),
        MemoryEffect(reads=True, writes=True),
    ],
    # upstream's corpora print the dictionary form; the newer clause form also parses
    format=SYNC_FORMAT,
    legacy_formats=[SYNC_CLAUSE_FORMAT],
    examples=[Example("kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}")],
    verifier=_verify_barrier,
    verifier_cacheable=True,
)

EXIT = op(
    "kernel.exit",
    "If the condition holds, runs the optional region and ends the workitem.",
    operands=[Operand("condition", I1_T)],
    regions=[
        RegionDef("body", terminator="kernel.return", implicit_terminator=True, optional=True)
    ],
    traits=[HasParent(("kernel.def",)), ControlFlow("region_selector", ("condition",))],
    format=[
        Ref("condition"),
        Kw(":"),
        TypeOf("condition"),
        OptionalGroup("body", RegionRef("body")),
    ],
    examples=[Example("kernel.exit %done : i1", "%done: i1")],
)

ASSERT = op(
    "kernel.assert",
    "Traps with the optional message when the condition is false.",
    operands=[Operand("condition", I1_T)],
    attrs=[AttrDef("message", AttrKind.STRING, optional=True)],
    traits=[MemoryEffect(reads=True, writes=True)],
    format=[
        Ref("condition"),
        OptionalGroup("message", Attr("message")),
        Kw(":"),
        TypeOf("condition"),
    ],
    examples=[Example('kernel.assert %ok "index in range" : i1', "%ok: i1")],
)

CLUSTER_ID = _coordinate(
    "kernel.cluster.id",
    "The cluster's coordinate in the grid (workgroup.id = cluster.id * cluster.size + "
    "cluster.workgroup.id).",
    "%c = kernel.cluster.id<x> : index",
)
CLUSTER_WORKGROUP_ID = _coordinate(
    "kernel.cluster.workgroup.id",
    "The workgroup's coordinate inside its cluster (0 when the launch is not clustered).",
    "%w = kernel.cluster.workgroup.id<y> : index",
)
CLUSTER_SIZE = _coordinate(
    "kernel.cluster.size",
    "The cluster extent in workgroups (1 when the launch is not clustered).",
    "%s = kernel.cluster.size<y> : index",
)
CLUSTER_COUNT = _coordinate(
    "kernel.cluster.count",
    "How many clusters the grid has along a dimension (workgroup.count / cluster.size).",
    "%n = kernel.cluster.count<x> : index",
)
CLUSTER_FLAT_ID = op(
    "kernel.cluster.workgroup.flat_id",
    "The workgroup's row-major rank inside its cluster, x fastest.",
    results=[Result("result", INDEX_T)],
    traits=[Pure(), HasAncestor("kernel.def"), Uniformity("uniform")],
    format=[Kw(":"), TypeOf("result")],
    builder="cluster_workgroup_flat_id",
    examples=[Example("%r = kernel.cluster.workgroup.flat_id : index")],
)


def _verify_storage(op, ctx) -> list[Violation]:  # noqa: ANN001
    kernel = facts(ctx).arg_owner.get(op.operands[0].id) if op.operands else None
    for top in ctx.module.ops if kernel is None else ():
        if top.name == KERNEL_DEF.name and any(
            o is op for r in top.regions for b in r.blocks for o in b.ops
        ):
            kernel = top
    if kernel is not None and kernel.regions:
        config = kernel.regions[0].blocks[-1].ops[-1] if kernel.regions[0].blocks else None
        if config is not None and not ctx.operand_values(config, "dynamic_workgroup_storage"):
            return [
                Violation(
                    "STRUCTURE/056",
                    "needs an explicit dynamic_workgroup_storage launch clause, including zero "
                    '{constraint="an explicit dynamic_workgroup_storage launch clause, '
                    'including zero"}',
                )
            ]
    a = op.attributes.get("base_alignment")
    if isinstance(a, int) and (a <= 0 or a & (a - 1)):
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'base_alignment' value {a} must be a positive power-of-two byte "
                "alignment",
                "base_alignment",
            )
        ]
    return []


WORKGROUP_STORAGE = op(
    "kernel.workgroup.storage",
    "Borrows this workgroup's dynamic workgroup-memory tail (requested by the launch's "
    "dynamic_workgroup_storage clause) as a buffer of the given length.",
    operands=[Operand("byte_length", OFFSET_T)],
    attrs=[AttrDef("base_alignment", AttrKind.INT)],
    results=[Result("result", BUFFER_T)],
    traits=[HasParent(("kernel.def",)), MemoryEffect(reads=True, writes=True)],
    format=[
        Clause("align", Attr("base_alignment")),
        Ref("byte_length"),
        Kw(":"),
        TypeOf("result"),
    ],  # fmt: skip
    examples=[
        Example(
            "kernel.def @tail() {\n"
            "  %c1 = index.constant 1 : index\n"
            "  %b = index.constant 256 : offset\n"
            "  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1)"
            " dynamic_workgroup_storage(%b) : index\n"
            "} launch(%n: offset) {\n"
            "  %t = kernel.workgroup.storage align(16) %n : buffer\n"
            "  kernel.return\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_storage,
)

_SIGNATURE = dict(arg_source=ArgSource.PAIRS, single_block=True)

KERNEL_DECL = op(
    "kernel.decl",
    "A kernel defined elsewhere: its workload and launch signatures, for launching it.",
    attrs=_entry_attrs(),
    regions=[
        RegionDef("workload", arg_keyword="workload_args", **_SIGNATURE),
        RegionDef("launch", arg_keyword="launch_args", **_SIGNATURE),
    ],
    traits=_KERNEL_TRAITS,
    format=[
        *_ENTRY_PREFIX,
        SymbolRef("callee"),
        BlockArgs("workload"),
        Kw("launch"),
        BlockArgs("launch"),
        WHERE_FORMAT,
    ],
    builder="decl",
    examples=[
        Example("kernel.decl @scale(%n: index) launch(%n: index, %data: buffer)", top_level=True)
    ],
    verifier=_verify_linkage,
)

ENTRY_DECL = op(
    "kernel.entry.decl",
    "An executable entry point defined elsewhere (no workload or config): dispatch it.",
    attrs=[RETAIN, TARGET, AttrDef("callee", AttrKind.SYMBOL)],
    regions=[RegionDef("launch", arg_keyword="launch_args", **_SIGNATURE)],
    traits=_KERNEL_TRAITS,
    format=[
        *_PLACEMENT,
        SymbolRef("callee"),
        BlockArgs("launch"),
    ],
    examples=[Example("kernel.entry.decl @entry(%out: buffer)", top_level=True)],
)

_HOST_LAUNCH_TRAITS = [
    NoAncestor("kernel.def"),
    SymbolUse("callee", ("kernel",)),
    MemoryEffect(reads=True, writes=True),
]
"""A launch from host code of the kernel symbol ``callee``, complete before the next op."""
_LAUNCH_ARGUMENTS = Operand("arguments", VALUE_TYPE, variadic=True)
_ARGUMENTS_FORMAT = [Glue(), Kw("("), Refs("arguments"), Kw(")")]
"""``(%a, %b)`` right after the callee and its workloads: the kernel's launch arguments."""
_ARGUMENT_TYPES_FORMAT = [Kw("("), TypesOf("arguments"), Kw(")")]
"""``(T, U)``: the types of the launch arguments."""
_HOST_EXAMPLE = (
    "kernel.decl @fill(%n: index) launch(%n: index, %out: buffer)\n\n"
    "func.def @host(%n: index, %out: buffer) {\n"
    "  {body}\n"
    "  func.return\n"
    "}"
)


def _launch_signature(op, ctx, callee_kinds: tuple[str, ...], entry: bool) -> list[Violation]:  # noqa: ANN001
    target = ctx.symbol(op.attributes.get("callee"))
    if target is None:
        return []
    if target.name not in callee_kinds:
        return [Violation("SYMBOL/003", f"callee is a '{target.name}'; expected kernel", "callee")]
    regions = {
        "kernel.def": ("config", "body"),
        "kernel.decl": ("workload", "launch"),
        "kernel.entry.decl": (None, "launch"),
    }[target.name]
    out: list[Violation] = []
    groups = (("workloads", regions[0], "kernel workload"), ("arguments", regions[1],
              "kernel entry ABI argument" if entry else "kernel ABI argument"))  # fmt: skip
    for field, region_name, what in groups:
        if region_name is None or (entry and field == "workloads"):
            continue
        region = ctx.region(target, region_name)
        params = region.blocks[0].args if region is not None and region.blocks else ()
        vals = ctx.operand_values(op, field)
        if len(vals) != len(params):
            out.append(
                Violation(
                    "STRUCTURE/013",
                    f"'{field[:-1]}' count {len(vals)} differs from the {what} count {len(params)}",
                    field,
                )
            )
            continue
        for i, (v, p) in enumerate(zip(vals, params)):
            # A buffer parameter binds a view's storage, or a check case's tensor storage.
            if v.type != p.type and not (
                p.type is BUFFER_T.fixed
                and getattr(v.type, "kind", None) in (TypeKind.VIEW, TypeKind.TENSOR)
            ):
                out.append(
                    Violation(
                        "TYPE/001",
                        f"'{field[:-1]} {i}' has type {v.type} but {what} {i} is {p.type}",
                        field,
                    )
                )
    return out


def _verify_launch(op, ctx) -> list[Violation]:  # noqa: ANN001
    return _launch_signature(op, ctx, ("kernel.def", "kernel.decl"), False)


LAUNCH = op(
    "kernel.launch",
    "From host code: runs a kernel's config on the workloads, then its body over the grid "
    "with the arguments; complete before the next op.",
    operands=[
        Operand("workloads", VALUE_TYPE, variadic=True),
        _LAUNCH_ARGUMENTS,
    ],
    attrs=[AttrDef("callee", AttrKind.SYMBOL)],
    traits=_HOST_LAUNCH_TRAITS,
    format=[
        SymbolRef("callee"),
        OptionalGroup("workloads", Subscript("workloads")),
        *_ARGUMENTS_FORMAT,
        Kw(":"),
        OptionalGroup("workloads", Kw("["), TypesOf("workloads"), Kw("]"), Glue()),
        *_ARGUMENT_TYPES_FORMAT,
    ],
    examples=[
        Example(
            _HOST_EXAMPLE.replace(
                "{body}", "kernel.launch @fill[%n](%n, %out) : [index](index, buffer)"
            ),
            top_level=True,
        )
    ],
    verifier=_verify_launch,
)


def _verify_dispatch(op, ctx) -> list[Violation]:  # noqa: ANN001
    counts = ctx.operand_values(op, "workgroup_counts")
    sizes = ctx.operand_values(op, "workgroup_size")
    out: list[Violation] = []
    if not 1 <= len(counts) <= 3:
        out.append(
            Violation(
                "STRUCTURE/014",
                f"workgroup count operand count {len(counts)} must be one to three",
                "workgroup_counts",
            )
        )
    else:
        for v in counts:
            t = v.type
            ok = t is INDEX_T.fixed or (
                len(counts) == 1
                and getattr(t, "kind", None) is TypeKind.VIEW
                and t.static_shape == (3,)
                and t.element_type.spelling == "i32"
                and is_dense_layout(t, ctx)
            )
            if not ok:
                out.append(
                    Violation(
                        "TYPE/003",
                        f"operand 'workgroup_counts' has type {t}; expected index or dense "
                        "view<3xi32>",
                        "workgroup_counts",
                    )
                )
                break
    if len(sizes) not in (0, 3):
        out.append(
            Violation(
                "STRUCTURE/014",
                f"workgroup size operand count {len(sizes)} must be zero or three",
                "workgroup_size",
            )
        )
    return out + _launch_signature(op, ctx, ("kernel.def", "kernel.entry.decl"), True)


DISPATCH = op(
    "kernel.dispatch",
    "From host code: runs an entry point over explicit workgroup counts (1-3 index values or "
    "one view<3xi32> read at dispatch time), optionally with a workgroup size.",
    operands=[
        Operand("workgroup_counts", VALUE_TYPE, variadic=True),
        _LAUNCH_ARGUMENTS,
        Operand("workgroup_size", INDEX_T, variadic=True),
    ],
    attrs=[AttrDef("callee", AttrKind.SYMBOL)],
    traits=_HOST_LAUNCH_TRAITS,
    format=[
        SymbolRef("callee"),
        Subscript("workgroup_counts"),
        *_ARGUMENTS_FORMAT,
        OptionalGroup("workgroup_size", Clause("workgroup_size", Refs("workgroup_size"))),
        Kw(":"),
        Kw("["),
        TypesOf("workgroup_counts"),
        Kw("]"),
        Glue(),
        *_ARGUMENT_TYPES_FORMAT,
    ],
    examples=[
        Example(
            "kernel.entry.decl @fill(%n: index, %out: buffer)\n\n"
            "func.def @host(%n: index, %out: buffer) {\n"
            "  kernel.dispatch @fill[%n](%n, %out) : [index](index, buffer)\n"
            "  func.return\n"
            "}",
            top_level=True,
        )
    ],
    verifier=_verify_dispatch,
)

_SCHEDULES = ("kernel.launch.serial", "kernel.launch.concurrent")

LAUNCH_YIELD = op(
    "kernel.launch.yield",
    "Ends a launch schedule region (implicit, never printed).",
    traits=[Terminator(), HasParent(_SCHEDULES)],
    builder="yield_",
    examples=[
        Example(
            "func.def @host(%n: index, %out: buffer) {\n"
            "  kernel.launch.serial {\n"
            "  }\n"
            "  func.return\n"
            "}",
            top_level=True,
        )
    ],
)


_SCHEDULE_CHILDREN = ("kernel.launch", "kernel.dispatch", *_SCHEDULES, "kernel.launch.yield")


def _verify_schedule(op, ctx) -> list[Violation]:  # noqa: ANN001
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                if child.name not in _SCHEDULE_CHILDREN:
                    return [
                        Violation(
                            "STRUCTURE/029",
                            f"holds '{child.name}': the direct children of a kernel launch "
                            "schedule are launches, dispatches and schedules",
                        )
                    ]
    return []


def _schedule(name: str, doc: str) -> OpDef:
    return op(
        name,
        doc,
        verifier=_verify_schedule,
        regions=[RegionDef("body", terminator="kernel.launch.yield", implicit_terminator=True)],
        traits=[NoAncestor("kernel.def"), MemoryEffect(reads=True, writes=True)],
        format=[RegionRef("body")],
        examples=[
            Example(
                _HOST_EXAMPLE.replace(
                    "{body}",
                    f"{name} {{\n"
                    "    kernel.launch @fill[%n](%n, %out) : [index](index, buffer)\n"
                    "    kernel.launch @fill[%n](%n, %out) : [index](index, buffer)\n"
                    "  }",
                ),
                top_level=True,
            )
        ],
    )


LAUNCH_SERIAL = _schedule(
    "kernel.launch.serial", "Runs the launches of its region one after another."
)
LAUNCH_CONCURRENT = _schedule(
    "kernel.launch.concurrent",
    "Runs the launches of its region with no mutual ordering; all are joined at the end.",
)

OPS = (
    KERNEL_DEF,
    LAUNCH_CONFIG,
    RETURN,
    WORKITEM_ID,
    WORKGROUP_ID,
    WORKGROUP_SIZE,
    WORKGROUP_COUNT,
    DISPATCH_ID,
    BARRIER,
    EXIT,
    ASSERT,
    *_async.OPS,
    *_collectives.OPS,
    CLUSTER_ID,
    CLUSTER_WORKGROUP_ID,
    CLUSTER_FLAT_ID,
    CLUSTER_SIZE,
    CLUSTER_COUNT,
    KERNEL_DECL,
    ENTRY_DECL,
    LAUNCH,
    DISPATCH,
    LAUNCH_YIELD,
    LAUNCH_SERIAL,
    LAUNCH_CONCURRENT,
    WORKGROUP_STORAGE,
)
TYPES = _async.TYPES
"""The dialect's parameterless types."""
