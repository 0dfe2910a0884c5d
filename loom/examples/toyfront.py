"""A toy frontend: a tiny expression language compiled to a Loom kernel, with source locations.

One workitem per element: ``x`` is the element of the input buffer, ``lane`` the workitem's
index in its workgroup; the value of ``y`` at the end is stored to the output buffer::

    y = x * 3 + 1
    if x > 10: y = y - 10
    barrier

Statements are ``name = expr``, ``if expr: statement`` and ``barrier``; expressions use
``+ - * < > ==``, parentheses, integers and names (all ``i32``). The frontend records where
every op came from (``prog.toy:LINE:COL``) with ``location_id=``, and it is deliberately naive:
it does not check scoping or barrier placement, so the Loom verifier reports those problems,
pointing at the toy source. ``compile_toy(text)`` returns the module.
"""

from __future__ import annotations

import re

from loom.importers import (
    KernelArgumentSpec,
    KernelConfigArgumentSpec,
    KernelModuleSpec,
    create_kernel_module,
)
from loom.ir import I1, I32, INDEX, OFFSET, FileLocation, Module, Value, view_type

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(==|[-+*<>()=:]))")
_BINARY = {"+": "addi", "-": "subi", "*": "muli"}
_COMPARE = {"<": "slt", ">": "sgt", "==": "eq"}


class ToySyntaxError(ValueError):
    """Malformed toy source (message starts with ``file:line:col``)."""


class ToyCompiler:
    """Compiles toy source text into a Loom module, one statement per line."""

    def __init__(self, text: str, filename: str = "prog.toy") -> None:
        self.text, self.filename = text, filename
        shell = create_kernel_module(
            KernelModuleSpec(
                target_preset="reference",
                export_symbol="toy",
                callee="toy",
                arguments=(
                    KernelArgumentSpec(0, "n", INDEX),
                    KernelArgumentSpec(1, "input"),
                    KernelArgumentSpec(2, "output"),
                ),
                config_arguments=(KernelConfigArgumentSpec(0, "n"),),
            )
        )
        self.module: Module = shell.module
        self.module.source_texts[filename] = text
        self.source = self.module.add_source(filename)
        self.b = shell.builder
        self.block = shell.body_block
        self.n, self.input, self.output = (shell.body_arguments_by_ordinal[i] for i in range(3))

    def loc(self, line: int, col: int, end: int) -> int:
        """A location id for columns ``col``..``end`` of ``line`` (1-based, end exclusive)."""
        return self.module.add_location(FileLocation(self.source, line, col, line, end))

    def compile(self) -> Module:
        """Build the kernel body and return the module."""
        b = self.b
        with b.insertion_block(self.block), b.location(self.loc(1, 1, 1)):
            zero = b.index.constant(value=0, results=[OFFSET], name="base")
            t = view_type(I32, self.n)
            self.xv = b.buffer.view(buffer=self.input, byte_offset=zero, results=[t], name="xv")
            self.yv = b.buffer.view(buffer=self.output, byte_offset=zero, results=[t], name="yv")
            self.i = b.kernel.workitem_dispatch_id(dimension="x", results=[INDEX], name="i")
            lane = b.kernel.workitem_id(dimension="x", results=[INDEX], name="lane_index")
            self.env = {
                "x": b.view.load(view=self.xv, indices=[self.i], results=[I32], name="x"),
                "lane": b.index.cast(input=lane, results=[I32], name="lane"),
            }
            for line_no, line in enumerate(self.text.splitlines(), start=1):
                code = line.split("#", 1)[0]
                if code.strip():
                    self.tokens = [
                        (m.group(m.lastindex), m.start(m.lastindex) + 1, m.end(m.lastindex) + 1)
                        for m in _TOKEN.finditer(code)
                    ]
                    if sum(e - s for _, s, e in self.tokens) != len(code.replace(" ", "")):
                        raise self.error(line_no, 1, "unexpected character")
                    self.line, self.pos = line_no, 0
                    self.statement()
            if "y" in self.env:
                b.view.store(value=self.env["y"], view=self.yv, indices=[self.i])
            b.kernel.return_()
        return self.module

    def error(self, line: int, col: int, message: str) -> ToySyntaxError:
        """A syntax error at ``line:col``."""
        return ToySyntaxError(f"{self.filename}:{line}:{col}: {message}")

    def peek(self) -> str | None:
        """The next token's text."""
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, int, int]:
        """Consume a token (checking its text when ``expected`` is given)."""
        if self.pos >= len(self.tokens) or (expected and self.peek() != expected):
            col = self.tokens[self.pos][1] if self.pos < len(self.tokens) else 1
            raise self.error(self.line, col, f"expected {expected or 'more input'}")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def statement(self) -> None:
        """``barrier`` | ``if expr: statement`` | ``name = expr``."""
        word, col, end = self.take()
        if word == "barrier":
            self.b.kernel.barrier(
                memory_space="workgroup",
                scope="workgroup",
                ordering="acq_rel",
                location_id=self.loc(self.line, col, end),
            )
        elif word == "if":
            cond, _ = self.expr()
            self.take(":")
            region = self.b.region()
            with self.b.insertion_block(region.blocks[0]):
                self.statement()
            self.b.scf.if_(
                condition=cond,
                results=[],
                then_region=region,
                location_id=self.loc(self.line, col, end),
            )
        else:
            self.take("=")
            self.env[word], _ = self.expr()

    def expr(self, min_prec: int = 0) -> tuple[Value, int]:
        """Precedence climbing over ``== < >`` (0), ``+ -`` (1), ``*`` (2)."""
        lhs, start = self.atom()
        while self.peek() in ("+", "-", "*", "<", ">", "=="):
            op = self.peek()
            prec = 2 if op == "*" else 1 if op in "+-" else 0
            if prec < min_prec:
                break
            self.take()
            rhs, _ = self.expr(prec + 1)
            end = self.tokens[self.pos - 1][2]
            loc = self.loc(self.line, start, end)
            if op in _COMPARE:
                lhs = self.b.scalar.cmpi(
                    predicate=_COMPARE[op], lhs=lhs, rhs=rhs, results=[I1], location_id=loc
                )
            else:
                method = getattr(self.b.scalar, _BINARY[op])
                lhs = method(lhs=lhs, rhs=rhs, results=[I32], location_id=loc)
        return lhs, start

    def atom(self) -> tuple[Value, int]:
        """An integer, a name or a parenthesised expression."""
        text, col, end = self.take()
        if text == "(":
            value, _ = self.expr()
            self.take(")")
            return value, col
        if text.isdigit():
            loc = self.loc(self.line, col, end)
            return self.b.scalar.constant(value=int(text), results=[I32], location_id=loc), col
        if text not in self.env:
            raise self.error(self.line, col, f"unknown name '{text}'")
        return self.env[text], col


def compile_toy(text: str, filename: str = "prog.toy") -> Module:
    """Compile toy source to a Loom module (verify it with ``loom.verify.verify_module``)."""
    return ToyCompiler(text, filename).compile()
