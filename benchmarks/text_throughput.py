"""Text format throughput: parse, print and verify ops/s and parse memory per op.

Run ``python benchmarks/text_throughput.py [--sizes 1000,10000,100000]``. When xDSL is
installed (extra ``bench``), an equivalent module in MLIR generic syntax is parsed with xDSL in
the same run and the ratio is printed (also for printing, xDSL printing that module in generic
syntax). ``peak B/op`` is the peak traced allocation while parsing, ``kept B/op`` what the parsed
module still holds. Each size is measured twice: ``numbered`` prints most values by id (``%12``),
``named`` gives every value a name (``%x12``), which the parser keeps in dicts. Targets: parse
>= 150k ops/s, print >= 600k ops/s, <= 300 bytes/op kept in both variants, parse >= 30x xDSL,
linear growth. The last line counts the generated source compiled during the run (print
plans, parse line paths, verifier checks: only for the ops the module uses).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OPS, count_ops, make_module, measure, peak_bytes

from loom.format.text.codegen import generated_line_counts
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module, type_text
from loom.ir import Module, Operation, ScalarType
from loom.verify import verify_module


def mlir_generic(module: Module) -> str:
    """An equivalent module in MLIR generic syntax (builtin types stand in for Loom's)."""
    names: dict[int, str] = {}
    out: list[str] = ['"builtin.module"() ({']

    def name(v) -> str:  # noqa: ANN001
        n = names.get(id(v))
        if n is None:
            n = names[id(v)] = f"%v{len(names)}"
        return n

    def mtype(t) -> str:  # noqa: ANN001
        if isinstance(t, ScalarType):
            return "index" if t.spelling in ("index", "offset") else t.spelling
        return "memref<?xf32>" if type_text(t).startswith("view") else "memref<?xi8>"

    def attr(v) -> str:  # noqa: ANN001
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return f"{v} : i64"
        if isinstance(v, float):
            return f"{float(v)!r} : f64"
        if isinstance(v, tuple):
            return "array<i64: " + ", ".join(str(x) for x in v if isinstance(x, int)) + ">"
        return '"' + str(v) + '"'

    def op(o: Operation, indent: str) -> None:
        lhs = ", ".join(name(r) for r in o.results)
        head = f'{indent}{lhs + " = " if lhs else ""}"{o.name}"('
        head += ", ".join(name(v) for v in o.operands) + ")"
        attrs = ""
        if o.attributes:
            attrs = " {" + ", ".join(f"{k} = {attr(v)}" for k, v in o.attributes.items()) + "}"
        types = (
            f"({', '.join(mtype(v.type) for v in o.operands)}) -> "
            f"({', '.join(mtype(v.type) for v in o.results)})"
        )
        if not o.regions:
            out.append(f"{head}{attrs} : {types}")
            return
        out.append(head + " (")
        for k, region in enumerate(o.regions):
            out.append(indent + "  {")
            for block in region.blocks:
                args = ", ".join(f"{name(a)}: {mtype(a.type)}" for a in block.args)
                out.append(f"{indent}  ^bb0({args}):")
                for inner in block.ops:
                    op(inner, indent + "    ")
            out.append(indent + "  }" + ("," if k + 1 < len(o.regions) else ""))
        out.append(f"{indent}){attrs} : {types}")

    for o in module.ops:
        op(o, "  ")
    out.append("}) : () -> ()")
    return "\n".join(out) + "\n"


def xdsl_parser():  # noqa: ANN201
    """A function parsing MLIR generic text with xDSL, or None when xDSL is missing."""
    try:
        from xdsl.context import Context
        from xdsl.dialects.builtin import Builtin
        from xdsl.parser import Parser
    except ImportError:
        return None
    ctx = Context(allow_unregistered=True)
    ctx.load_dialect(Builtin)
    return lambda text: Parser(ctx, text).parse_module()


def xdsl_print(module) -> str:  # noqa: ANN001
    """Print an xDSL module in MLIR generic syntax (the baseline for print ratios)."""
    import io

    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def retained_bytes(fn) -> int:  # noqa: ANN001
    """Bytes ``fn``'s result still holds: traced allocations made by ``fn`` that are alive
    after a full collection, while the result is kept. The collection frees ``fn``'s garbage
    and empties CPython's free lists, whose few kilobytes of spare dicts and tuples belong to
    no module (they moved the figure by up to 4 B/op at 1k ops, with the allocation order)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return current


def named(module: Module) -> Module:
    """``module`` with every unnamed value given a name (``%x12``), as frontends write them."""
    for v in module.values:
        if v.name is None:
            v.name = f"x{v.id}"
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument(
        "--xdsl-max", type=int, default=10000, help="largest size parsed with xDSL (it is slow)"
    )
    ap.add_argument("--repeat", type=int, default=5, help="best of this many runs")
    args = ap.parse_args()
    xdsl = xdsl_parser()
    print(
        f"{'values':>8} {'ops':>8} {'parse ops/s':>12} {'print ops/s':>12} {'verify ops/s':>13} "
        f"{'peak B/op':>9} {'kept B/op':>9} {'xDSL ops/s':>11} {'parse/xDSL':>10} "
        f"{'xDSL print':>11} {'print/xDSL':>10}"
    )
    for size, variant in (
        (int(s), v) for s in args.sizes.split(",") for v in ("numbered", "named")
    ):
        module = make_module(size)
        if variant == "named":
            module = named(module)
        n = count_ops(module)
        text = print_module(module, ops=OPS)
        t_print, _ = measure(lambda m=module: print_module(m, ops=OPS), repeat=args.repeat)
        t_parse, parsed = measure(lambda t=text: parse_module(t, ops=OPS), repeat=args.repeat)
        assert print_module(parsed, ops=OPS) == text
        t_verify, _ = measure(lambda m=parsed: verify_module(m, ops=OPS), repeat=args.repeat)
        del parsed
        gc.collect()
        peak, _ = peak_bytes(lambda t=text: parse_module(t, ops=OPS))
        kept = retained_bytes(lambda t=text: parse_module(t, ops=OPS))
        line = (
            f"{variant:>8} {n:>8} {n / t_parse:>12,.0f} {n / t_print:>12,.0f} "
            f"{n / t_verify:>13,.0f} {peak / n:>9,.0f} {kept / n:>9,.0f}"
        )
        if xdsl is not None and size <= args.xdsl_max:
            generic = mlir_generic(module)
            t_x, xmod = measure(lambda g=generic: xdsl(g), repeat=1)
            t_xp, _ = measure(lambda m=xmod: xdsl_print(m), repeat=1)
            line += f" {n / t_x:>11,.0f} {t_x / t_parse:>9.1f}x"
            line += f" {n / t_xp:>11,.0f} {t_xp / t_print:>9.1f}x"
        else:
            line += f" {'-':>11} {'-':>10} {'-':>11} {'-':>10}"
        print(line, flush=True)
    counts = generated_line_counts()
    print(
        f"generated at run time: {sum(counts.values()):,} lines ("
        + ", ".join(f"{kind} {n:,}" for kind, n in counts.items())
        + ")"
    )


if __name__ == "__main__":
    main()
