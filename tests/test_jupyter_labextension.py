"""The prebuilt JupyterLab extension: built from the current declarations and sources."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "loom_jupyter" / "labextension"


def _generate():
    spec = importlib.util.spec_from_file_location(
        "labext_generate", ROOT / "labextension" / "generate.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bundle_is_built_from_the_current_inputs() -> None:
    gen = _generate()
    assert gen.recorded_hash() is not None, "the bundle was never stamped: run `make labextension`"
    assert gen.recorded_hash() == gen.inputs_hash(), (
        "loom_jupyter/labextension is out of date (op declarations, output styles or "
        "labextension/ sources changed since it was built): run `make labextension`"
    )


def test_committed_generated_sources_match_the_declarations() -> None:
    gen = _generate()
    for name, text in gen.generated().items():
        assert (ROOT / "labextension" / name).read_text() == text, (
            f"labextension/{name} is stale: run `make labextension`"
        )


def test_word_list_comes_from_the_registry() -> None:
    from loom.highlight import loom_words

    words = _generate().words()
    assert set(words["ops"]) == set(loom_words().ops)
    assert "f32" in words["types"]


def test_hash_notices_a_new_op(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _generate()
    before = gen.inputs_hash()
    real = gen.words

    def more() -> dict[str, list[str]]:
        w = real()
        return {**w, "ops": sorted([*w["ops"], "buffer.brand_new_op"])}

    monkeypatch.setattr(gen, "words", more)
    assert gen.inputs_hash() != before


def test_bundle_declares_the_extension_and_ships_its_style() -> None:
    meta = json.loads((BUNDLE / "package.json").read_text())
    assert meta["name"] == "loom-jupyterlab"
    build = meta["jupyterlab"]["_build"]
    assert (BUNDLE / build["load"]).exists()
    assert (BUNDLE / "static" / Path(build["load"]).name).exists()
    assert (BUNDLE / "static" / "style.js").exists()
    js = "".join(p.read_text() for p in (BUNDLE / "static").glob("*.js"))
    assert "text/x-loom" in js and "%%loom" in js
    assert "kernel.barrier" in js, "op names are compiled into the bundle"
    assert ".loom-out .loom-code" in js, "the output stylesheet is bundled"


def test_wheel_puts_the_bundle_where_jupyter_looks() -> None:
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = cfg["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["loom_jupyter/labextension"] == "share/jupyter/labextensions/loom-jupyterlab"
    extras = cfg["project"]["optional-dependencies"]
    assert any(r.startswith("notebook") for r in extras["jupyter"])
