"""``loom-format``: check, rewrite or convert Loom text and bytecode."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from loom.diagnostic_sources import PrintedModules
from loom.diagnostics import LoomDiagnosticError
from loom.errors import LoomError
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import Module
from loom.verify import verify_module

EXIT_OK = 0
EXIT_NONCANONICAL = 1
EXIT_INVALID = 2
BYTECODE_MAGIC = b"LOOM"

DESCRIPTION = """\
Check, rewrite or convert Loom modules.

  loom-format --check FILE...       parse, verify and compare with the canonical text
  loom-format --in-place FILE...    rewrite valid, non-canonical files (atomically)
  loom-format [IN] [-o OUT] [--from auto|text|bc] [--to text|bc]
                                    convert one module (default: stdin to stdout as text)

'-' names stdin. Diagnostics go to stderr.
"""

EPILOG = """\
exit status:
  0  every input is valid (and, with --check, canonical)
  1  --check: some input is valid but not canonical (a unified diff is printed)
  2  some input is invalid (parse or verify error, unreadable, bad bytecode)
"""


class _Fail(Exception):
    """A user-facing failure already reported to stderr."""


@dataclass
class _Input:
    name: str
    data: bytes


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="loom-format",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--check",
        action="store_true",
        help="report files that are invalid or not canonical; write nothing",
    )
    mode.add_argument(
        "--in-place",
        action="store_true",
        help="rewrite valid non-canonical text files; never touch invalid ones",
    )
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files ('-' for stdin)")
    p.add_argument("-o", "--output", metavar="OUT", help="conversion output (default: stdout)")
    p.add_argument(
        "--from",
        dest="src",
        choices=("auto", "text", "bc", "bytecode"),
        default="auto",
        help="input format (auto sniffs the bytecode magic)",
    )
    p.add_argument(
        "--to",
        dest="dst",
        choices=("text", "bc", "bytecode"),
        default="text",
        help="output format of the conversion (default: text)",
    )
    p.add_argument(
        "--print-locations", action="store_true", help="print loc(...) annotations in text output"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run loom-format; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if (args.check or args.in_place) and (args.output or args.dst != "text"):
        parser.error("-o/--to only apply to conversion mode")
    try:
        if args.check:
            return _check(args)
        if args.in_place:
            return _in_place(args)
        return _convert(args)
    except _Fail:
        return EXIT_INVALID
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK


# ---------------------------------------------------------------------- helpers


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _read(name: str) -> _Input:
    try:
        if name == "-":
            return _Input("<stdin>", sys.stdin.buffer.read())
        with open(name, "rb") as f:
            return _Input(name, f.read())
    except OSError as e:
        _err(f"loom-format: error: cannot read {name}: {e.strerror or e}")
        raise _Fail from None


def _is_bytecode(inp: _Input, src: str) -> bool:
    if src == "auto":
        return inp.data.startswith(BYTECODE_MAGIC)
    return src in ("bc", "bytecode")


def _bytecode():  # noqa: ANN202
    try:
        from loom.format.bytecode import reader, writer
    except ImportError as e:
        _err(f"loom-format: error: bytecode support is not available ({e})")
        raise _Fail from None
    return reader, writer


def _load(inp: _Input, src: str, print_locations: bool = False) -> tuple[Module, str | None]:
    """Parse (or decode) and verify; returns the module and the decoded text (None for bc)."""
    if _is_bytecode(inp, src):
        reader, _ = _bytecode()
        try:
            module = reader.read_module(inp.data, verify=False, filename=inp.name)
        except LoomError as e:
            _report(inp.name, e)
            raise _Fail from None
        text = None
    else:
        try:
            text = inp.data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = inp.data[: e.start].count(b"\n") + 1
            _err(
                f"{inp.name}:{line}: error: the file is not valid UTF-8 (byte "
                f"0x{inp.data[e.start]:02x} at offset {e.start})"
            )
            raise _Fail from None
        try:
            module = parse_module(text, filename=inp.name)
        except LoomError as e:
            _report(inp.name, e)
            raise _Fail from None
    diags = verify_module(module, printed=PrintedModules())
    for d in diags:
        _err(d.render())
    if diags.has_errors:
        raise _Fail
    return module, text


def _report(name: str, e: LoomError) -> None:
    if e.diagnostics:
        for d in e.diagnostics:
            _err(d.render())
    else:
        _err(f"{name}: error: {e}")


def _print(module: Module, print_locations: bool) -> str:
    try:
        return print_module(module, print_locations=print_locations)
    except LoomError as e:
        _report("<output>", e)
        raise _Fail from None


def _diff(name: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), f"{name} (current)", f"{name} (canonical)"
        )
    )


# ---------------------------------------------------------------------- modes


def _check(args: argparse.Namespace) -> int:
    names = args.inputs or ["-"]
    invalid = noncanonical = 0
    for name in names:
        try:
            inp = _read(name)
            module, text = _load(inp, args.src)
        except _Fail:
            invalid += 1
            _err(f"{name}: invalid")
            continue
        if text is None:
            continue
        canonical = _print(module, args.print_locations)
        if canonical != text:
            noncanonical += 1
            sys.stdout.write(_diff(inp.name, text, canonical))
            _err(f"{name}: not canonical")
    ok = len(names) - invalid - noncanonical
    _err(f"loom-format: {ok} ok, {noncanonical} not canonical, {invalid} invalid")
    if invalid:
        return EXIT_INVALID
    return EXIT_NONCANONICAL if noncanonical else EXIT_OK


def _in_place(args: argparse.Namespace) -> int:
    if not args.inputs or "-" in args.inputs:
        _err("loom-format: error: --in-place needs file names (not stdin)")
        return EXIT_INVALID
    changed = unchanged = failed = 0
    for name in args.inputs:
        try:
            inp = _read(name)
            if _is_bytecode(inp, args.src):
                _err(f"{name}: error: --in-place rewrites text files only")
                raise _Fail
            module, text = _load(inp, "text")
            canonical = _print(module, args.print_locations)
            if canonical == text:
                unchanged += 1
                continue
            _atomic_write(name, canonical.encode("utf-8"))
            changed += 1
            _err(f"{name}: reformatted")
        except _Fail:
            failed += 1
            _err(f"{name}: invalid, left unchanged")
    _err(f"loom-format: {changed} changed, {unchanged} unchanged, {failed} failed")
    return EXIT_INVALID if failed else EXIT_OK


def _atomic_write(name: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(name))
    fd, tmp = tempfile.mkstemp(prefix=".loom-format-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(name).st_mode & 0o7777)
        os.replace(tmp, name)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _err(f"loom-format: error: cannot write {name}: {e.strerror or e}")
        raise _Fail from None


def _convert(args: argparse.Namespace) -> int:
    if len(args.inputs) > 1:
        _err(
            "loom-format: error: conversion takes one input (use --check or --in-place "
            "for several files)"
        )
        return EXIT_INVALID
    inp = _read(args.inputs[0] if args.inputs else "-")
    module, _ = _load(inp, args.src)
    if args.dst == "text":
        data = _print(module, args.print_locations).encode("utf-8")
    else:
        _, writer = _bytecode()
        try:
            data = writer.write_module(module)
        except (LoomError, LoomDiagnosticError) as e:
            _report(inp.name, e)
            raise _Fail from None
    if args.output and args.output != "-":
        if os.path.exists(args.output):
            _atomic_write(args.output, data)
        else:
            _write_new(args.output, data)
    else:
        out: IO[bytes] = sys.stdout.buffer
        out.write(data)
        out.flush()
    return EXIT_OK


def _write_new(name: str, data: bytes) -> None:
    try:
        with open(name, "wb") as f:
            f.write(data)
    except OSError as e:
        _err(f"loom-format: error: cannot write {name}: {e.strerror or e}")
        raise _Fail from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
