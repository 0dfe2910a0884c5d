"""vector: register vectors are not modelled (the interpreter holds scalar lane values)."""

from __future__ import annotations

from loom.dialects.vector import OPS
from loom.interp.semantics import semantics
from loom.interp.semantics._util import not_executable

semantics(*(d.name for d in OPS))(
    not_executable("the interpreter holds scalar lane values only (vectors are not modelled)")
)
