"""The conformance runner (tools/conformance.py) on a small corpus written here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import conformance  # noqa: E402

TWICE = """func.def @twice(%x: index) -> (index) {
  %y = index.add %x, %x : index
  func.return %y : index
}
"""

ROUNDTRIP = f"""// RUN: roundtrip

// A comment above the op: our printer keeps it, upstream's drops it; both compare equal.
{TWICE}
// ====

func.def @uses_unknown(%x: index) {{
  %y = frob.nicate %x : index
  func.return
}}

// ====

{TWICE}
// ----
func.def @twice(%x: index) -> (index) {{
  %y = index.mul %x, %x : index
  func.return %y : index
}}

// ====

func.def @broken(%x: index) -> (index) {{
  %y = index.add %x, %x : index
  func.return %nowhere : index
}}
"""

VERIFY = """// RUN: verify

func.def @bounds(%lo: index, %hi: offset, %st: index) {
  // ERROR@+1: TYPE/001 "upper_bound" "offset" "index"
  scf.for %i = [%lo to %hi step %st] {
  }
  func.return
}

// ====

func.def @wrong_words(%lo: index, %hi: offset, %st: index) {
  // ERROR@+1: TYPE/001 "words this verifier never uses"
  scf.for %i = [%lo to %hi step %st] {
  }
  func.return
}

// ====

func.def @wrong_code(%lo: index, %hi: offset, %st: index) {
  // ERROR@+1: SHAPE/001
  scf.for %i = [%lo to %hi step %st] {
  }
  func.return
}

// ====

func.def @clean(%x: index) {
  func.return
}
"""

# No RUN line: the mode comes from the file name, as in one of upstream's files.
BYTECODE = TWICE + "\n// ====\n\nfunc.def @also_unknown() {\n  frob.nicate\n  func.return\n}\n"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "roundtrip.loom-test").write_text(ROUNDTRIP)
    (tmp_path / "alpha" / "verify.loom-test").write_text(VERIFY)
    (tmp_path / "alpha" / "fold.loom-test").write_text("// RUN: fold\n" + TWICE)
    (tmp_path / "beta" / "sub").mkdir(parents=True)
    (tmp_path / "beta" / "sub" / "bytecode.loom-test").write_text(BYTECODE)
    return tmp_path


def test_op_names_skip_comments_labels_and_region_punctuation() -> None:
    lines = [
        "// kernel.def is mentioned in a comment",
        "%a, %b = frob.pair %x : index",
        "^bb1(%v: i32):",
        "} else {",
        "  0 = (%p, %q),",
        "frob.top<x> @sym",
        "%c = frob.pair %a : index",
    ]
    assert conformance.op_names(lines) == ["frob.pair", "frob.top"]


def test_files_are_selected_by_kind_and_cases_classified(corpus: Path) -> None:
    files = [p.relative_to(corpus).as_posix() for _, p in conformance.corpus_files(corpus)]
    assert files == [
        "alpha/roundtrip.loom-test",
        "alpha/verify.loom-test",
        "beta/sub/bytecode.loom-test",
    ]
    results = conformance.run_corpus(corpus)
    assert [(r.file, r.in_scope) for r in results] == [
        ("alpha/roundtrip.loom-test", True),
        ("alpha/roundtrip.loom-test", False),
        ("alpha/roundtrip.loom-test", True),
        ("alpha/roundtrip.loom-test", True),
        ("alpha/verify.loom-test", True),
        ("alpha/verify.loom-test", True),
        ("alpha/verify.loom-test", True),
        ("alpha/verify.loom-test", True),
        ("beta/sub/bytecode.loom-test", True),
        ("beta/sub/bytecode.loom-test", False),
    ]
    assert results[1].unknown == ["frob.nicate"] and not results[1].outcomes


def test_each_mode_passes_and_fails_for_the_right_reason(corpus: Path) -> None:
    r = conformance.run_corpus(corpus)
    assert r[0].passed and set(r[0].outcomes) == {"text", "bytecode"}
    assert r[2].outcomes["text"].reason == "text: mismatch"
    assert "index.mul" in r[2].outcomes["text"].detail
    assert r[2].outcomes["bytecode"].ok  # our own print survives bytecode
    assert r[3].outcomes["text"].reason == "text: parse PARSE/001"
    assert not r[3].outcomes["bytecode"].ok
    assert r[4].passed and r[4].outcomes["verify"].codes_ok
    words = r[5].outcomes["verify"]
    assert words.reason == "verify: fragments differ TYPE/001" and words.codes_ok
    code = r[6].outcomes["verify"]
    assert code.reasons == ["verify: missing SHAPE/001", "verify: unexpected TYPE/001"]
    assert not code.codes_ok
    assert r[7].passed
    assert r[8].kind == "bytecode" and r[8].passed


def test_summary_counts_unknown_ops_and_reasons(corpus: Path) -> None:
    summary = conformance.summarize(conformance.run_corpus(corpus))
    assert summary["all"] == {"cases": 10, "in_scope": 8, "passed": 4}
    assert summary["unknown_ops"] == [("frob.nicate", 2)]
    assert summary["unknown_ops_by_dialect"] == {
        "alpha": [("frob.nicate", 1)],
        "beta": [("frob.nicate", 1)],
    }
    reasons = dict(summary["failure_reasons"])
    assert reasons["text: mismatch"] == 1
    assert reasons["verify: missing SHAPE/001"] == 1
    # Only cases without unknown dialects count as compute-dialect cases.
    assert summary["compute_dialects"]["cases"] == 8
    row = next(f for f in summary["files"] if f["file"] == "alpha/verify.loom-test")
    assert row["verify"] == [2, 4] and row["verify_codes"] == [3, 4]
    table = conformance.render_table(summary)
    assert "[total]" in table and "alpha/verify.loom-test" in table


def test_command_line_table_json_filter_and_failures(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert conformance.main([str(corpus), "--show-failures", "2"]) == 0
    out = capsys.readouterr().out
    assert "frob.nicate" in out and "=== alpha/roundtrip.loom-test:18" in out
    assert out.count("=== ") == 2
    assert conformance.main([str(corpus), "--json", "--dialect", "beta"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["all"] == {"cases": 2, "in_scope": 1, "passed": 1}
    assert conformance.main([str(corpus / "nowhere")]) == 2
