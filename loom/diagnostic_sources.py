"""Source-text providers handed to diagnostics rendering (the printed module for ops that have
no source location).

Rendering (:mod:`loom.diagnostics`) does not import the printer; callers that want the printed
fallback pass one of these: ``d.render(printed=PrintedModules())``.
"""

from __future__ import annotations

from collections.abc import Mapping

from loom.format.text.printer import Printer
from loom.ir import Module


def printed_module(module: Module) -> tuple[str, Mapping[int, int]] | None:
    """The module's canonical text and the line of each op (None when it cannot be printed)."""
    printer = Printer(None)
    try:
        text = printer.print_module(module)
    except Exception:  # a module too broken to print (any error): no fallback line to show
        return None
    return text, dict(printer.op_lines)


class PrintedModules:
    """A :data:`~loom.diagnostics.PrintedText` provider.

    Each module is printed once however many diagnostics point into it: the text is kept on the
    module (:meth:`~loom.ir.Module.derived`) until the module is next edited.
    """

    __slots__ = ()

    def __call__(self, module: Module) -> tuple[str, Mapping[int, int]] | None:
        return module.derived(printed_module, printed_module)
