"""Compile a kernel (and the functions it calls) once into flat step lists.

Every SSA value of a function gets a slot in a per-invocation environment list; a region becomes
``(entry-arg slots, [Step, ...])``. Steps hold the semantics function, operand and result slots,
the op (for diagnostics) and precomputed field positions, so the engines do per-op Python work
once per op, not per lane.
"""

from __future__ import annotations

from typing import Any

from loom.dsl import Declaration, OpDef, Pure, Uniformity
from loom.errors import LoomRuntimeError
from loom.interp.semantics import AFFINE_RULES, LAZY_OPERANDS, SEMANTICS, Control
from loom.ir import Block, Module, Operation, Region, Value
from loom.opview import operand_groups
from loom.registry import OpRegistry, as_registry

MAX_DEPTH = 96
"""Deepest nesting of regions and ``func.call`` the engines run (a call cycle ends here; the
grid engine runs nested regions by Python recursion, a few frames per level)."""


class Step:
    """One compiled op."""

    __slots__ = (
        "fn",
        "ctrl",
        "ins",
        "outs",
        "op",
        "decl",
        "index",
        "regions",
        "fields",
        "term",
        "aff",
        "cache",
        "func",
        "module",
        "callee",
        "invariant",
        "keys",
        "floor",
        "lazy_from",
    )

    def __init__(self, op: Operation, decl: OpDef, func: CFunc, index: int) -> None:
        impl = SEMANTICS.get(op.name)
        if impl is None:
            raise LoomRuntimeError(f"no interpreter semantics for op '{op.name}'")
        self.ctrl = impl if isinstance(impl, Control) else None
        self.fn = None if self.ctrl else impl
        self.op = op
        self.decl = decl
        self.func = func
        self.module = func.module
        self.index = index
        self.ins = tuple(func.slot(v) for v in op.operands)
        self.outs = tuple(func.slot(v) for v in op.results)
        groups = operand_groups(op, decl)
        pos, fields = 0, {}
        for o in decl.operands:
            n = len(groups[o.name])
            fields[o.name] = (pos, pos + n)
            pos += n
        self.fields: dict[str, tuple[int, int]] = fields
        self.term = decl.is_terminator
        self.aff = AFFINE_RULES.get(op.name)
        self.lazy_from: int = LAZY_OPERANDS.get(op.name, len(self.ins))
        """Operands from this position may be unmade lane arrays (see ``LAZY_OPERANDS``)."""
        self.regions: tuple[CRegion | None, ...] = ()
        self.cache: dict[str, Any] = {}
        self.callee: CFunc | None = None
        self.invariant = lane_invariant(decl) and not op.regions
        self.floor = 0 if [str(v.type) for v in op.results] == ["offset"] else -(2**63)
        """Smallest value of the result's domain (offsets are never negative)."""
        dim_slots = tuple(
            func.slot(d.value)
            for v in op.results
            for d in getattr(v.type, "dims", ())
            if getattr(d, "value", None) is not None
        ) + tuple(  # a view type's layout value
            func.slot(v.type.encoding)
            for v in op.results
            if hasattr(getattr(v.type, "encoding", None), "id")
        )
        self.keys: tuple[int, ...] = self.ins + dim_slots
        """Slots whose values determine an invariant op's result (operands, dynamic dims)."""

    def field(self, args: tuple, name: str) -> tuple:
        """The operand values of field ``name`` from the positional ``args``."""
        a, b = self.fields[name]
        return args[a:b]

    @property
    def attrs(self) -> Any:
        """The op's attributes."""
        return self.op.attributes

    def __repr__(self) -> str:
        return f"<step {self.index} {self.op.name}>"


class CRegion:
    """A compiled single-block region."""

    __slots__ = ("args", "steps", "func", "region", "cfg")

    def __init__(self, func: CFunc, region: Region) -> None:
        self.func = func
        self.region = region
        self.args = tuple(func.slot(v) for v in region.entry.args)
        self.steps: list[Step] = []
        self.cfg: Any = None
        """For a multi-block region: its :class:`loom.interp.cfg_exec.CfgPlan` (``steps`` are
        then the entry block's)."""


class CFunc:
    """A compiled function-like body (a kernel's body or config, or a func.def); a declaration's
    has no ``body`` (the host binds a Python function to its name at launch)."""

    __slots__ = ("module", "slots", "nslots", "body", "name", "program")

    def __init__(self, program: Program, module: Module, name: str) -> None:
        self.program = program
        self.module = module
        self.name = name
        self.slots: dict[int, int] = {}
        self.nslots = 0
        self.body: CRegion | None = None

    def slot(self, v: Value) -> int:
        """The environment slot of value ``v`` (allocated on first use)."""
        s = self.slots.get(v.id)
        if s is None:
            s = self.slots[v.id] = self.nslots
            self.nslots += 1
        return s


class Program:
    """The compiled kernel: config and body functions plus called functions; steps numbered."""

    def __init__(self, module: Module, registry: OpRegistry | None = None) -> None:
        self.module = module
        self.registry = as_registry(registry)
        self.steps: list[Step] = []
        self.funcs: dict[str, CFunc] = {}
        self.refs: list[CFunc] = []
        """Functions whose address was taken; a function reference value is 1 + the index
        here (0 is the null reference)."""

    def compile_region(self, func: CFunc, region: Region, depth: int = 0) -> CRegion:
        """Compile ``region`` (nested ``depth`` regions or calls deep) into ``func``."""
        if depth > MAX_DEPTH:
            raise LoomRuntimeError(
                f"regions and calls nested more than {MAX_DEPTH} deep (in '@{func.name}'); "
                "the interpreter does not run such kernels"
            )
        if len(region.blocks) != 1:
            from loom.interp.cfg_exec import compile_cfg

            return compile_cfg(self, func, region, depth)
        return self.compile_block(func, region, region.entry, depth)

    def compile_block(self, func: CFunc, region: Region, block: Block, depth: int = 0) -> CRegion:
        """Compile one block of ``region`` (its arguments and ops) into ``func``'s environment."""
        cr = CRegion(func, region)
        cr.args = tuple(func.slot(v) for v in block.args)
        for op in block.ops:
            decl = self.registry.get(op.name)
            if decl is None:
                raise LoomRuntimeError(self.registry.unknown_message(op.name))
            step = Step(op, decl, func, len(self.steps))
            self.steps.append(step)
            step.regions = tuple(self.compile_region(func, r, depth + 1) for r in op.regions)
            callee_attr = _callee_of(op, decl)
            if callee_attr is not None:
                step.callee = self.function(callee_attr, op, depth + 1)
            # dynamic dims in result types reference values of this function
            for v in op.results:
                for d in getattr(v.type, "dims", ()):
                    if getattr(d, "value", None) is not None:
                        func.slot(d.value)
            cr.steps.append(step)
        return cr

    def function(self, name: str, user: Operation | None = None, depth: int = 0) -> CFunc:
        """The compiled body of the function-like symbol ``name`` (compiled once)."""
        existing = self.funcs.get(name)
        if existing is not None:
            return existing
        op = self.module.symbols.get(name)
        decl = self.registry.get(op.name) if op is not None else None
        if decl is not None and decl.trait(Declaration) is not None:
            func = self.funcs[name] = CFunc(self, self.module, name)
            return func  # no body: a host function runs in its place
        if op is None or not op.regions:
            raise LoomRuntimeError(f"symbol '@{name}' has no body to run")
        func = CFunc(self, self.module, name)
        self.funcs[name] = func
        func.body = self.compile_region(func, op.regions[-1], depth)
        return func

    def reference(self, func: CFunc) -> int:
        """The function reference value of ``func`` (1, 2, ...; stable for this program)."""
        for k, f in enumerate(self.refs):
            if f is func:
                return k + 1
        self.refs.append(func)
        return len(self.refs)

    def referenced(self, ref: int) -> CFunc | None:
        """The function a non-null reference value names (None when it names none)."""
        return self.refs[ref - 1] if 0 < ref <= len(self.refs) else None


def lane_invariant(decl: OpDef) -> bool:
    """True when the op's results depend only on its operands and attributes: a ``Pure`` op
    without a ``Uniformity`` trait (those read the workitem's coordinates), so over uniform
    operands its result is the same for every lane and chunk and may be reused."""
    return decl.trait(Pure) is not None and decl.trait(Uniformity) is None


def _callee_of(op: Operation, decl: OpDef) -> str | None:
    """The called symbol of a call-like op: a SymbolUse of a function on an op without regions."""
    from loom.dsl import SymbolUse

    if op.regions:
        return None
    for t in decl.traits_of(SymbolUse):
        if "func" in t.kinds:
            name = op.attributes.get(t.attr)
            if isinstance(name, str):
                return name
    return None


def find_kernel(module: Module, kernel: str, registry: OpRegistry | None = None) -> Operation:
    """The kernel-defining top-level op named ``kernel`` (``"k"`` or ``"@k"``)."""
    reg = as_registry(registry)
    name = kernel[1:] if kernel.startswith("@") else kernel
    op = module.symbols.get(name)
    kernels = []
    for o in module.ops:
        d = reg.get(o.name)
        if d is not None and d.symbol_trait is not None and d.symbol_trait.kind == "kernel":
            kernels.append(o.attributes.get(d.symbol_trait.attr))
    if op is None or name not in kernels:
        avail = ", ".join(f"@{k}" for k in kernels) or "none"
        raise LoomRuntimeError(f"no kernel named '@{name}' in the module (kernels: {avail})")
    if len(op.regions) != 2:
        raise LoomRuntimeError(f"kernel '@{name}' has no body (a declaration cannot run)")
    return op
