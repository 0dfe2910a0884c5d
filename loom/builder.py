"""Generated builders: one namespace per dialect, one keyword-only method per op.

``module, b = module_builder(ops=...)`` then ``b.scalar.addi(lhs=x, rhs=y, results=[I32])``.
Methods are made from the declarations by :class:`OpCallable`; misuse raises
:class:`~loom.errors.LoomBuilderError` naming the op and the field, and nothing is added to the
module unless the whole op is valid.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from loom.diagnostics import count_of
from loom.dsl import ArgSource, AttrKind, Branch, NoReturn, OpDef, RegionDef, python_name
from loom.errors import LoomBuilderError
from loom.format.elements import CoResultType, FormatElement, walk
from loom.ir import (
    DYNAMIC_INDEX,
    Block,
    DictAttr,
    Module,
    Operation,
    Region,
    Type,
    Value,
)
from loom.ir.operations import EMPTY_ATTRS
from loom.opdocs import builder_docstring
from loom.opview import SEGMENTS_ATTR, pack_operands
from loom.registry import OpRegistry, as_registry, namespace_attr
from loom.typecheck import attr_problem, check_field_types

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
_COMMON = ("results", "name", "names", "result_names", "location_id")


class _OpPlan:
    """Precomputed keyword tables for one declaration."""

    __slots__ = (
        "decl",
        "op_name",
        "operand_kw",
        "attr_kw",
        "region_kw",
        "region_arg_kw",
        "region_names",
        "spelled",
        "index_lists",
        "allowed",
        "fixed_results",
        "returns",
        "symbol_attr",
        "co_results",
    )

    def __init__(self, decl: OpDef) -> None:
        self.decl = decl
        self.op_name = decl.name
        self.operand_kw = {python_name(o.name): o for o in decl.operands}
        self.index_lists = decl.index_lists
        hidden = set(self.index_lists.values())
        self.attr_kw = {a.keyword: a for a in decl.attrs if a.name not in hidden}
        self.region_kw = {python_name(r.name): r for r in decl.regions}
        self.region_arg_kw = {r.arg_keyword: r for r in decl.regions if r.arg_keyword}
        self.allowed = (
            set(self.operand_kw)
            | set(self.attr_kw)
            | set(self.region_kw)
            | set(self.region_arg_kw)
            | {"location_id"}
        )
        if decl.results:
            self.allowed |= {"results", "name", "names", "result_names"}
        fixed = [r.constraint.fixed for r in decl.results if not r.variadic]
        self.fixed_results = (
            tuple(fixed)
            if decl.results
            and all(not r.variadic and r.constraint.fixed is not None for r in decl.results)
            else None
        )
        if not decl.results:
            self.returns = "none"
        elif len(decl.results) == 1 and not decl.results[0].variadic:
            self.returns = "one"
        else:
            self.returns = "list"
        sym = decl.symbol_trait
        self.symbol_attr = sym.attr if sym else None
        self.region_names = [(python_name(r.name), r.name) for r in decl.regions]
        self.spelled = [e for e in walk(decl.format) if type(e).build_problem is not _NO_PROBLEM]
        """Format elements that refuse some field combinations (a table's row shape)."""
        self.co_results = [e for e in walk(decl.format) if isinstance(e, CoResultType)]


_NO_PROBLEM = FormatElement.build_problem


class OpCallable:
    """A generated builder method for one op (keyword-only arguments named after fields)."""

    def __init__(self, builder: LoomBuilder, plan: _OpPlan, method_name: str) -> None:
        self._builder = builder
        self._plan = plan
        self.__name__ = method_name
        self.__qualname__ = f"{plan.decl.dialect}.{method_name}"
        self.__doc__ = plan.decl.plan(builder_docstring)
        self.__signature__ = _signature(plan)

    @property
    def op_def(self) -> OpDef:
        """The declaration this method builds."""
        return self._plan.decl

    def __call__(self, **kwargs: Any) -> Value | list[Value] | None:
        return self._builder._build(self._plan, kwargs)

    def __repr__(self) -> str:
        return f"<builder method {self.__qualname__}{self.__signature__}>"


def _signature(plan: _OpPlan) -> inspect.Signature:
    kw = inspect.Parameter.KEYWORD_ONLY
    params = []
    for name in plan.operand_kw:
        params.append(
            inspect.Parameter(
                name,
                kw,
                default=(
                    inspect.Parameter.empty
                    if not (plan.operand_kw[name].variadic or plan.operand_kw[name].optional)
                    else None
                ),
            )
        )
    for name, a in plan.attr_kw.items():
        required = not a.optional and a.kind not in (AttrKind.UNIT,)
        params.append(
            inspect.Parameter(name, kw, default=(inspect.Parameter.empty if required else None))
        )
    for name in plan.region_arg_kw:
        params.append(inspect.Parameter(name, kw, default=None))
    for name in plan.region_kw:
        params.append(inspect.Parameter(name, kw, default=None))
    if plan.decl.results:
        params.append(
            inspect.Parameter(
                "results", kw, default=(None if plan.fixed_results else inspect.Parameter.empty)
            )
        )
        for n in ("name", "names", "result_names"):
            params.append(inspect.Parameter(n, kw, default=None))
    params.append(inspect.Parameter("location_id", kw, default=None))
    return inspect.Signature(params)


class DialectBuilder:
    """The methods of one dialect (``builder.kernel``, ``builder.scalar``...)."""

    def __init__(self, dialect: str) -> None:
        self._dialect = dialect

    def __repr__(self) -> str:
        methods = sorted(k for k, v in vars(self).items() if isinstance(v, OpCallable))
        return f"<{self._dialect} builder: {', '.join(methods)}>"

    def __dir__(self) -> list[str]:
        return sorted(k for k, v in vars(self).items() if isinstance(v, OpCallable))


if TYPE_CHECKING:  # typed dialect namespaces for editors, generated by loom.opdocs
    from loom._builder_ops import DialectNamespaces as _Namespaces
else:
    _Namespaces = object


class LoomBuilder(_Namespaces):
    """Builds ops into a module: dialect namespaces, insertion point and current location."""

    def __init__(
        self,
        module: Module,
        ops: OpRegistry | Iterable[OpDef] | None = None,
        insertion_block: Block | None = None,
    ) -> None:
        self.module = module
        self.registry = as_registry(ops)
        self._block = insertion_block
        self._location_id = 0
        self.last_op: Operation | None = None
        """The op most recently built (handy for reaching its regions)."""
        for dialect, defs in self.registry.dialects().items():
            ns = DialectBuilder(dialect)
            for d in defs:
                method = self.registry.builder_name(d)
                setattr(ns, method, OpCallable(self, d.plan(_OpPlan), method))
            setattr(self, namespace_attr(dialect), ns)

    # ------------------------------------------------------------------ insertion and values

    @property
    def current_block(self) -> Block | None:
        """The block new non-symbol ops go to."""
        return self._block

    @contextmanager
    def insertion_block(self, block: Block) -> Iterator[Block]:
        """Append new ops to ``block`` inside the ``with`` statement."""
        if not isinstance(block, Block):
            raise LoomBuilderError(f"insertion_block() needs a Block, got {block!r}")
        saved, self._block = self._block, block
        try:
            yield block
        finally:
            self._block = saved

    @contextmanager
    def location(self, location_id: int) -> Iterator[int]:
        """Use ``location_id`` for ops built inside the ``with`` statement."""
        self._check_location(location_id, "location()")
        saved, self._location_id = self._location_id, location_id
        try:
            yield location_id
        finally:
            self._location_id = saved

    def value(self, name: str | None, type: Type) -> Value:
        """A new value (for signature arguments of kernel.def / func.def)."""
        if not isinstance(type, Type):
            raise LoomBuilderError(f"value(): type must be a Loom type, got {type!r}")
        self._check_name(name, "value()")
        return self.module.add_value(type, name)

    def region(self, args: Sequence[tuple[str | None, Type]] = ()) -> Region:
        """A single-block region whose entry block has the named arguments."""
        for pair in args:
            self._check_pair(pair, "region()")
        return Region([Block(tuple(self.module.add_value(t, n) for n, t in args))])

    def block(
        self,
        region: Region,
        label: str,
        args: Sequence[tuple[str | None, Type]] = (),
    ) -> Block:
        """Append a labelled block (a branch target, ``^label(%a: T):``) to ``region``."""
        if not isinstance(region, Region):
            raise LoomBuilderError(f"block() needs a Region, got {region!r}")
        label = label[1:] if label.startswith("^") else label
        if not label or not all(c.isalnum() or c in "_$" for c in label):
            raise LoomBuilderError(f"block label {label!r} is not a valid label")
        if any(b.label == label for b in region.blocks):
            raise LoomBuilderError(f"block label '^{label}' is already used in this region")
        for pair in args:
            self._check_pair(pair, "block()")
        blk = Block(tuple(self.module.add_value(t, n) for n, t in args), label)
        region.blocks.append(blk)
        return blk

    def build(self, op_name: str, **kwargs: Any) -> Value | list[Value] | None:
        """Build any registered op by name with the same keywords as its generated method."""
        d = self.registry.get(op_name)
        if d is None:
            raise LoomBuilderError(self.registry.unknown_message(op_name))
        return self._build(d.plan(_OpPlan), kwargs)

    # ------------------------------------------------------------------ the build

    def _build(self, plan: _OpPlan, kw: dict[str, Any]) -> Value | list[Value] | None:
        decl = plan.decl
        op_name = decl.name

        def fail(msg: str) -> LoomBuilderError:
            return LoomBuilderError(f"{op_name}: {msg}")

        unknown = [k for k in kw if k not in plan.allowed]
        if unknown:
            raise fail(
                f"unknown keyword '{unknown[0]}'; expected " + ", ".join(sorted(plan.allowed))
            )

        attrs: dict[str, Any] = {}
        groups = self._operand_groups(plan, kw, attrs, fail)
        self._attributes(plan, kw, attrs, fail)

        result_types = self._result_types(plan, kw.get("results"), fail)
        result_groups = _group_types(decl, result_types, fail)
        names = self._result_names(kw, len(result_types), fail)

        for e in plan.co_results:
            problem = e.result_problem(result_types)
            if problem is not None:
                raise fail(problem)
        violations = check_field_types(decl, groups, result_groups)
        if violations:
            raise fail(violations[0].message)
        for e in plan.spelled:
            given = {name: kw.get(key) for key, name in plan.region_names}
            problem = e.build_problem(groups, attrs, given)
            if problem:
                raise fail(problem)

        regions = self._regions(plan, kw, groups, result_groups, fail)
        location_id = kw.get("location_id")
        if location_id is None:
            location_id = self._location_id
        self._check_location(location_id, op_name)

        sym_name = attrs.get(plan.symbol_attr) if plan.symbol_attr else None
        at = replace = 0
        if plan.symbol_attr:
            if sym_name in self.module.symbols:
                raise fail(f"symbol '@{sym_name}' is already defined")
        elif self._block is None:
            raise fail("no insertion block; use 'with builder.insertion_block(block):'")
        else:
            at, replace = self._insertion_point(self._block, decl, fail)

        # Everything is valid: create the values and the op.
        operands, segments = pack_operands(decl, groups)
        if segments is not None:
            attrs[SEGMENTS_ATTR] = segments
        made_regions = tuple(r.materialize(self) for r in regions if r is not None)
        results = tuple(self.module.add_value(t, n) for t, n in zip(result_types, names))
        for e in plan.co_results:
            e.rebind(results)
        op = Operation(op_name, operands, results, attrs or EMPTY_ATTRS, made_regions, location_id)
        if plan.symbol_attr:
            body = self.module.body
            op.leading_blank_line = bool(body.ops)
            body.ops.append(op)
            if sym_name is not None:  # an optional symbol (an anonymous record)
                self.module.symbols[sym_name] = op
        else:
            self._block.ops[at : at + replace] = [op]
        self.last_op = op
        if plan.returns == "none":
            return None
        if plan.returns == "one":
            return results[0]
        return list(results)

    # ------------------------------------------------------------------ helpers

    def _operand_groups(
        self, plan: _OpPlan, kw: dict[str, Any], attrs: dict[str, Any], fail
    ) -> dict[str, tuple[Value, ...]]:  # noqa: ANN001
        """Operand field -> values from the keywords (static index lists go to ``attrs``)."""
        groups: dict[str, tuple[Value, ...]] = {}
        for key, o in plan.operand_kw.items():
            raw = kw.get(key)
            static_attr = plan.index_lists.get(o.name)
            if static_attr is not None:
                vals, static = self._split_indices(raw, key, fail)
                groups[o.name] = vals
                if static is not None:
                    attrs[static_attr] = static
                continue
            if o.variadic:
                if raw is None:
                    raw = ()
                if isinstance(raw, Value) or not isinstance(raw, (list, tuple)):
                    raise fail(f"operand '{key}' takes a list of values, got {raw!r}")
                vals = tuple(raw)
            elif raw is None:
                if not o.optional:
                    raise fail(f"missing operand '{key}'")
                vals = ()
            else:
                vals = (raw,)
            for v in vals:
                self._check_value(v, key, fail)
            groups[o.name] = vals
        return groups

    def _attributes(self, plan: _OpPlan, kw: dict[str, Any], attrs: dict[str, Any], fail) -> None:  # noqa: ANN001
        """Coerce and check the attribute keywords into ``attrs``."""
        for key, a in plan.attr_kw.items():
            raw = kw.get(key)
            if raw is None or (a.kind == AttrKind.UNIT and raw is False):
                if not a.optional:
                    raise fail(f"missing attribute '{key}'")
                continue
            if a.optional and type(raw) is type(a.default) and raw == a.default:
                continue  # the declared default: elided in text, so not stored either
            value = _coerce_attr(a, raw)
            if a.optional and isinstance(value, DictAttr) and not value:
                continue  # an empty optional dictionary is an absent one (text omits it)
            problem = attr_problem(a, value)
            if problem:
                raise fail(problem)
            attrs[a.name] = value

    def _insertion_point(self, block: Block, decl: OpDef, fail) -> tuple[int, int]:  # noqa: ANN001
        """Where an op of ``decl`` goes in ``block``, and how many ops it replaces (0 or 1).

        A block whose last op is an elided terminator (a bare ``scf.yield`` the builder or the
        parser added) still reads as open: new ops go before it, and a terminator built into
        it takes its place. That is the order a frontend walking its syntax tree uses: create
        the ``scf.if``, then fill its region. Appending after any other terminator is refused.
        """
        ops = block.ops
        last = ops[-1] if ops else None
        if last is None:
            return 0, 0
        last_decl = self.registry.get(last.name)
        if last_decl is None or not last_decl.is_terminator:
            return len(ops), 0
        if last.name in self.registry.implicit_terminators and _is_bare(last):
            return len(ops) - 1, 1 if decl.is_terminator else 0
        raise fail(
            f"the insertion block already ends with its terminator '{last.name}'; nothing can "
            f"follow a terminator: build the block's other ops first and '{last.name}' last"
        )

    def _check_value(self, v: Any, key: str, fail) -> None:  # noqa: ANN001
        if not isinstance(v, Value):
            raise fail(f"operand '{key}' must be a value, got {v!r}")
        values = self.module.values
        if not (v.id < len(values) and values[v.id] is v):
            raise fail(f"operand '{key}' ({v!r}) belongs to another module")

    def _split_indices(self, raw: Any, key: str, fail) -> tuple[tuple[Value, ...], tuple | None]:  # noqa: ANN001
        if raw is None:
            raw = ()
        if not isinstance(raw, (list, tuple)):
            raise fail(f"'{key}' takes a list of ints and values, got {raw!r}")
        vals: list[Value] = []
        static: list[int] = []
        any_static = False
        for x in raw:
            if isinstance(x, Value):
                self._check_value(x, key, fail)
                vals.append(x)
                static.append(DYNAMIC_INDEX)
            elif isinstance(x, int) and not isinstance(x, bool):
                if not 0 <= x < 2**63:
                    raise fail(f"static index {x} in '{key}' must be a non-negative 64-bit int")
                static.append(x)
                any_static = True
            else:
                raise fail(f"'{key}' entries must be ints or values, got {x!r}")
        return tuple(vals), (tuple(static) if any_static else None)

    def _result_types(self, plan: _OpPlan, raw: Any, fail) -> tuple[Type, ...]:  # noqa: ANN001
        decl = plan.decl
        if not decl.results:
            return ()
        if raw is None:
            if plan.fixed_results is None:
                raise fail("missing 'results=' (the result types)")
            return plan.fixed_results
        if isinstance(raw, Type) or not isinstance(raw, (list, tuple)):
            raise fail(f"'results' takes a list of types, got {raw!r}")
        for t in raw:
            if not isinstance(t, Type):
                raise fail(f"'results' entries must be Loom types, got {t!r}")
        return tuple(raw)

    def _result_names(self, kw: dict[str, Any], count: int, fail) -> list[str | None]:  # noqa: ANN001
        name = kw.get("name")
        many = kw.get("names") if kw.get("names") is not None else kw.get("result_names")
        if name is not None and many is not None:
            raise fail("pass either 'name' or 'names', not both")
        if name is not None:
            if count != 1:
                raise fail(f"'name' names one result but the op has {count}; use 'names'")
            names = [name]
        elif many is not None:
            names = list(many)
            if len(names) != count:
                raise fail(
                    f"'names' has {count_of(len(names), 'entry')} for {count_of(count, 'result')}"
                )
        else:
            names = [None] * count
        for n in names:
            problem = _name_problem(n)
            if problem:
                raise fail(problem)
        return names

    def _check_name(self, name: str | None, where: str) -> None:
        problem = _name_problem(name)
        if problem:
            raise LoomBuilderError(f"{where}: {problem}")

    def _check_pair(self, pair: Any, where: str) -> None:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Type)):
            raise LoomBuilderError(f"{where}: arguments are (name, type) pairs, got {pair!r}")
        self._check_name(pair[0], where)

    def _check_location(self, location_id: Any, where: str) -> None:
        if (
            not isinstance(location_id, int)
            or isinstance(location_id, bool)
            or not 0 <= location_id < len(self.module.locations)
        ):
            raise LoomBuilderError(
                f"{where}: location_id {location_id!r} is not an id in this module's location "
                f"table (0..{len(self.module.locations) - 1}); create one with "
                "module.add_location(...)"
            )

    def _regions(
        self, plan: _OpPlan, kw: dict[str, Any], groups, result_groups, fail
    ) -> list[_PendingRegion | None]:  # noqa: ANN001
        pending: list[_PendingRegion | None] = []
        region_values: dict[str, tuple[Value, ...]] = {}  # entry args, for projected regions
        for key, rd in plan.region_kw.items():
            region = kw.get(key)
            if rd.variadic:
                many = () if region is None else region
                if not isinstance(many, (list, tuple)) or not all(
                    isinstance(r, Region) for r in many
                ):
                    raise fail(f"region '{key}' takes a list of Regions, got {region!r}")
                for r in many:
                    if len(r.blocks) != 1 and rd.single_block:
                        raise fail(f"each region of '{key}' must have exactly one block")
                    pending.append(_PendingRegion(rd, r, None, None, self, fail, key))
                continue
            if region is not None and not isinstance(region, Region):
                raise fail(f"region '{key}' must be a Region, got {region!r}")
            arg_spec = kw.get(rd.arg_keyword) if rd.arg_keyword else None
            if region is None and rd.optional and arg_spec is None:
                pending.append(None)
                continue
            if region is not None and len(region.blocks) != 1 and rd.single_block:
                raise fail(f"region '{key}' must have exactly one block")
            projected = None
            if rd.arg_source == ArgSource.DERIVED:
                projected = [v for src in rd.derived_from for v in region_values.get(src, ())]
            expected = self._region_arg_types(rd, groups, result_groups, region_values)
            pending.append(_PendingRegion(rd, region, arg_spec, expected, self, fail, key))
            if projected:
                # spelled like the args they project (an unnamed one by its id)
                pending[-1].names = tuple(v.name or str(v.id) for v in projected)
            if rd.arg_source == ArgSource.VALUES and isinstance(arg_spec, (list, tuple)):
                region_values[key] = tuple(arg_spec)
            elif region is not None and region.blocks:
                region_values[key] = tuple(region.blocks[0].args)
        if None in pending and any(p is not None for p in pending[pending.index(None) :]):
            raise fail("an optional region may only be omitted after the regions before it")
        return pending

    def _region_arg_types(
        self,
        rd: RegionDef,
        groups,  # noqa: ANN001
        result_groups,  # noqa: ANN001
        region_values: dict[str, tuple[Value, ...]],
    ) -> tuple[Type, ...] | None:
        if rd.arg_source != ArgSource.DERIVED:
            return None
        types: list[Type] = []
        for src in rd.derived_from:
            first_only = src.startswith("~")
            name = src.lstrip("~")
            vals = groups.get(name)
            if vals is None:
                vals = region_values.get(name)
            if vals is None:
                ts = [t for t in result_groups.get(name, ())]
            else:
                ts = [v.type for v in vals]
            types.extend(ts[:1] if first_only else ts)
        return tuple(types)


class _PendingRegion:
    """A validated region waiting to be attached (args created only on success)."""

    def __init__(
        self,
        rd: RegionDef,
        region: Region | None,
        arg_spec: Any,
        expected: tuple[Type, ...] | None,
        builder: LoomBuilder,
        fail,
        key: str,  # noqa: ANN001
    ) -> None:
        self.rd, self.region, self.arg_spec, self.expected = rd, region, arg_spec, expected
        self.names: tuple[str | None, ...] = ()  # of projected args
        existing = region.blocks[0].args if region is not None and region.blocks else ()
        if rd.arg_source == ArgSource.PAIRS and arg_spec is not None:
            if existing:
                raise fail(f"region '{key}' already has arguments; drop '{rd.arg_keyword}'")
            if not isinstance(arg_spec, (list, tuple)):
                raise fail(f"'{rd.arg_keyword}' takes a list of (name, type) pairs")
            for pair in arg_spec:
                builder._check_pair(pair, rd.arg_keyword)
        elif rd.arg_source == ArgSource.VALUES and arg_spec is not None:
            if existing:
                raise fail(f"region '{key}' already has arguments; drop '{rd.arg_keyword}'")
            if not isinstance(arg_spec, (list, tuple)):
                raise fail(f"'{rd.arg_keyword}' takes a list of values from builder.value()")
            for v in arg_spec:
                builder._check_value(v, rd.arg_keyword, fail)
        elif expected is not None and existing:
            got = tuple(v.type for v in existing)
            if got != expected:
                raise fail(
                    f"region '{key}' arguments have types ({', '.join(map(str, got))}), "
                    f"expected ({', '.join(map(str, expected))})"
                )
        if region is not None and region.blocks:
            ops = region.blocks[-1].ops
            last = ops[-1].name if ops else None
            if rd.terminator and last is not None and last != rd.terminator:
                term = builder.registry.get(last)
                leaves = term is not None and (term.trait(Branch) or term.trait(NoReturn))
                if term is not None and term.is_terminator and not leaves:
                    raise fail(f"region '{key}' must end with '{rd.terminator}', not '{last}'")

    def materialize(self, builder: LoomBuilder) -> Region:
        rd = self.rd
        region = self.region if self.region is not None else Region()
        entry = region.blocks[0]
        if rd.arg_source == ArgSource.PAIRS and self.arg_spec is not None:
            entry.args = tuple(builder.module.add_value(t, n) for n, t in self.arg_spec)
        elif rd.arg_source == ArgSource.VALUES and self.arg_spec is not None:
            entry.args = tuple(self.arg_spec)
        elif self.expected is not None and not entry.args and self.expected:
            names = self.names or (None,) * len(self.expected)
            entry.args = tuple(builder.module.add_value(t, n) for t, n in zip(self.expected, names))
        if rd.implicit_terminator and rd.terminator in builder.registry:
            for block in region.blocks:
                last = block.ops[-1] if block.ops else None
                last_decl = builder.registry.get(last.name) if last else None
                if last_decl is None or not last_decl.is_terminator:
                    block.ops.append(Operation(rd.terminator, location_id=builder._location_id))
        return region


def _is_bare(op: Operation) -> bool:
    """No operands, results, attributes, regions or comments: an elided terminator in text."""
    if op.operands or op.results or op.attributes or op.regions:
        return False
    return op.trivia is None or not op.trivia.comments


def _name_problem(name: str | None) -> str | None:
    """Why ``name`` cannot be an SSA name (None when it can)."""
    if name is None or (isinstance(name, str) and _IDENT.match(name)):
        return None
    return (
        f"invalid SSA name {name!r}: use letters, digits, '_', '$' or '-', "
        "not starting with a digit"
    )


def _group_types(decl: OpDef, types: tuple[Type, ...], fail) -> dict[str, tuple[Type, ...]]:  # noqa: ANN001
    fixed = sum(1 for r in decl.results if not r.variadic)
    variadic = [r for r in decl.results if r.variadic]
    if len(types) < fixed or (not variadic and len(types) != fixed):
        raise fail(
            f"expected {count_of(fixed, 'result type')}{' or more' if variadic else ''}, "
            f"got {len(types)}"
        )
    out, pos, extra = {}, 0, len(types) - fixed
    for r in decl.results:
        n = extra if r.variadic else 1
        out[r.name] = types[pos : pos + n]
        pos += n
    return out


def _coerce_attr(a, raw: Any) -> Any:  # noqa: ANN001
    """Accept builder-friendly spellings: lists for tuples, ``@sym`` for symbols."""
    if a.kind == AttrKind.DICT and isinstance(raw, Mapping) and not isinstance(raw, DictAttr):
        try:
            return DictAttr(_listless(raw))
        except (TypeError, ValueError):
            return raw
    if a.kind in (AttrKind.I64_ARRAY, AttrKind.TYPE_ARRAY, AttrKind.PREDICATES) and isinstance(
        raw, list
    ):
        return tuple(raw)
    if a.kind == AttrKind.SYMBOL and isinstance(raw, str) and raw.startswith("@"):
        return raw[1:]
    if a.kind == AttrKind.BLOCK:
        label = getattr(raw, "label", raw)  # a Block, or its label with or without '^'
        return label[1:] if isinstance(label, str) and label.startswith("^") else label
    if a.kind == AttrKind.BLOCK_LIST and isinstance(raw, (list, tuple)):
        out = []
        for x in raw:
            label = getattr(x, "label", x)
            out.append(label[1:] if isinstance(label, str) and label.startswith("^") else label)
        return tuple(out)
    if a.kind == AttrKind.FLAGS and isinstance(raw, str):
        try:
            return a.flags.canonical(raw)
        except ValueError:
            return raw
    if a.kind == AttrKind.FLOAT and isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if a.kind == AttrKind.LITERAL and isinstance(raw, list):
        return tuple(raw)
    if a.kind in (AttrKind.ENCODING, AttrKind.LITERAL) and isinstance(raw, str):
        from loom.ir.encoding_spec import SpecError, canonical_spec

        try:
            return canonical_spec(raw)
        except SpecError:
            return raw  # reported with the other attribute problems
    return raw


def _listless(raw: Mapping) -> dict[str, Any]:
    """A plain dict for a dictionary attribute: nested dicts kept, lists as tuples."""
    return {
        k: tuple(v) if isinstance(v, list) else _listless(v) if isinstance(v, Mapping) else v
        for k, v in raw.items()
    }


def module_builder(
    ops: OpRegistry | Iterable[OpDef] | None = None,
    types: Any = None,
    module: Module | None = None,
    insertion_block: Block | None = None,
) -> tuple[Module, LoomBuilder]:
    """A new (or given) module and a builder for it."""
    module = module if module is not None else Module()
    return module, LoomBuilder(module, ops, insertion_block)
