"""kernel: dispatchable kernels, launch configuration, workitem coordinates and barriers."""

from loom.dialects._shapes import DIMENSION, MEMORY_SPACE, ORDERING, SCOPE
from loom.dsl import (
    I1_T,
    INDEX_T,
    ArgSource,
    Attr,
    AttrDef,
    AttrDict,
    AttrKind,
    BlockArgs,
    Clause,
    ControlFlow,
    Convergent,
    EnumDef,
    Example,
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    Kw,
    MemoryEffect,
    Operand,
    OptionalGroup,
    PredicateList,
    Pure,
    Ref,
    Refs,
    RegionDef,
    RegionRef,
    RequiresAttr,
    Result,
    Symbol,
    SymbolRef,
    SymbolUse,
    TemplateParam,
    Terminator,
    TypeOf,
    Uniformity,
    Violation,
    op,
)

KERNEL_DEF = op(
    "kernel.def",
    "A dispatchable kernel: a config region computing the launch grid, then the device body.",
    attrs=[
        AttrDef("retain", AttrKind.UNIT, optional=True),
        AttrDef("target", AttrKind.SYMBOL, optional=True),
        AttrDef("export_symbol", AttrKind.STRING, optional=True),
        AttrDef(
            "export_linkage",
            AttrKind.ENUM,
            optional=True,
            enum=EnumDef("linkage", ("default", "dso_local")),
        ),
        AttrDef("callee", AttrKind.SYMBOL),
        AttrDef("predicates", AttrKind.PREDICATES, optional=True),
    ],
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
    traits=[
        Symbol("callee", kind="kernel"),
        IsolatedFromAbove(),
        SymbolUse("target", ("record",)),
        RequiresAttr("export_linkage", "export_symbol"),
    ],
    format=[
        OptionalGroup("retain", Kw("retain")),
        OptionalGroup("target", Clause("target", SymbolRef("target"))),
        OptionalGroup("export_symbol", Clause("export", Attr("export_symbol"))),
        OptionalGroup("export_linkage", Clause("linkage", Attr("export_linkage"))),
        SymbolRef("callee"),
        BlockArgs("config"),
        RegionRef("config"),
        Kw("launch"),
        BlockArgs("body"),
        OptionalGroup("predicates", Kw("where"), PredicateList("predicates")),
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
    ],
    traits=[Terminator(), HasParent(("kernel.def",))],
    format=[
        Clause("workgroups", Refs(*_GRID_FIELDS[:3])),
        Clause("workgroup_size", Refs(*_GRID_FIELDS[3:])),
        OptionalGroup("workgroup_cluster_size_x", Clause("cluster_size", Refs(*_CLUSTER_FIELDS))),
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


def _verify_barrier(op, ctx) -> list[Violation]:  # noqa: ANN001
    space = op.attributes.get("memory_space")
    scope = op.attributes.get("scope")
    ordering = op.attributes.get("ordering")
    if space == "workgroup":
        if ordering != "acq_rel":
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'ordering' value {ordering} must be "
                    "acq_rel for a workgroup-memory barrier",
                    "ordering",
                )
            ]
        if scope not in ("subgroup", "workgroup"):
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'scope' value {scope} must be subgroup"
                    " or workgroup for a workgroup-memory barrier",
                    "scope",
                )
            ]
    elif space == "global":
        if scope != "workgroup":
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'scope' value {scope} must be "
                    "workgroup for a global-memory barrier",
                    "scope",
                )
            ]
        if ordering not in ("acquire", "release", "acq_rel"):
            return [
                Violation(
                    "STRUCTURE/014",
                    f"attribute 'ordering' value {ordering} must be "
                    "acquire, release or acq_rel for a global-memory barrier",
                    "ordering",
                )
            ]
    else:
        return [
            Violation(
                "STRUCTURE/014",
                f"attribute 'memory_space' value {space} must be workgroup or global",
                "memory_space",
            )
        ]
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
        HasAncestor("kernel.def"),
        MemoryEffect(reads=True, writes=True),
    ],
    format=[
        TemplateParam("memory_space"),
        Clause("scope", Attr("scope")),
        Clause("ordering", Attr("ordering")),
    ],
    legacy_formats=[[TemplateParam("memory_space"), AttrDict()]],
    examples=[Example("kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)")],
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
)
