"""Trailing-comment trivia: parsed into blocks and the module, printed back, kept by bytecode."""

from __future__ import annotations

import pytest

from loom.errors import BytecodeError
from loom.format.bytecode import layout as L
from loom.format.bytecode import read_module, write_module
from loom.format.bytecode.encoding import decode_varint_stream, encode_varint_stream
from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import Module
from loom.ir.compare import module_diff

TEXT = """\
kernel.def @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%p: i1) {
  scf.if %p {
    // only a comment
  }
  kernel.return

  // after the terminator
}

// end one
// end two
"""


def test_trailing_comments_land_in_their_blocks() -> None:
    m = parse_module(TEXT)
    kernel = m.ops[0]
    launch = kernel.regions[-1].blocks[0]
    assert launch.trailing_comments == (" after the terminator",)
    assert launch.trailing_blank_line
    scf_if = launch.ops[0]
    assert scf_if.regions[0].blocks[0].trailing_comments == (" only a comment",)
    assert not scf_if.regions[0].blocks[0].trailing_blank_line
    assert m.trailing_comments == (" end one", " end two")
    assert m.body.trailing_blank_line
    assert all(not op.comments for op in m.walk())
    assert print_module(m) == TEXT


def test_module_trailing_comments_setter_and_print() -> None:
    m = Module()
    m.trailing_comments = [" a", " b"]  # type: ignore[assignment]
    assert m.body.trailing_comments == (" a", " b")
    assert print_module(m) == "// a\n// b\n"


def test_last_comment_of_the_file_without_newline_is_kept() -> None:
    text = TEXT.rstrip("\n")
    assert print_module(parse_module(text)) == TEXT


def _ir_ints(data: bytes) -> list[int]:
    from tests.test_bytecode_hostile import sections

    payload = dict(sections(data)[1])[L.SEC_IR]
    return decode_varint_stream(payload, 0, len(payload), "test")[0]


def test_bytecode_keeps_trailing_trivia() -> None:
    m = parse_module(TEXT, filename="t.loom")
    back = read_module(write_module(m))
    assert module_diff(m, back) is None
    assert print_module(back) == TEXT
    back.body.trailing_blank_line = False
    assert "blank line before the trailing comments" in (module_diff(m, back) or "")


def test_bytecode_refuses_a_trailing_blank_line_without_comments() -> None:
    from tests.test_bytecode_hostile import replace_section

    data = write_module(parse_module("target.generic<reference> @t\n"))
    ints = _ir_ints(data)
    assert ints[0] == 0  # the body block: no flags
    ints[0] = L.BLK_TRAILING_BLANK
    bad = replace_section(data, L.SEC_IR, encode_varint_stream(ints))
    with pytest.raises(BytecodeError, match="blank line before no comments"):
        read_module(bad)
