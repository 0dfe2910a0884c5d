"""The Pygments lexer: registry-driven word classes, no error tokens, entry-point registration."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Comment, Error, Keyword, Name, Number, String, Text

from loom.highlight import LoomLexer, loom_words
from loom.ir import SCALAR_TYPES
from loom.registry import default_registry

EXAMPLES = [(d.name, i, e.text) for d in default_registry() for i, e in enumerate(d.examples)]
KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"


def tokens(text: str) -> list[tuple[object, str]]:
    return [(t, v) for t, v in LoomLexer().get_tokens(text) if v.strip()]


@pytest.mark.parametrize(("name", "i", "text"), EXAMPLES, ids=[f"{n}-{i}" for n, i, _ in EXAMPLES])
def test_every_example_token_is_classified(name: str, i: int, text: str) -> None:
    toks = tokens(text)
    vague = [(t, v) for t, v in toks if t in Error or t is Text or t is Name or t is Name.Other]
    assert not vague, f"{name} example {i}: unclassified tokens {vague}"
    if name in text:  # implicit terminators never appear in text
        assert (Name.Builtin, name) in toks, f"op name {name} not highlighted as an op"


def test_lexer_round_trips_text() -> None:
    text = "".join(t for _, _, t in EXAMPLES)
    out = "".join(v for _, v in LoomLexer().get_tokens(text))
    assert out.rstrip("\n") == text.rstrip("\n")


def test_word_classes_come_from_the_registry() -> None:
    words = loom_words()
    assert words.ops == frozenset(default_registry().names)
    assert set(SCALAR_TYPES) <= words.types
    enum_cases = {c for d in default_registry() for a in d.attrs if a.enum for c in a.enum.cases}
    assert enum_cases - words.types <= words.constants


def test_sample_tokens() -> None:
    text = (
        "// c = a + b\n"
        "target.generic<reference> @reference {subgroup_size = 64}\n"
        "  %v = view.load %all[%i] : view<[%count]x4xf32> -> f32\n"
        "  %h = scalar.constant -1.5e3 : f32\n"
        "  %s = buffer.alloca<workgroup> align(16) %n : buffer\n"
        '  kernel.def export("a\\n\\u0041") @k.x() {\n'
        "^bb0(%a: i32):\n"
    )
    toks = tokens(text)
    assert toks[0] == (Comment.Single, "// c = a + b")
    assert (Name.Builtin, "target.generic") in toks
    assert (Name.Constant, "reference") in toks
    assert (Name.Function, "@reference") in toks
    assert (Name.Attribute, "subgroup_size") in toks
    assert (Name.Variable, "%count") in toks
    assert (Number.Integer, "4") in toks
    assert (Keyword.Type, "f32") in toks
    assert (Keyword.Type, "view") in toks
    assert (Number.Float, "-1.5e3") in toks
    assert (Name.Constant, "workgroup") in toks
    assert (Keyword, "align") in toks
    assert (String.Escape, "\\n") in toks and (String.Escape, "\\u0041") in toks
    assert (Name.Function, "@k.x") in toks
    assert (Name.Label, "^bb0") in toks


def test_corpus_directives_are_special_comments() -> None:
    toks = tokens("// RUN: verify\n// ====\n// ERROR@+1: TYPE/003 x\n")
    assert [t for t, _ in toks] == [Comment.Special] * 3


def test_unknown_dotted_name_is_not_an_op() -> None:
    assert (Name.Other, "nope.op") in tokens("nope.op %a")


@given(st.text(alphabet='%@^#"\\/<>[](){}=:,-x0123456789.abc \n\tfi', max_size=80))
def test_lexer_never_loses_text(text: str) -> None:
    out = "".join(v for _, v in LoomLexer(stripnl=False, ensurenl=False).get_tokens(text))
    assert out == text


def test_registered_via_pygments() -> None:
    assert isinstance(get_lexer_by_name("loom"), LoomLexer)
    assert isinstance(get_lexer_for_filename("x.loom"), LoomLexer)
    assert isinstance(get_lexer_for_filename("x.loom-test"), LoomLexer)


def test_pygmentize_command(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("pygmentize")
    cmd = [str(exe)] if exe.exists() else [shutil.which("pygmentize") or "pygmentize"]
    src = KERNELS / "vector_add_i32.loom"
    out = subprocess.run(
        [*cmd, "-l", "loom", "-f", "raw", str(src)], capture_output=True, text=True, check=True
    ).stdout
    assert "Token.Name.Builtin\t'scalar.addi'" in out
    assert "Token.Error" not in out
