"""The README's example runs and prints the output shown right after it."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_prints_the_documented_output() -> None:
    text = README.read_text()
    match = re.search(r"```python\n(.*?)```.*?```\n(.*?)```", text, re.S)
    assert match, "README needs a python example followed by its output block"
    code, expected = match.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == expected
