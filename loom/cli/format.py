"""``loom-format``: check, rewrite or convert Loom text and bytecode."""

from __future__ import annotations

import argparse
import difflib
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from loom.cli.files import OwnerNotKept, replace_atomically
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
DEFAULT_MAX_INPUT = 256 << 20
"""Largest input read by default (256 MiB); ``--max-input-size`` changes it."""
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_DEVICE_TREES = ("/dev/", "/proc/")
"""Paths under these are never replaced by a new file, only written into."""

DESCRIPTION = """\
Check, rewrite or convert Loom modules.

  loom-format --check FILE...       parse, verify and compare with the canonical text
  loom-format --in-place FILE...    rewrite valid, non-canonical files (atomically)
  loom-format [IN] [-o OUT] [--from auto|text|bc] [--to text|bc]
                                    convert one module (default: stdin to stdout as text)

'-' names stdin. Diagnostics go to stderr.

Output safety: a regular output file is replaced atomically (a temporary file in the same
folder, fsync, rename, fsync of the folder) keeping its mode and owner; a symlink is followed
and its target replaced, the link kept. An existing FIFO, device or /dev/stdout is written
into, never replaced. A file or folder that cannot be written is an error and stays as it was.
Inputs larger than --max-input-size (default 256M) are refused.
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
    p.add_argument(
        "--max-input-size",
        type=parse_size,
        default=DEFAULT_MAX_INPUT,
        metavar="SIZE",
        help="refuse inputs larger than SIZE bytes (suffix K, M or G; default 256M)",
    )
    return p


def parse_size(text: str) -> int:
    """A byte count such as ``4096``, ``64K``, ``256M`` or ``1G`` (binary units)."""
    s = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = s[-1] if s and s[-1] in "kmg" else ""
    digits = s[: len(s) - len(unit)]
    if not digits.isascii() or not digits.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 4096, 64K, 256M, 1G)")
    return int(digits) * _UNITS[unit]


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


def _read(name: str, limit: int) -> _Input:
    """The bytes of ``name`` ('-' is stdin), refusing more than ``limit`` bytes."""
    shown = "<stdin>" if name == "-" else name
    try:
        if name == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(name, "rb") as f:
                st = os.fstat(f.fileno())
                if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                    _too_large(shown, limit)
                # Streams and devices (/dev/zero) have no size: read one byte past the limit.
                data = f.read(limit + 1)
    except OSError as e:
        _err(f"loom-format: error: cannot read {name}: {e.strerror or e}")
        raise _Fail from None
    if len(data) > limit:
        _too_large(shown, limit)
    return _Input(shown, data)


def _too_large(name: str, limit: int) -> None:
    _err(
        f"loom-format: error: {name} is larger than the input limit of {human_size(limit)} "
        "(raise it with --max-input-size)"
    )
    raise _Fail


def human_size(n: int) -> str:
    """``n`` bytes as ``256 MiB`` when it is a whole number of binary units."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


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
            inp = _read(name, args.max_input_size)
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
        valid = False
        try:
            target = os.path.realpath(name)  # through a symlink: rewrite the target, keep the link
            st = _stat(name)
            if st is not None and not stat.S_ISREG(st.st_mode):
                _err(f"loom-format: error: {name}: --in-place rewrites regular files only")
                raise _Fail
            inp = _read(name, args.max_input_size)
            if _is_bytecode(inp, args.src):
                _err(f"{name}: error: --in-place rewrites text files only")
                raise _Fail
            module, text = _load(inp, "text")
            canonical = _print(module, args.print_locations)
            valid = True
            if canonical == text:
                unchanged += 1
                continue
            _replace(target, canonical.encode("utf-8"), st, shown=name)
            changed += 1
            _err(f"{name}: reformatted")
        except _Fail:
            failed += 1
            _err(f"{name}: {'not written' if valid else 'invalid'}, left unchanged")
    _err(f"loom-format: {changed} changed, {unchanged} unchanged, {failed} failed")
    return EXIT_INVALID if failed else EXIT_OK


def _stat(name: str) -> os.stat_result | None:
    """``os.stat`` (following symlinks); None when nothing exists there."""
    try:
        return os.stat(name)
    except FileNotFoundError:
        return None
    except OSError as e:
        _err(f"loom-format: error: cannot write {name}: {e.strerror or e}")
        raise _Fail from None


def _in_device_tree(name: str) -> bool:
    """True when ``name`` or any symlink on the way to its target lies under /dev or /proc.

    ``/dev/stdout`` leads through ``/proc/self/fd/1`` to whatever stdout is, possibly a regular
    file: such outputs are written into like a terminal, never renamed over.
    """
    path = os.path.abspath(name)
    for _ in range(40):  # the kernel's own limit on symlink hops
        if path.startswith(_DEVICE_TREES):
            return True
        try:
            link = os.readlink(path)
        except OSError:
            break
        path = os.path.normpath(os.path.join(os.path.dirname(path), link))
    return os.path.realpath(name).startswith(_DEVICE_TREES)


def _write_output(name: str, data: bytes) -> None:
    """Write the conversion output to ``name`` (see the DESCRIPTION's output safety)."""
    st = _stat(name)
    if st is not None and stat.S_ISDIR(st.st_mode):
        _err(f"loom-format: error: cannot write {name}: it is a directory")
        raise _Fail
    if (st is not None and not stat.S_ISREG(st.st_mode)) or _in_device_tree(name):
        _write_into(name, data)
    else:
        _replace(os.path.realpath(name), data, st, shown=name)


def _write_into(name: str, data: bytes) -> None:
    """Write into an existing FIFO, device or terminal (the node itself stays as it is)."""
    try:
        with open(name, "wb") as f:
            f.write(data)
    except OSError as e:
        _err(f"loom-format: error: cannot write {name}: {e.strerror or e}")
        raise _Fail from None


def _replace(target: str, data: bytes, st: os.stat_result | None, shown: str) -> None:
    """Atomically and durably replace (or create) the regular file ``target``.

    An existing file must be writable by us (a read-only file is never silently replaced) and
    keeps its mode, owner and group; if the owner cannot be kept the file is left as it was.
    """
    try:
        if st is not None:
            os.close(os.open(target, os.O_WRONLY))  # the permission check the kernel would make
        replace_atomically(
            target, lambda f: f.write(data), prefix=".loom-format-", suffix=".tmp", like=st
        )
    except OwnerNotKept as e:
        _err(f"loom-format: error: cannot write {shown}: {e}")
        raise _Fail from None
    except OSError as e:
        _err(f"loom-format: error: cannot write {shown}: {e.strerror or e}")
        raise _Fail from None


def _convert(args: argparse.Namespace) -> int:
    if len(args.inputs) > 1:
        _err(
            "loom-format: error: conversion takes one input (use --check or --in-place "
            "for several files)"
        )
        return EXIT_INVALID
    inp = _read(args.inputs[0] if args.inputs else "-", args.max_input_size)
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
        _write_output(args.output, data)
    else:
        out: IO[bytes] = sys.stdout.buffer
        out.write(data)
        out.flush()
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
