"""Loom IR core: types, values, operations, blocks, regions, modules and locations."""

from loom.ir.attributes import DYNAMIC_INDEX, PREDICATE_ARITY, FloatLiteral, Predicate
from loom.ir.locations import (
    LOCATION_UNKNOWN,
    FileLocation,
    FusedLocation,
    Location,
    OpaqueLocation,
    TaggedLocation,
)
from loom.ir.module import Module
from loom.ir.operations import EMPTY_ATTRS, Block, Operation, Region
from loom.ir.type_text import type_to_text
from loom.ir.types import (
    BF16,
    BUFFER_TYPE,
    F16,
    F32,
    F64,
    I1,
    I8,
    I16,
    I32,
    I64,
    INDEX,
    OFFSET,
    SCALAR_TYPES,
    BufferType,
    DynamicDim,
    FunctionType,
    ScalarType,
    ScalarTypeKind,
    ShapedType,
    StaticDim,
    Type,
    TypeKind,
    vector_type,
    view_type,
)
from loom.ir.values import Value, ValueRef

__all__ = [
    "BF16", "BUFFER_TYPE", "DYNAMIC_INDEX", "EMPTY_ATTRS", "F16", "F32", "F64", "I1", "I8", "I16",
    "I32", "I64", "INDEX", "LOCATION_UNKNOWN", "OFFSET", "PREDICATE_ARITY", "SCALAR_TYPES",
    "Block", "BufferType", "DynamicDim", "FileLocation", "FloatLiteral", "FunctionType",
    "FusedLocation", "Location", "Module", "OpaqueLocation", "Operation", "Predicate", "Region",
    "ScalarType", "ScalarTypeKind", "ShapedType", "StaticDim", "TaggedLocation", "Type",
    "TypeKind", "Value", "ValueRef", "type_to_text", "vector_type", "view_type",
]
