"""IR core: types, attribute sharing, compactness, declaration set boundary."""

import gc
import re
import sys
import tracemalloc
from pathlib import Path

import pytest

from loom import verify_module
from loom.errors import LoomPrintError
from loom.format.text.printer import print_module
from loom.importers import (
    KernelLaunchConfigSpec,
    NameAllocator,
    kernel_module_ops,
    sanitize_identifier,
    sanitize_symbol,
)
from loom.ir import F32, INDEX, DynamicDim, Operation, ScalarType, ScalarTypeKind, view_type
from loom.registry import default_registry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import count_ops, make_module  # noqa: E402


def test_scalar_types_are_interned_and_spelled() -> None:
    assert ScalarType(ScalarTypeKind.F32) is F32
    assert str(view_type(F32, 4, 8)) == "view<4x8xf32>"
    assert str(view_type(F32, DynamicDim())) == "view<[?]xf32>"
    assert F32.byte_size == 4 and INDEX.is_address and not F32.is_integer


def test_attributes_are_immutable_and_shared() -> None:
    a = Operation("scalar.cmpi", attributes={"predicate": "slt"})
    b = Operation("scalar.cmpi", attributes={"predicate": "slt"})
    assert a.attributes is b.attributes
    with pytest.raises(TypeError):
        a.attributes["predicate"] = "eq"  # type: ignore[index]
    one = Operation("scalar.constant", attributes={"value": 1})
    true = Operation("scalar.constant", attributes={"value": True})
    assert type(one.attributes["value"]) is int and type(true.attributes["value"]) is bool


def test_a_large_module_stays_under_300_bytes_per_op() -> None:
    make_module(100)  # warm caches (declaration plans, shared attributes)
    gc.collect()
    tracemalloc.start()
    try:
        module = make_module(20_000)
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_op = current / count_ops(module)
    assert per_op <= 300, f"{per_op:.0f} bytes per op"


def test_parsing_peaks_under_300_bytes_per_op() -> None:
    # Parser state must stay small next to the module it builds (peak, not just what is kept).
    from loom.format.text.parser import parse_module

    ops = kernel_module_ops("reference")
    text = print_module(make_module(20_000), ops=ops)
    parse_module(text, ops=ops)  # warm caches (plans, shared attributes)
    gc.collect()
    tracemalloc.start()
    try:
        module = parse_module(text, ops=ops)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_op = peak / count_ops(module)
    assert per_op <= 300, f"{per_op:.0f} bytes per op at the peak"


def test_op_outside_the_declaration_set_is_reported_not_printed() -> None:
    module = make_module(50)
    reg = default_registry()
    without_mulf = [d for d in reg if d.name != "scalar.mulf"]
    with pytest.raises(LoomPrintError, match="unknown op 'scalar.mulf'"):
        print_module(module, ops=without_mulf)
    diags = verify_module(module, ops=without_mulf)
    assert diags.has_errors
    assert any("unknown op 'scalar.mulf'" in d.message for d in diags.diagnostics)
    assert not verify_module(module, ops=reg).has_errors


def test_unknown_preset_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown target preset 'cuda'.*'reference'"):
        kernel_module_ops("cuda")


def test_launch_config_spec_pads_and_rejects() -> None:
    assert KernelLaunchConfigSpec(workgroup_size=(64,)).workgroup_size == (64, 1, 1)
    with pytest.raises(ValueError, match="at most 3"):
        KernelLaunchConfigSpec(workgroup_count=(1, 2, 3, 4))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("reference", "reference"),
        ("hip -mcpu=gfx1100", "hip_mcpu_gfx1100"),
        ("", "symbol"),
        ("9lives", "symbol_9lives"),
        ("__a..b__", "a_b"),
    ],
)
def test_sanitize_symbol(text: str, expected: str) -> None:
    assert sanitize_symbol(text) == expected


def test_sanitize_identifier_and_name_allocator() -> None:
    assert sanitize_identifier("%0x") == "_0x"
    assert sanitize_identifier("a b") == "a_b"
    names = NameAllocator()
    assert [names.reserve_or_fresh("x") for _ in range(3)] == ["x", "x_2", "x_3"]


def test_declarations_are_complete() -> None:
    reg = default_registry()
    assert len(reg) >= 90
    for d in reg:
        assert d.doc and d.doc.endswith(".") and "\n" not in d.doc, d.name
        assert d.examples, d.name
        assert d.name.split(".")[0] in {
            "target",
            "kernel",
            "index",
            "scalar",
            "scf",
            "buffer",
            "view",
            "func",
            "cfg",
            "check",
            "test",
            "vector",
            "encoding",
            "global",
            "config",
            "sanitizer",
        }


def test_no_op_name_is_spelled_outside_declarations_and_semantics() -> None:
    pattern = re.compile(
        r"[\"'](kernel|index|scalar|scf|buffer|view|func|target|cfg|check|test|vector"
        r"|encoding|global|config|sanitizer)\.[a-z_.0-9]+"
        r"[\"']"
    )
    offenders = []
    for path in (ROOT / "loom").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("loom/dialects/", "loom/interp/semantics/")):
            continue
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{rel}:{no}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def _tracked_module():  # noqa: ANN202
    from loom.format.text.parser import parse_module

    text = (ROOT / "tests" / "interp" / "kernels" / "vector_add_i32.loom").read_text()
    module = parse_module(text)
    module.version  # noqa: B018 - reading the version starts tracking
    return module


def _bumps(module, edit) -> bool:  # noqa: ANN001
    before = module.version
    edit()
    return module.version != before


def test_every_mutating_api_bumps_the_module_version() -> None:
    from loom.ir import Block, Region

    module = _tracked_module()
    add = next(op for op in module.walk() if op.name == "scalar.addi")
    block = next(op for op in module.walk() if op.name == "scf.if").regions[0].blocks[0]
    region = next(op for op in module.walk() if op.name == "scf.if").regions[0]
    value = add.results[0]
    edits = {
        "op name": lambda: setattr(add, "name", "scalar.subi"),
        "op operands": lambda: setattr(add, "operands", add.operands[::-1]),
        "op results": lambda: setattr(add, "results", add.results),
        "op attributes": lambda: setattr(add, "attributes", {"x": 1}),
        "op regions": lambda: setattr(add, "regions", ()),
        "op location": lambda: setattr(add, "location_id", 0),
        "op comments": lambda: setattr(add, "comments", ("note",)),
        "value name": lambda: setattr(value, "name", "renamed"),
        "value type": lambda: setattr(value, "type", value.type),
        "block args": lambda: setattr(block, "args", block.args),
        "block label": lambda: setattr(block, "label", "bb0"),
        "block trailing comments": lambda: setattr(block, "trailing_comments", ("x",)),
        "block ops assigned": lambda: setattr(block, "ops", list(block.ops)),
        "ops.append": lambda: block.ops.append(Operation("scalar.addi")),
        "ops.pop": lambda: block.ops.pop(),
        "ops.insert": lambda: block.ops.insert(0, Operation("scalar.addi")),
        "ops.remove": lambda: block.ops.remove(block.ops[0]),
        "ops.extend": lambda: block.ops.extend([Operation("scalar.addi")]),
        "ops +=": lambda: block.ops.__iadd__([Operation("scalar.addi")]),
        "ops[i] =": lambda: block.ops.__setitem__(0, Operation("scalar.addi")),
        "del ops[i]": lambda: block.ops.__delitem__(0),
        "ops.reverse": lambda: block.ops.reverse(),
        "ops.clear": lambda: block.ops.clear(),
        "region blocks assigned": lambda: setattr(region, "blocks", [Block()]),
        "blocks.append": lambda: region.blocks.append(Block()),
        "blocks.pop": lambda: region.blocks.pop(),
        "symbols[name] =": lambda: module.symbols.__setitem__("extra", add),
        "symbols.pop": lambda: module.symbols.pop("extra"),
        "module name": lambda: setattr(module, "name", "renamed"),
        "module body": lambda: setattr(module, "body", module.body),
        "trailing comments": lambda: setattr(module, "trailing_comments", ("end",)),
    }
    missed = [what for what, edit in edits.items() if not _bumps(module, edit)]
    assert not missed, f"no version bump for: {missed}"
    fresh = Region()
    add.regions = (fresh,)
    assert _bumps(module, lambda: fresh.blocks[0].ops.append(Operation("scalar.addi")))


def test_objects_attached_later_are_tracked_and_detached_ones_do_not_leak_edits() -> None:
    from loom.ir import Block, Region

    module = _tracked_module()
    op = Operation("scf.if", regions=(Region([Block()]),))
    inner = Operation("scalar.addi")
    op.regions[0].blocks[0].ops.append(inner)  # not tracked yet: no module owns it
    module.body.ops.append(op)
    assert _bumps(module, lambda: setattr(inner, "name", "scalar.subi"))
    other = _tracked_module()
    module.body.ops.remove(op)
    other.body.ops.append(op)  # moved: edits now bump the module that holds it
    assert _bumps(other, lambda: setattr(inner, "name", "scalar.addi"))


def test_tracking_costs_no_memory_per_op_and_leaves_reads_plain() -> None:
    kept = []
    # the first tracked module may make one-time things (tracked classes, caches): a warm-up
    # of the same size goes first and is not compared
    for n in (1_000, 1_000, 4_000):
        module = make_module(n)
        op = next(iter(module.walk()))
        size = sys.getsizeof(op)
        gc.collect()
        tracemalloc.start()
        try:
            module.version  # noqa: B018 - starts tracking
            # only what the IR allocated (frees of other tests' garbage do not count)
            ir = tracemalloc.Filter(True, str(ROOT / "loom" / "ir" / "*"))
            current = sum(t.size for t in tracemalloc.take_snapshot().filter_traces([ir]).traces)
        finally:
            tracemalloc.stop()
        kept.append(current)
        assert sys.getsizeof(op) == size
        assert isinstance(op, Operation) and type(op) is not Operation
    # only the module's tracked classes are kept: about the same for 1k and 4k ops (under
    # one byte for each of the ~3000 extra ops; other caches may allocate a little meanwhile)
    kept = kept[1:]
    assert abs(kept[1] - kept[0]) < 3_000 and kept[0] < 64 << 10, kept


def test_tracking_a_deeply_nested_module_does_not_recurse() -> None:
    from loom.ir import Block, Module, Region

    module = Module()
    block = module.body
    for _ in range(5_000):
        op = Operation("scf.if", regions=(Region([Block()]),))
        block.ops.append(op)
        block = op.regions[0].blocks[0]
    leaf = Operation("scalar.addi")
    block.ops.append(leaf)
    module.version  # noqa: B018
    assert _bumps(module, lambda: setattr(leaf, "name", "scalar.subi"))


def test_derived_state_is_rebuilt_after_an_edit_only() -> None:
    module = _tracked_module()
    builds = []

    def build(m) -> int:  # noqa: ANN001
        builds.append(m.version)
        return len(builds)

    assert module.derived("k", build) == 1
    assert module.derived("k", build) == 1
    module.name = "edited"
    assert module.derived("k", build) == 2
