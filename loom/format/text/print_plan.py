"""Print plans: each declaration's format compiled once into a generated Python function.

The generic printer asks each format element to print itself, groups operands by field and
joins tokens with the spacing rule for every op. A plan does all of that once per
declaration: the spacing between tokens is decided while compiling (a runtime flag is kept only
after optional elements whose presence changes it), operands are read by position, and the
op's line is built by a few f-strings. Ops with regions are covered too: the generated code
hands each region to the printer between the lines it builds.

Any op that does not fit its declaration (wrong counts, missing attributes, odd attribute
text) makes the generated function raise; the printer then falls back to its generic walk,
which reports the problem, so the output is byte-identical either way. No op is named here.
Each element contributes its fragment (``print_code`` in :mod:`loom.format.elements`); the
generator here holds the shared primitives (spacing state, field locals, branches).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom.dsl import AttrKind, OpDef
from loom.format.text.codegen import compile_generated
from loom.ir import DYNAMIC_INDEX, Operation, Value
from loom.ir.values import name_expr
from loom.opview import needs_segments, operand_groups

GLUE = object()
"""Marker token of the generic printer: no space before the next token."""

NO_SPACE_BEFORE = (",", ")", "]", "}")
NO_SPACE_AFTER = ("(", "[", "{")

PrintFn = Callable[[Operation, Callable, Callable, Any, str, "str | None"], str]
"""``fn(op, cached_type_text_by_id, type_text, printer, indent, tail) -> last line``."""


class Fallback(Exception):
    """The op does not fit the plan's assumptions: print it with the generic walk."""


class _Unsupported(Exception):
    """The declaration needs the generic printer."""


def _name(v: Value) -> str:
    n = v.name
    return "%" + (n if n is not None else str(v.id))


def _checked(text: str) -> str:
    """A dynamic token whose spacing the plan assumed (no ``,)]}`` start, no ``([{`` end)."""
    if not text or text[0] in ",)]}" or text[-1] in "([{":
        raise Fallback
    return text


def _index_text(dyn: tuple[Value, ...], static: Any) -> str:
    if static is None:
        return "[" + ", ".join([_name(v) for v in dyn]) + "]"
    it = iter(dyn)
    out = []
    for s in static:
        if s == DYNAMIC_INDEX:
            v = next(it, None)
            if v is None:
                raise Fallback
            out.append(_name(v))
        else:
            out.append(str(s))
    return "[" + ", ".join(out) + "]"


def _fq(text: str) -> str:
    """``text`` escaped for the literal part of an f-string."""
    return text.replace("\\", "\\\\").replace("{", "{{").replace("}", "}}").replace('"', '\\"')


class PrintPlan:
    """The compiled printer of one declaration.

    ``fn`` is None when the format uses an element the generator does not know; then the
    printer always takes its generic walk. ``source`` is the generated code (for tests and
    debugging).
    """

    def __init__(self, decl: OpDef, consumed: frozenset[str], helpers: dict[str, Any]) -> None:
        self.decl = decl
        self.consumed = consumed
        self.symbol = decl.symbol_trait is not None
        self.fn: PrintFn | None = None
        self.source = ""
        try:
            self.source = _Gen(decl, consumed).generate()
        except _Unsupported:
            return
        env: dict[str, Any] = {
            "Fallback": Fallback,
            "_checked": _checked,
            "_index_text": _index_text,
            "_name": _name,
            "operand_groups": operand_groups,
            "DECL": decl,
            "CONSUMED": consumed,
            **helpers,
        }
        compile_generated(self.source, "print", decl.name, env)
        self.fn = env["_print"]


class _Gen:
    """Generates the source of ``_print(op, tg, tt, pr, indent, tail)`` for one declaration.

    ``tg`` looks a type's text up by ``id`` (None when not cached yet) and ``tt`` computes and
    caches it; ``pr`` is the printer (for regions); the result is the op's last line with
    ``indent`` and the ``tail`` (a location) when given.
    """

    def __init__(self, decl: OpDef, consumed: frozenset[str]) -> None:
        self.decl = decl
        self.consumed = consumed
        self.code: list[str] = []
        self.depth = 1
        self.pending: list[str] = []
        self.uses_parts = False
        self.state = "s"  # "s": space before the next token, "n": none, "d": runtime ``sp``
        self.k = 0
        self.fields: dict[str, tuple[str, str]] = {}

    # ------------------------------------------------------------------ code emission

    def emit(self, line: str) -> None:
        self.code.append("    " * self.depth + line)

    def tmp(self, base: str = "t") -> str:
        self.k += 1
        return f"{base}{self.k}"

    def flush(self) -> None:
        if self.pending:
            self.emit(f'P(f"{"".join(self.pending)}")')
            self.pending = []
            self.uses_parts = True

    def sep(self, no_space_before: bool) -> None:
        if no_space_before or self.state == "n":
            return
        if self.state == "s":
            self.pending.append(" ")
        else:
            self.pending.append("{' ' if sp else ''}")

    def token(self, lit: str | None = None, expr: str | None = None, **kw: bool) -> None:
        """One token: literal text or an expression; ``nsb``/``nsa`` spacing properties."""
        self.sep(kw.get("nsb", False))
        if lit is not None:
            self.pending.append(_fq(lit))
        if expr is not None:
            self.pending.append("{" + expr + "}")
        self.state = "n" if kw.get("nsa", False) else "s"

    def glue(self) -> None:
        self.state = "n"

    def branch(self, cond: str, body: Callable[[], None]) -> None:
        """``if cond: body`` keeping the spacing state right on both paths."""
        self.flush()
        before = self.state
        self.emit(f"if {cond}:")
        self.depth += 1
        mark = len(self.code)
        body()
        if len(self.code) == mark and not self.pending:
            self.emit("pass")
        self.flush()
        after = self.state
        if after != before:
            if after != "d":
                self.emit(f"sp = {after == 's'}")
            self.depth -= 1
            if before != "d":
                self.emit("else:")
                self.emit(f"    sp = {before == 's'}")
            self.state = "d"
        else:
            self.depth -= 1

    # ------------------------------------------------------------------ fields

    def setup_fields(self) -> None:
        decl = self.decl
        self.emit("o = op.operands")
        self.emit("r = op.results")
        self.emit("a = op.attributes")
        if needs_segments(decl):
            self.emit("g = operand_groups(op, DECL)")
            for o in decl.operands:
                self.fields[o.name] = ("many", f"g[{o.name!r}]")
        else:
            self._positional("o", decl.operands, "e")
        self._positional("r", decl.results, "er")

    def _positional(self, seq: str, fields: tuple, extra: str) -> None:
        variable = [f for f in fields if f.variadic or getattr(f, "optional", False)]
        fixed = len(fields) - len(variable)
        if not variable:
            self.emit(f"if len({seq}) != {fixed}:")
            self.emit("    raise Fallback")
        else:
            f = variable[0]
            self.emit(f"{extra} = len({seq}) - {fixed}")
            limit = "" if f.variadic else f" or {extra} > 1"
            self.emit(f"if {extra} < 0{limit}:")
            self.emit("    raise Fallback")
        seen_var = False
        for k, f in enumerate(fields):
            var = f"{seq}{k}"
            if f.variadic or getattr(f, "optional", False):
                self.emit(f"{var} = {seq}[{k}:{k} + {extra}]")
                self.fields[f.name] = ("many", var)
                seen_var = True
            else:
                index = f"{k} - 1 + {extra}" if seen_var else str(k)
                self.emit(f"{var} = {seq}[{index}]")
                self.fields[f.name] = ("one", var)

    def values(self, field: str) -> tuple[str, str]:
        got = self.fields.get(field)
        if got is None:
            raise _Unsupported
        return got

    def one(self, field: str) -> str:
        """A local holding the single value of ``field`` (Fallback when it has another count)."""
        kind, code = self.values(field)
        if kind == "one":
            return code
        var = self.tmp("v")
        self.flush()
        self.emit(f"({var},) = {code}")
        return var

    def seq(self, fields: tuple[str, ...]) -> str:
        """An expression for the values of ``fields``, as one tuple."""
        parts = []
        for f in fields:
            kind, code = self.values(f)
            parts.append(f"({code},)" if kind == "one" else code)
        return " + ".join(parts) if parts else "()"

    def static_count(self, fields: tuple[str, ...]) -> bool:
        return all(self.values(f)[0] == "one" for f in fields)

    # ------------------------------------------------------------------ generation

    def generate(self) -> str:
        decl = self.decl
        self.emit("parts = []")
        self.emit("P = parts.append")
        self.setup_fields()
        if decl.results and not self.symbol_decl():
            if self.static_count(tuple(x.name for x in decl.results)):
                self.pending.append(
                    ", ".join(
                        "%{" + name_expr(v) + "}"
                        for v in (self.values(x.name)[1] for x in decl.results)
                    )
                    + " = "
                )
            else:
                self.emit("if r:")
                self.depth += 1
                self.emit('P(", ".join([_name(x) for x in r]) + " = ")')
                self.depth -= 1
                self.uses_parts = True
        self.state = "n"
        self.token(lit=decl.name)
        for e in decl.format:
            e.print_code(self)
        last = "".join(self.pending)
        if self.uses_parts:
            joined, last = 'indent + "".join(parts) + ', last
        else:
            joined, last = "", "{indent}" + last
        self.emit("if tail is None:")
        self.emit(f'    return {joined}f"{last}"')
        self.pending = []
        self.token(expr="tail")
        self.emit(f'return {joined}f"{last}{"".join(self.pending)}"')
        code = self.code
        if not self.uses_parts:
            code = [c for c in code if c.strip() not in ("parts = []", "P = parts.append")]
        head = "def _print(op, tg, tt, pr, indent, tail):"
        return "\n".join([head, *code]) + "\n"

    def symbol_decl(self) -> bool:
        return self.decl.symbol_trait is not None

    NO_SPACE_BEFORE = NO_SPACE_BEFORE
    NO_SPACE_AFTER = NO_SPACE_AFTER

    def unsupported(self) -> None:
        """Leave this declaration to the generic printer."""
        raise _Unsupported

    def attr_text_expr(self, field: str) -> str:
        """An expression for the text of required attribute ``field`` (spelled by its kind)."""
        a = self.decl.attr(field)
        if a is None:
            raise _Unsupported
        if a.kind in (AttrKind.ENUM, AttrKind.FLAGS):
            return f"str(a[{a.name!r}])"
        return f"attr_text({a.kind!r}, a[{a.name!r}])"

    def name_list(self, fields: tuple[str, ...], bracket: bool) -> None:
        if self.static_count(fields):
            names = ", ".join(
                "%{" + name_expr(v) + "}" for v in (self.values(f)[1] for f in fields)
            )
            if bracket:
                self.token(lit="[")
                self.pending.append(names + "]")
                self.state = "s"
            elif names:
                self.sep(False)
                self.pending.append(names)
                self.state = "s"
            return
        expr = f"', '.join([_name(x) for x in {self.seq(fields)}])"
        if bracket:
            self.token(lit="[", expr=expr)
            self.pending.append("]")
            self.state = "s"
            return
        var = self.tmp()
        self.flush()
        self.emit(f"{var} = {expr}")
        self.branch(var, lambda: self.token(expr=var))

    def present(self, anchor: str) -> str:
        decl = self.decl
        if anchor in self.fields:
            kind, code = self.fields[anchor]
            return "True" if kind == "one" else f"len({code}) > 0"
        for k, rd in enumerate(decl.regions):
            if rd.name == anchor:
                return f"len(op.regions) > {k}"
        var = self.tmp()
        self.flush()
        self.emit(f"{var} = a.get({anchor!r})")
        a = decl.attr(anchor)
        if a is not None and a.kind in (AttrKind.NUMBER, AttrKind.LITERAL):
            return f"({var} is not None)"  # a literal false or 0 is a value
        if a is not None and a.kind == AttrKind.DICT:
            return f"bool({var})"  # an empty dictionary prints like an absent one
        return f"({var} is not None and {var} != () and {var} is not False)"

    def region_index(self, field: str) -> int:
        for k, rd in enumerate(self.decl.regions):
            if rd.name == field:
                return k
        raise _Unsupported

    def region_args(self, field: str) -> str:
        k = self.region_index(field)
        var = self.tmp("ra")
        self.flush()
        self.emit(
            f"{var} = op.regions[{k}].blocks[0].args "
            f"if len(op.regions) > {k} and op.regions[{k}].blocks else ()"
        )
        return var
