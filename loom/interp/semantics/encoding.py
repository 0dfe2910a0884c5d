"""Semantics of the encoding dialect: layout values address views; specs are compared.

Layout values are :class:`~loom.interp.memory.Layout` objects (dense, or per-axis element
strides); other encoding values are :class:`Encoding` records (static spec and dynamic
parameters). Assumptions return their operand: a false promise is undefined behaviour, which a
reference interpreter does not have to detect.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.interp.memory import Layout
from loom.interp.semantics import semantics
from loom.ir import DYNAMIC_INDEX
from loom.ir.encoding_spec import EncodingSpec, parse_spec


class Encoding:
    """A runtime encoding value: its static spec and its dynamic parameters by name."""

    __slots__ = ("spec", "params")

    def __init__(self, spec: EncodingSpec, params: dict[str, Any]) -> None:
        self.spec = spec
        self.params = params

    def __repr__(self) -> str:
        return f"<encoding {self.spec.text()}>"


_DENSE = Layout()


def layout_value(enc: Any) -> Layout:
    """The address layout meant by a view type's attachment: a runtime layout or encoding
    value, or a static spec text (``#dense``, ``#strided<stride=64>``...)."""
    if isinstance(enc, Layout):
        return enc
    if isinstance(enc, str):
        enc = Encoding(parse_spec(enc), {})
    if isinstance(enc, Encoding):
        return _spec_layout(enc.spec, enc.params)
    if isinstance(enc, EncodingSpec):
        return _spec_layout(enc, {})
    raise ValueError(f"{enc!r} is not an address layout")


def _spec_layout(spec: EncodingSpec, params: dict[str, Any]) -> Layout:
    family = spec.family
    if family in ("dense", "encoding.layout.dense"):
        return _DENSE
    if family == "encoding.layout.strided":
        return Layout(tuple(np.int64(s) for s in spec.get("strides", ())))
    if family == "strided":
        return Layout((np.int64(spec.get("stride", 1)),))
    inner = params.get("layout")
    if inner is not None:
        return layout_value(inner)
    inner = spec.get("layout")
    if isinstance(inner, EncodingSpec):
        return _spec_layout(inner, {})
    if family in ("physical_storage", "encoding.storage"):
        return _DENSE
    raise ValueError(f"#{family} is not an address layout")


@semantics("encoding.layout.dense")
def _dense(ctx: Any, step: Any) -> Layout:
    return _DENSE


@semantics("encoding.layout.strided")
def _strided(ctx: Any, step: Any, *dyn: Any) -> Layout:
    static = step.attrs.get("static_strides")
    if static is None:
        strides = tuple(dyn)
    else:
        it = iter(dyn)
        strides = tuple(next(it) if s == DYNAMIC_INDEX else np.int64(s) for s in static)
    for s in strides:
        ctx.check(step, s < 0, "RUNTIME/012", "a layout stride is negative ({})", s)
    return Layout(strides)


@semantics("encoding.define")
def _define(ctx: Any, step: Any, *params: Any) -> Any:
    spec = parse_spec(step.attrs["spec"])
    names = step.attrs.get("param_names")
    dyn = dict(zip(names.split(","), params)) if names else {}
    if spec.family in ("dense", "encoding.layout.dense", "strided", "encoding.layout.strided"):
        return _spec_layout(spec, dyn)
    return Encoding(spec, dyn)


@semantics("encoding.layout.assume.dense", "encoding.layout.assume.strided")
def _assume_layout(ctx: Any, step: Any, layout: Any) -> Any:
    return layout


@semantics("encoding.assume.spec", "encoding.assume.match")
def _assume(ctx: Any, step: Any, enc: Any) -> Any:
    return enc


def _spec(enc: Any) -> EncodingSpec | None:
    if isinstance(enc, Encoding):
        return enc.spec
    if isinstance(enc, Layout):
        return parse_spec("#encoding.layout.dense") if enc.strides is None else None
    return None


_QUANTIZED = ("q8_0", "ggml_q4_0", "ggml_q8_0", "turboquant_kv")


@semantics("encoding.isa")
def _isa(ctx: Any, step: Any, enc: Any) -> Any:
    spec = _spec(enc)
    category = step.attrs.get("category")
    family = spec.family if spec is not None else ""
    if category == "quantized":
        return np.bool_(family in _QUANTIZED or family.startswith("ggml."))
    if category == "layout":
        return np.bool_(isinstance(enc, Layout))
    return np.bool_(family == category)


@semantics("encoding.matches")
def _matches(ctx: Any, step: Any, enc: Any) -> Any:
    from loom.dialects.encoding import MATCH_FIELDS

    spec = _spec(enc)
    if spec is None:
        return np.bool_(False)
    want = {k: step.attrs[k] for k in MATCH_FIELDS if k in step.attrs}
    return np.bool_(all(spec.get(k) == v for k, v in want.items()))
