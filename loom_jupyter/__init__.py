"""Jupyter workbench for Loom (rich display, %%loom magic, stepper widget).

Load it with ``%load_ext loom_jupyter``: modules, diagnostics, verification results, launch
results and Loom errors raised in a cell are then shown highlighted, with each diagnostic under
its source line.
"""

from __future__ import annotations

from typing import Any

from loom_jupyter.display import (
    CheckReportView,
    DiagnosticsView,
    LaunchView,
    ModuleView,
    SourceView,
    error_bundle,
    register_formatters,
    unregister_formatters,
)

__all__ = [
    "CheckReportView",
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
    """``%load_ext loom_jupyter``: formatters, the ``%%loom`` magic and the error handler.

    Loading is idempotent, and a second ``%load_ext loom_jupyter`` prints nothing (IPython's
    "already loaded" notice would make a notebook run twice differ from one run once).
    """
    from loom.errors import LoomError
    from loom_jupyter.magic import LoomMagics

    register_formatters(ip)
    ip.register_magics(LoomMagics)
    ip.set_custom_exc((LoomError,), _show_loom_error)
    _quiet_second_load(ip)


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext loom_jupyter``: remove the formatters and the error handler."""
    unregister_formatters(ip)
    ip.set_custom_exc((), None)
    _restore_load_ext(ip)


def _quiet_second_load(ip: Any) -> None:
    """Wrap ``%load_ext`` so that naming this extension while it is loaded says nothing; every
    other use goes to IPython's own magic unchanged (restored on unload)."""
    line_magics = ip.magics_manager.magics["line"]
    original = line_magics.get("load_ext")
    if original is None or getattr(original, "_loom_wrapped", None) is not None:
        return

    def load_ext(line: str) -> Any:
        manager = getattr(ip, "extension_manager", None)
        if line.strip() == __name__ and manager is not None and __name__ in manager.loaded:
            return None  # already loaded: loading again would change nothing
        return original(line)

    load_ext.__doc__ = original.__doc__
    load_ext._loom_wrapped = original  # type: ignore[attr-defined]
    ip.register_magic_function(load_ext, "line", "load_ext")


def _restore_load_ext(ip: Any) -> None:
    line_magics = ip.magics_manager.magics["line"]
    original = getattr(line_magics.get("load_ext"), "_loom_wrapped", None)
    if original is not None:
        line_magics["load_ext"] = original
        user = ip.magics_manager.user_magics
        if user is not None and "load_ext" in vars(user):
            delattr(user, "load_ext")


def __getattr__(name: str) -> Any:
    if name == "StepperWidget":
        from loom_jupyter.stepper import StepperWidget

        return StepperWidget
    raise AttributeError(name)
