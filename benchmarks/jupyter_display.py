"""Notebook display cost: highlighted module bundles and stepper refreshes, with ratios.

Baselines in the same run: plain canonical printing (for the module bundle and the lexer) and a
bare ``Stepper.step()`` (for a stepper widget step that redraws its static picture).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from common import count_ops, make_module, measure

from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.highlight import LoomLexer
from loom.interp import Stepper
from loom_jupyter import ModuleView
from loom_jupyter.render import _highlighted
from loom_jupyter.stepper import StepperWidget

REVERSE = Path(__file__).resolve().parents[1] / "examples" / "kernels"


def module_rows(n: int) -> None:
    module = make_module(n)
    ops = count_ops(module)
    t_print, text = measure(lambda: print_module(module))
    t_lex, _ = measure(lambda: sum(1 for _ in LoomLexer().get_tokens(text)))

    def bundle():
        _highlighted.cache_clear()
        return ModuleView(module)._repr_mimebundle_()

    t_bundle, b = measure(bundle)
    print(
        f"module {ops:>6} ops: print {t_print * 1e3:8.1f} ms | lex {t_lex * 1e3:8.1f} ms "
        f"({t_lex / t_print:5.1f}x print) | html+plain bundle {t_bundle * 1e3:8.1f} ms "
        f"({t_bundle / t_print:5.1f}x print, {len(b['text/html']) / ops:6.0f} HTML bytes/op)"
    )


def stepper_rows(steps: int = 300) -> None:
    text = (REVERSE / "reverse_blocks_f32.loom").read_text()
    module = parse_module(text, filename="reverse_blocks_f32.loom")

    def bare():
        s = Stepper(
            module, "reverse_blocks_f32", workload=(4,), args=(4, np.arange(128, dtype=np.float32))
        )
        for _ in range(steps):
            s.step()

    def widget():
        w = StepperWidget(
            module, "reverse_blocks_f32", workload=(4,), args=(4, np.arange(128, dtype=np.float32))
        )
        for _ in range(steps):
            w.step()
            w.snapshot_bundle()

    t_bare, _ = measure(bare)
    t_widget, _ = measure(widget)
    print(
        f"stepper {steps} steps: bare {t_bare / steps * 1e6:8.1f} us/step | step + static "
        f"snapshot {t_widget / steps * 1e3:6.2f} ms/step ({t_widget / t_bare:6.1f}x bare)"
    )


if __name__ == "__main__":
    for n in (1_000, 10_000):
        module_rows(n)
    stepper_rows()
