"""target: target records (symbol-defining ops that describe where kernels run)."""

from loom.dialects._shapes import ABI, LINKAGE
from loom.dsl import (
    INDEX_T,
    AttrDef,
    AttrDict,
    AttrKind,
    EnumDef,
    Example,
    Kw,
    Pure,
    Result,
    Symbol,
    SymbolRef,
    TemplateParam,
    TypeOf,
    op,
)

_INT_OVERRIDES = (
    "default_pointer_bitwidth",
    "index_bitwidth",
    "offset_bitwidth",
    "max_workgroup_size_x",
    "max_workgroup_size_y",
    "max_workgroup_size_z",
    "max_flat_workgroup_size",
    "max_workgroup_storage_bytes",
    "subgroup_size",
    "max_grid_size_x",
    "max_grid_size_y",
    "max_grid_size_z",
    "max_flat_grid_size",
    "max_workgroup_count_x",
    "max_workgroup_count_y",
    "max_workgroup_count_z",
    "memory_space_generic",
    "memory_space_global",
    "memory_space_workgroup",
    "memory_space_constant",
    "memory_space_private",
    "memory_space_host",
    "memory_space_descriptor",
    "contract_feature_bits",
)

TARGET_GENERIC = op(
    "target.generic",
    "A target record for target-independent compilation; kernels name it with target(@...).",
    attrs=[
        AttrDef("kind", AttrKind.ENUM, enum=EnumDef("kind", ("reference",))),
        AttrDef("symbol", AttrKind.SYMBOL),
        AttrDef(
            "codegen_format",
            AttrKind.ENUM,
            optional=True,
            enum=EnumDef(
                "codegen_format", ("unknown", "llvmir", "spirv", "vm", "low_native", "wasm")
            ),
        ),
        AttrDef("artifact_format", AttrKind.STRING, optional=True),
        *(AttrDef(name, AttrKind.INT, optional=True) for name in _INT_OVERRIDES),
        AttrDef("abi", AttrKind.ENUM, optional=True, enum=ABI),
        AttrDef("export_symbol", AttrKind.STRING, optional=True),
        AttrDef("linkage", AttrKind.ENUM, optional=True, enum=LINKAGE),
        AttrDef("contract_set_key", AttrKind.STRING, optional=True),
    ],
    traits=[Symbol("symbol", kind="record")],
    format=[TemplateParam("kind"), SymbolRef("symbol"), AttrDict()],
    examples=[
        Example("target.generic<reference> @reference", top_level=True),
        Example("target.generic<reference> @wide {subgroup_size = 64}", top_level=True),
    ],
)

TARGET_DECL = op(
    "target.decl",
    "A target record declared here and defined by linking; satisfies target(@...) references.",
    attrs=[AttrDef("symbol", AttrKind.SYMBOL)],
    traits=[Symbol("symbol", kind="record")],
    format=[SymbolRef("symbol")],
    examples=[Example("target.decl @linked_later", top_level=True)],
)

SUBGROUP_SIZE = op(
    "target.subgroup.size",
    "The subgroup size of the selected target (the record's subgroup_size, else 32 on the "
    "reference target).",
    results=[Result("result", INDEX_T)],
    traits=[Pure()],
    format=[Kw(":"), TypeOf("result")],
    builder="subgroup_size",
    examples=[Example("%n = target.subgroup.size : index")],
)

OPS = (TARGET_GENERIC, TARGET_DECL, SUBGROUP_SIZE)
