"""The ``%%loom`` cell magic: parse and verify a cell, show the module or its diagnostics."""

from __future__ import annotations

import linecache
from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from loom.errors import LoomError
from loom.verify import verify_module
from loom_jupyter.display import ModuleView, SourceView, error_bundle
from loom_jupyter.render import summary


def cell_filename(name: str | None) -> str:
    """The stable source name given to a cell: ``NAME.loom`` or ``<cell>``."""
    return f"{name}.loom" if name else "<cell>"


def remember_source(filename: str, text: str) -> None:
    """Register ``text`` with :mod:`linecache` so diagnostics can quote its lines."""
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)


def run_cell(
    text: str,
    name: str | None = None,
    *,
    verify: bool = True,
    print_locations: bool = False,
    ops: Any = None,
) -> tuple[Any, Any]:
    """Parse (and verify) ``text``; returns ``(module or None, view to display)``."""
    from loom.format.text.parser import parse_module

    filename = cell_filename(name)
    remember_source(filename, text)
    try:
        module = parse_module(text, filename=filename, ops=ops)
    except LoomError as exc:
        if not exc.diagnostics:
            return None, _Bundle(error_bundle(exc))
        title = f"{filename}: {type(exc).__name__}: {summary(exc.diagnostics)}"
        return None, SourceView(text, filename, exc.diagnostics, title=title)
    if verify:
        result = verify_module(module, ops=ops)
        if result.diagnostics:
            view = SourceView(text, filename, result.diagnostics)
            return (None if result.has_errors else module), view
    title = f"{name} = module ({filename})" if name else None
    return module, ModuleView(module, ops=ops, print_locations=print_locations, title=title)


class _Bundle:
    """A fixed MIME bundle made displayable."""

    def __init__(self, bundle: dict[str, str]) -> None:
        self.bundle = bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.bundle


@magics_class
class LoomMagics(Magics):
    """``%%loom [NAME] [--print-locations] [--no-verify]``."""

    @magic_arguments()
    @argument(
        "name",
        nargs="?",
        default=None,
        help="bind the parsed module to this name in the user namespace",
    )
    @argument(
        "--print-locations",
        action="store_true",
        help="print each op's source location (loc(...)) in the shown module",
    )
    @argument("--no-verify", action="store_true", help="parse only; skip the verifier")
    @cell_magic
    def loom(self, line: str, cell: str) -> None:
        """Parse and verify Loom text; show the highlighted module or the diagnostics."""
        args = parse_argstring(self.loom, line)
        if args.name is not None and not args.name.isidentifier():
            display(_Bundle({"text/plain": f"%%loom: {args.name!r} is not a Python name"}))
            return
        module, view = run_cell(
            cell, args.name, verify=not args.no_verify, print_locations=args.print_locations
        )
        if module is not None and args.name:
            self.shell.user_ns[args.name] = module
        display(view)
