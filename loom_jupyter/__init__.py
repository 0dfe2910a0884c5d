"""Jupyter workbench for Loom (rich display, %%loom magic, stepper widget).

Load it with ``%load_ext loom_jupyter``: modules, diagnostics, verification results, launch
results and Loom errors raised in a cell are then shown highlighted, with each diagnostic under
its source line.
"""

from __future__ import annotations

from typing import Any

from loom_jupyter.display import (
    DiagnosticsView,
    LaunchView,
    ModuleView,
    SourceView,
    error_bundle,
    register_formatters,
    unregister_formatters,
)

__all__ = [
    "DiagnosticsView",
    "LaunchView",
    "ModuleView",
    "SourceView",
    "StepperWidget",
    "load_ipython_extension",
    "remember_source",
    "unload_ipython_extension",
]


def remember_source(filename: str, text: str) -> None:
    """Make ``text`` the contents of ``filename`` for diagnostics (frontend sources)."""
    from loom_jupyter.magic import remember_source as remember

    remember(filename, text)


def _show_loom_error(
    shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None
) -> list[str]:
    """Show a Loom error raised in a cell as diagnostics instead of a traceback."""
    from IPython.display import display

    from loom_jupyter.magic import _Bundle

    display(_Bundle(error_bundle(value)))
    return [f"{etype.__name__}: {value}"]


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext loom_jupyter``: formatters, the ``%%loom`` magic and the error handler."""
    from loom.errors import LoomError
    from loom_jupyter.magic import LoomMagics

    register_formatters(ip)
    ip.register_magics(LoomMagics)
    ip.set_custom_exc((LoomError,), _show_loom_error)


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext loom_jupyter``: remove the formatters and the error handler."""
    unregister_formatters(ip)
    ip.set_custom_exc((), None)


def __getattr__(name: str) -> Any:
    if name == "StepperWidget":
        from loom_jupyter.stepper import StepperWidget

        return StepperWidget
    raise AttributeError(name)
