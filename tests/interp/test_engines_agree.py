"""The stepper checks what the grid engine checks: same findings, same codes, same places.

Both engines run every kernel of the corpus (``tests/interp/kernels``) and kernels with
deliberate races, uninitialised reads and divergent barriers; their findings are compared by
code, op line and workitem (and the line and workitem of the note naming the other access).

The two engines interleave workitems differently (lockstep vs one workitem after another), and
the sanitizer remembers the *last* access of every byte, so for a race between two different
ops whose workitems pick the bytes from data (the histogram) the pair each engine catches first
can differ; there the comparison is on the code and the pair of op lines.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_helpers import load  # noqa: E402
from test_stepper import KERNEL_NAME, RACE_FREE, _inputs  # noqa: E402

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import Stepper, launch

_WHO = re.compile(r"by (workgroup \([0-9, ]+\) workitem \([0-9, ]+\))")


def _who(text: str) -> str | None:
    m = _WHO.search(text)
    return m.group(1) if m else None


RACES = ("SANITIZE/002", "SANITIZE/003")


def findings_key(diags: list, schedule_free: bool = True) -> set:
    """(code, line, workitem, ((note line, note workitem), ...)) of every finding.

    A race is a pair of accesses: which of the two an engine meets second (and reports, with
    the other in a note) depends on how it interleaves workitems, so a race is keyed by the
    unordered pair. In a racy kernel what a read finds uninitialised also depends on the
    order; ``schedule_free=False`` keeps only the codes of such findings.
    """
    out = set()
    for d in diags:
        me = (d.range.line, _who(d.message))
        notes = tuple((n.range.line if n.range else None, _who(n.message)) for n in d.notes)
        if d.code in RACES:
            out.add((d.code, frozenset([me, *notes])))
        elif schedule_free:
            out.add((d.code, *me, notes))
        else:
            out.add((d.code,))
    return out


def op_pairs(diags: list) -> set:
    """(code, {line, note lines}) of every finding."""
    return {
        (d.code, frozenset([d.range.line, *(n.range.line for n in d.notes if n.range)]))
        for d in diags
    }


def both(module, kernel: str, workload: tuple, make_args) -> tuple[list, list]:  # noqa: ANN001
    """Findings of the grid engine and of the stepper, each on fresh arguments."""
    grid_args, step_args = make_args(), make_args()
    grid = launch(module, kernel, workload=workload, args=grid_args).findings
    s = Stepper(module, kernel, workload=workload, args=step_args)
    s.run()
    racy = any(d.code in ("SANITIZE/002", "SANITIZE/003") for d in grid)
    for a, b in zip(grid_args, step_args):
        if isinstance(a, np.ndarray) and not racy:  # a race's outcome depends on the order
            assert a.tobytes() == b.tobytes(), "the engines ended with different memory"
    return grid, s.findings


@pytest.mark.parametrize("name", RACE_FREE)
@pytest.mark.parametrize("size", [1, 37, 70])
def test_race_free_corpus_kernels_have_no_findings_in_either_engine(name: str, size: int) -> None:
    workload, _ = _inputs(name, size, 3)
    grid, stepped = both(
        load(name), KERNEL_NAME.get(name, name), workload, lambda: _inputs(name, size, 3)[1]
    )
    assert grid == [] and stepped == []


@pytest.mark.parametrize(
    ("name", "kernel", "workload", "make_args", "codes"),
    [
        ("uninit_read", "uninit", (), lambda: [np.zeros(16, np.int32)], {"SANITIZE/001"}),
        ("divergent_barrier", "divergent", (), lambda: [np.zeros(32, np.int32)], {"SANITIZE/004"}),
    ],
)
def test_buggy_corpus_kernels_agree(name, kernel, workload, make_args, codes) -> None:  # noqa: ANN001
    grid, stepped = both(load(name), kernel, workload, make_args)
    assert {d.code for d in grid} == codes
    assert findings_key(stepped) == findings_key(grid)


def test_the_racy_histogram_is_caught_on_the_same_ops() -> None:
    n = 200
    data = np.random.default_rng(1).integers(0, 1000, n).astype(np.int32)
    grid, stepped = both(
        load("histogram"), "histogram", (n,), lambda: [n, data.copy(), np.zeros(16, np.int32)]
    )
    # in lockstep the racing increments often write the same value (SANITIZE/003 too); one
    # workitem after another they never do
    assert {c for c, _ in op_pairs(stepped)} == {"SANITIZE/002"}
    assert {c for c, _ in op_pairs(grid)} >= {"SANITIZE/002"}
    lines = {line for _, pair in op_pairs(grid) for line in pair}
    assert lines == {line for _, pair in op_pairs(stepped) for line in pair} == {23, 25}


TEMPLATE = """target.generic<reference> @reference

kernel.def target(@reference) @k() {{
  %one = index.constant 1 : index
  %groups = index.constant {groups} : index
  %size = index.constant {size} : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%size, %one, %one) : index
}} launch(%out: buffer) {{
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %lane = kernel.workitem.id<x> : index
  %group = kernel.workgroup.id<x> : index
  %i = kernel.workitem.dispatch.id<x> : index
  %ov = buffer.view %out[%base] : buffer -> view<64xi32>
  %v = index.cast %i : index to i32
  %bytes = index.constant 256 : offset
  %wg_root = buffer.alloca<workgroup> %bytes : buffer
  %wg = buffer.view %wg_root[%base] : buffer -> view<64xi32>
{body}
  kernel.return
}}
"""

DELIBERATE = {
    # every workitem writes out[0], different values: SANITIZE/002 on the store
    "write-write": (1, 8, "view.store %v, %ov[%c0] : i32, view<64xi32>"),
    # the same value: SANITIZE/003 (a warning)
    "same-value": (
        2,
        4,
        "%z = scalar.constant 5 : i32\nview.store %z, %ov[%c0] : i32, view<64xi32>",
    ),
    # in-place shift left without a barrier: a write after another workitem's read
    "read-then-write": (
        1,
        8,
        "%n = index.add %lane, %c1 : index\n"
        "%x = view.load %ov[%n] : view<64xi32> -> i32\n"
        "view.store %x, %ov[%lane] : i32, view<64xi32>",
    ),
    # across workgroups through global memory: group g reads what group g+1 writes
    "across-groups": (
        4,
        2,
        "%n = index.add %i, %c1 : index\n"
        "%x = view.load %ov[%n] : view<64xi32> -> i32\n"
        "view.store %x, %ov[%i] : i32, view<64xi32>",
    ),
    # workgroup memory written and read by another workitem before the barrier
    "workgroup-no-barrier": (
        2,
        8,
        "view.store %v, %wg[%lane] : i32, view<64xi32>\n"
        "%n = index.add %lane, %c1 : index\n"
        "%x = view.load %wg[%n] : view<64xi32> -> i32\n"
        "view.store %x, %ov[%i] : i32, view<64xi32>",
    ),
    # the same with the barrier: no finding at all (lane 7 reads the unwritten word 8)
    "workgroup-barrier": (
        2,
        8,
        "view.store %v, %wg[%lane] : i32, view<64xi32>\n"
        "kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "%n = index.add %lane, %c1 : index\n"
        "%x = view.load %wg[%n] : view<64xi32> -> i32\n"
        "view.store %x, %ov[%i] : i32, view<64xi32>",
    ),
    # reads of workgroup memory nobody wrote
    "uninitialised": (
        2,
        4,
        "%x = view.load %wg[%lane] : view<64xi32> -> i32\n"
        "view.store %x, %ov[%i] : i32, view<64xi32>",
    ),
    # a barrier in each branch of an if: two different barriers, both divergent
    "two-barriers": (
        1,
        8,
        "%c4 = index.constant 4 : index\n"
        "%low = index.cmp slt, %lane, %c4 : index\n"
        "scf.if %low {\n"
        "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "} else {\n"
        "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "}\n"
        "view.store %v, %ov[%i] : i32, view<64xi32>",
    ),
    # some workitems finish without the barrier the others wait at
    "barrier-skipped": (
        2,
        4,
        "%c2 = index.constant 2 : index\n"
        "%low = index.cmp slt, %lane, %c2 : index\n"
        "scf.if %low {\n"
        "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "}\n"
        "view.store %v, %ov[%i] : i32, view<64xi32>",
    ),
    # a barrier in one case of an scf.switch on the lane id: only lane 1 reaches it
    "switch-case-barrier": (
        1,
        4,
        "scf.switch %lane {\n"
        "  case 1 {\n"
        "    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "  }\n"
        "  default {\n"
        "  }\n"
        "}\n"
        "view.store %v, %ov[%i] : i32, view<64xi32>",
    ),
    # the same through cfg.switch blocks that meet again at a join
    "cfg-switch-barrier": (
        1,
        4,
        "cfg.switch %lane cases [0, 2] -> [^zero, ^two] default ^join\n"
        "^zero:\n"
        "  cfg.br ^join\n"
        "^two:\n"
        "  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)\n"
        "  cfg.br ^join\n"
        "^join:\n"
        "  view.store %v, %ov[%i] : i32, view<64xi32>",
    ),
}
EXPECTED = {
    "write-write": {"SANITIZE/002"},
    "same-value": {"SANITIZE/003"},
    "read-then-write": {"SANITIZE/002"},
    "across-groups": {"SANITIZE/002"},
    "workgroup-no-barrier": {"SANITIZE/002", "SANITIZE/001"},
    "workgroup-barrier": {"SANITIZE/001"},
    "uninitialised": {"SANITIZE/001"},
    "two-barriers": {"SANITIZE/004"},
    "barrier-skipped": {"SANITIZE/004"},
    "switch-case-barrier": {"SANITIZE/004"},
    "cfg-switch-barrier": {"SANITIZE/004"},
}


@pytest.mark.parametrize("name", sorted(DELIBERATE))
def test_deliberate_bugs_are_reported_identically_by_both_engines(name: str) -> None:
    groups, size, body = DELIBERATE[name]
    text = TEMPLATE.format(
        groups=groups, size=size, body="\n".join("  " + ln for ln in body.splitlines())
    )
    module = parse_module(text, filename=f"{name}.loom")
    grid, stepped = both(module, "k", (), lambda: [np.zeros(64, np.int32)])
    assert {d.code for d in grid} == EXPECTED[name]
    racy = any(d.code in RACES for d in grid)
    assert findings_key(stepped, not racy) == findings_key(grid, not racy)


def test_runtime_errors_agree_too() -> None:
    x = np.arange(8, dtype=np.int32)
    errors = []
    for engine in ("grid", "stepper"):
        with pytest.raises(LoomRuntimeError) as info:
            if engine == "grid":
                launch(load("oob_read"), "shift_left", workload=(8,), args=(8, x, x.copy()))
            else:
                Stepper(load("oob_read"), "shift_left", workload=(8,), args=(8, x, x.copy())).run()
        d = info.value.diagnostics[0]
        errors.append((d.code, d.range.line, _who(d.message) or d.message.split(" in ")[-1]))
    assert errors[0] == errors[1]


def test_step_back_undoes_findings_and_sanitizer_state() -> None:
    groups, size, body = DELIBERATE["read-then-write"]
    text = TEMPLATE.format(
        groups=groups, size=size, body="\n".join("  " + ln for ln in body.splitlines())
    )
    module = parse_module(text, filename="rw.loom")
    s = Stepper(module, "k", args=(np.zeros(64, np.int32),))
    s.run()
    final = findings_key(s.findings)
    assert final
    while s.step_back():
        pass
    assert s.findings == []
    s.run()  # the replay meets the same races: shadow state was restored exactly
    assert findings_key(s.findings) == final


@pytest.mark.parametrize("name", sorted(DELIBERATE))
def test_the_steppers_quiet_path_changes_nothing(name: str, monkeypatch) -> None:
    from loom.interp import sanitizer

    groups, size, body = DELIBERATE[name]
    text = TEMPLATE.format(
        groups=groups, size=size, body="\n".join("  " + ln for ln in body.splitlines())
    )
    module = parse_module(text, filename=f"{name}.loom")
    runs = []
    for shortcuts in (True, False):
        monkeypatch.setattr(sanitizer, "SHORTCUTS", shortcuts)
        s = Stepper(module, "k", args=(np.zeros(64, np.int32),))
        s.run()
        runs.append([(d.code, d.message, d.range.line) for d in s.findings])
    assert runs[0] == runs[1]
