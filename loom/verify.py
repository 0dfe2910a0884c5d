"""The verifier: generic checks driven by the declarations, plus small per-op hooks.

``verify_module(module, ops=...)`` walks the module once and collects every problem as a
:class:`~loom.diagnostics.Diagnostic`; it never stops at the first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loom.diagnostics import Diagnostic, DiagnosticEngine, DiagnosticSeverity, SourceRange
from loom.dsl import (
    ArgSource,
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    NoAncestor,
    OpDef,
    RequiresAttr,
    RequiresTogether,
    SymbolUse,
    Terminator,
    Violation,
)
from loom.ir import FileLocation, Module, Operation, Region, Value
from loom.opview import operand_groups, region_groups, result_groups
from loom.registry import OpRegistry, as_registry
from loom.typecheck import attr_problem, check_field_types


class VerifyContext:
    """What per-op hooks may ask about: fields of ops, symbols, the module."""

    def __init__(self, module: Module, registry: OpRegistry) -> None:
        self.module = module
        self.registry = registry

    def operand_values(self, op: Operation, field: str) -> tuple[Value, ...]:
        """The operands of ``op`` in field ``field`` (empty if unknown)."""
        decl = self.registry.get(op.name)
        if decl is None:
            return ()
        try:
            return operand_groups(op, decl).get(field, ())
        except ValueError:
            return ()

    def region(self, op: Operation, field: str) -> Region | None:
        """Region ``field`` of ``op`` (None when absent)."""
        decl = self.registry.get(op.name)
        return region_groups(op, decl).get(field) if decl else None

    def symbol(self, name: Any) -> Operation | None:
        """The top-level op defining symbol ``name``."""
        return self.module.symbols.get(name) if isinstance(name, str) else None


def op_source_range(module: Module, op: Operation) -> SourceRange | None:
    """The op's recorded source location as a range, if it has a file location."""
    loc = module.location(op.location_id)
    if isinstance(loc, FileLocation):
        name = module.sources[loc.source_id] if 0 <= loc.source_id < len(
            module.sources) else "<unknown>"
        return SourceRange(name, loc.start_line, loc.start_col, loc.end_line, loc.end_col)
    return None


class ModuleVerifier:
    """Runs every check over one module."""

    def __init__(self, module: Module, registry: OpRegistry,
                 diagnostics: DiagnosticEngine | None = None) -> None:
        self.module = module
        self.registry = registry
        self.engine = diagnostics if diagnostics is not None else DiagnosticEngine()
        self.ctx = VerifyContext(module, registry)

    # ------------------------------------------------------------------ reporting

    def error(self, op: Operation | None, code: str, message: str, path: str | None = None,
              severity: DiagnosticSeverity = DiagnosticSeverity.ERROR) -> None:
        """Record a diagnostic about ``op``."""
        rng = op_source_range(self.module, op) if op is not None else None
        self.engine.add(Diagnostic(severity, code, message, rng, op_path=path, op=op,
                                   module=self.module,
                                   location_id=op.location_id if op is not None else 0))

    # ------------------------------------------------------------------ walk

    def run(self) -> DiagnosticEngine:
        """Verify the whole module."""
        self._check_symbols()
        for i, op in enumerate(self.module.ops):
            path = f"module operation[{i}] {op.name}"
            decl = self.registry.get(op.name)
            if decl is not None and decl.symbol_trait is None:
                self.error(op, "STRUCTURE/001", f"'{op.name}' is not allowed at top level; only "
                           "symbol-defining ops (targets, kernels, functions) are", path)
            self._check_op(op, [], path)
        return self.engine

    def _check_symbols(self) -> None:
        seen: dict[str, Operation] = {}
        for op in self.module.ops:
            decl = self.registry.get(op.name)
            if decl is None or decl.symbol_trait is None:
                continue
            name = op.attributes.get(decl.symbol_trait.attr)
            if not isinstance(name, str) or not name:
                continue
            if name in seen:
                self.error(op, "SYMBOL/001", f"symbol '@{name}' is defined more than once")
            seen[name] = op
            if self.module.symbols.get(name) is not op:
                self.error(op, "SYMBOL/004", f"symbol '@{name}' is missing from the module's "
                           "symbol table")

    def _check_op(self, op: Operation, parents: list[Operation], path: str) -> None:
        decl = self.registry.get(op.name)
        if decl is None:
            self.error(op, "STRUCTURE/006", self.registry.unknown_message(op.name), path)
            return
        try:
            operands = operand_groups(op, decl)
            results = result_groups(op, decl)
        except ValueError as e:
            self.error(op, "STRUCTURE/013", f"'{op.name}': {e}", path)
            return
        self._report(op, check_field_types(decl, operands, results), path)
        self._check_attrs(op, decl, path)
        self._check_placement(op, decl, parents, path)
        self._check_regions(op, decl, operands, results, path)
        if decl.verifier is not None:
            self._report(op, decl.verifier(op, self.ctx), path)
        parents.append(op)
        for ri, region in enumerate(op.regions):
            for bi, block in enumerate(region.blocks):
                for oi, child in enumerate(block.ops):
                    self._check_op(child, parents,
                                   f"{path}.regions[{ri}].blocks[{bi}].ops[{oi}] {child.name}")
        parents.pop()

    def _report(self, op: Operation, violations: Iterable[Violation], path: str) -> None:
        for v in violations:
            self.error(op, v.code, f"'{op.name}' {v.message}", path)

    # ------------------------------------------------------------------ checks

    def _check_attrs(self, op: Operation, decl: OpDef, path: str) -> None:
        attrs = op.attributes
        for a in decl.attrs:
            value = attrs.get(a.name)
            if value is None:
                if not a.optional:
                    self.error(op, "STRUCTURE/010", f"'{op.name}' is missing required "
                               f"attribute '{a.name}'", path)
                continue
            problem = attr_problem(a, value)
            if problem:
                self.error(op, "STRUCTURE/014", f"'{op.name}' {problem}", path)
        for t in decl.traits:
            if isinstance(t, SymbolUse):
                name = attrs.get(t.attr)
                if name is None:
                    continue
                target = self.module.symbols.get(name)
                if target is None:
                    self.error(op, "SYMBOL/002", f"'{op.name}' unresolved symbol reference "
                               f"'@{name}' in '{t.attr}'", path)
                    continue
                tdecl = self.registry.get(target.name)
                kind = tdecl.symbol_trait.kind if tdecl and tdecl.symbol_trait else None
                if kind not in t.kinds:
                    self.error(op, "SYMBOL/003", f"'{op.name}' attribute '{t.attr}' expected a "
                               f"{' or '.join(t.kinds)} symbol, but '@{name}' is a "
                               f"'{target.name}'", path)
            elif isinstance(t, RequiresTogether):
                present = [a for a in t.attrs if a in attrs]
                if present and len(present) != len(t.attrs):
                    missing = [a for a in t.attrs if a not in attrs]
                    self.error(op, "STRUCTURE/014", f"'{op.name}' attribute '{present[0]}' "
                               f"requires '{missing[0]}'", path)
            elif isinstance(t, RequiresAttr):
                if t.attr in attrs and t.requires not in attrs:
                    self.error(op, "STRUCTURE/014", f"'{op.name}' attribute '{t.attr}' requires "
                               f"'{t.requires}'", path)

    def _check_placement(self, op: Operation, decl: OpDef, parents: list[Operation],
                         path: str) -> None:
        if decl.symbol_trait is not None and parents:
            self.error(op, "STRUCTURE/029", f"'{op.name}' defines a symbol and must be at top "
                       f"level (observed inside '{parents[-1].name}')", path)
        for t in decl.traits:
            if isinstance(t, HasParent):
                actual = parents[-1].name if parents else "module"
                if actual not in t.parents:
                    self.error(op, "STRUCTURE/029", f"'{op.name}' violates direct parent "
                               f"placement for '{' or '.join(t.parents)}' (observed "
                               f"'{actual}')", path)
            elif isinstance(t, HasAncestor):
                if not self._has_ancestor(parents, t.ancestor):
                    self.error(op, "STRUCTURE/029", f"'{op.name}' violates required ancestor "
                               f"placement for '{t.ancestor}'", path)
            elif isinstance(t, NoAncestor):
                if any(p.name == t.ancestor for p in parents):
                    self.error(op, "STRUCTURE/029", f"'{op.name}' violates forbidden ancestor "
                               f"placement for '{t.ancestor}'", path)

    def _has_ancestor(self, parents: list[Operation], name: str) -> bool:
        for p in reversed(parents):
            if p.name == name:
                return True
            pdecl = self.registry.get(p.name)
            if pdecl is not None and pdecl.trait(IsolatedFromAbove) is not None:
                return False
        return False

    def _check_regions(self, op: Operation, decl: OpDef, operands, results, path: str) -> None:  # noqa: ANN001
        nreq = sum(1 for r in decl.regions if not r.optional)
        if not nreq <= len(op.regions) <= len(decl.regions):
            self.error(op, "STRUCTURE/015", f"'{op.name}' has {len(op.regions)} regions, "
                       f"expected {nreq if nreq == len(decl.regions) else f'{nreq} to {len(decl.regions)}'}",
                       path)
            return
        for rd, region in zip(decl.regions, op.regions):
            if not region.blocks:
                self.error(op, "STRUCTURE/016", f"'{op.name}' region '{rd.name}' has no blocks",
                           path)
                continue
            if rd.single_block and len(region.blocks) != 1:
                self.error(op, "STRUCTURE/016", f"'{op.name}' region '{rd.name}' must have "
                           f"exactly one block, has {len(region.blocks)}", path)
            if rd.arg_source == ArgSource.DERIVED:
                expected = _derived_types(rd, operands, results)
                got = [a.type for a in region.blocks[0].args]
                if got != expected:
                    self.error(op, "TYPE/013", f"'{op.name}' region '{rd.name}' arguments "
                               f"({', '.join(map(str, got))}) must be "
                               f"({', '.join(map(str, expected))})", path)
            for block in region.blocks:
                self._check_terminator(op, rd, block, operands, results, path)

    def _check_terminator(self, op: Operation, rd, block, operands, results, path: str) -> None:  # noqa: ANN001
        for inner in block.ops[:-1]:
            idecl = self.registry.get(inner.name)
            if idecl is not None and idecl.is_terminator:
                self.error(inner, "STRUCTURE/017", f"terminator '{inner.name}' must be the last "
                           f"op of its block", path)
        last = block.ops[-1] if block.ops else None
        if rd.terminator is None:
            return
        if last is None or last.name != rd.terminator:
            found = last.name if last is not None else "nothing"
            self.error(last if last is not None else op, "STRUCTURE/018",
                       f"block in '{op.name}' region '{rd.name}' must terminate with "
                       f"'{rd.terminator}' but found '{found}'", path)
            return
        if rd.yields is None:
            return
        tdecl = self.registry.get(last.name)
        term = tdecl.trait(Terminator) if tdecl else None
        if term is None or term.values is None:
            return
        try:
            passed = operand_groups(last, tdecl).get(term.values, ())
        except ValueError:
            return
        if rd.yields in results:
            want = [v.type for v in results[rd.yields]]
        elif rd.yields in operands:
            want = [v.type for v in operands[rd.yields]]
        else:
            want = list(op.attributes.get(rd.yields, ()))
        got = [v.type for v in passed]
        if len(got) != len(want):
            self.error(last, "STRUCTURE/007", f"'{last.name}' passes {len(got)} values but "
                       f"'{op.name}' expects {len(want)}", path)
        elif got != want:
            i = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
            self.error(last, "TYPE/009", f"'{last.name}' value {i} has type {got[i]}, expected "
                       f"{want[i]}", path)


def _derived_types(rd, operands, results) -> list:  # noqa: ANN001
    out = []
    for src in rd.derived_from:
        name = src.lstrip("~")
        vals = operands.get(name, results.get(name, ()))
        types = [v.type for v in vals]
        out.extend(types[:1] if src.startswith("~") else types)
    return out


def verify_module(module: Module, *, ops: OpRegistry | Iterable[OpDef] | None = None,
                  diagnostics: DiagnosticEngine | None = None) -> DiagnosticEngine:
    """Check ``module`` against the declaration set ``ops``; returns the diagnostics."""
    return ModuleVerifier(module, as_registry(ops), diagnostics).run()
