"""The semantics table covers exactly the declared ops; engines never spell op names."""

from __future__ import annotations

import re
from pathlib import Path

from loom.interp.semantics import SEMANTICS, Control
from loom.registry import default_ops


def test_every_declared_op_has_semantics() -> None:
    declared = {d.name for d in default_ops()}
    assert len(declared) == 103
    assert declared - set(SEMANTICS) == set()
    assert set(SEMANTICS) - declared == set()
    for name, impl in SEMANTICS.items():
        assert callable(impl) or isinstance(impl, Control), name


def test_ops_with_regions_have_control_semantics() -> None:
    for d in default_ops():
        if d.regions and d.symbol_trait is None:
            assert isinstance(SEMANTICS[d.name], Control), d.name


def test_engines_do_not_spell_op_names() -> None:
    root = Path(__file__).parents[2] / "loom"
    names = {d.name for d in default_ops()}
    pattern = re.compile(r"[\"']([a-z_]+(?:\.[a-z0-9_]+)+)[\"']")
    files = [p for p in (root / "interp").rglob("*.py") if "semantics" not in p.parts]
    files.append(root / "cli" / "run.py")
    for path in files:
        spelled = set(pattern.findall(path.read_text())) & names
        assert not spelled, f"{path} spells {spelled}"
