"""Parser basics: the examples/ kernels round-trip, trivia, locations, builder equivalence."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom.format.text.parser import parse_module
from loom.format.text.printer import print_module
from loom.ir import FileLocation

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*/*.loom"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_kernels_round_trip(path: Path) -> None:
    text = path.read_text()
    module = parse_module(text, filename=str(path))
    assert print_module(module) == text


def test_locations_cover_first_line_span() -> None:
    text = "target.generic<reference> @t\n"
    module = parse_module(text, filename="a.loom")
    op = module.ops[0]
    loc = module.location(op.location_id)
    assert isinstance(loc, FileLocation)
    assert module.sources[loc.source_id] == "a.loom"
    assert (loc.start_line, loc.start_col, loc.end_line, loc.end_col) == (1, 1, 1, 29)
    assert module.symbols == {"t": op}
