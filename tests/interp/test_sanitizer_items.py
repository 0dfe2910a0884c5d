"""Accesses whose workitems come from a lane fact (``san.Items``) leave the very same shadow
state and findings as the same accesses with explicit workitem id arrays."""

from types import SimpleNamespace

import numpy as np
import pytest

from loom.interp import sanitizer as san
from loom.interp.affine import positions

EXT = (2, 3, 4)
LANES = (5, (12, 4, 1))  # lane ids of a box at lane 5 of a (2, 3, 4)-strided chunk


def _buf(space: str) -> SimpleNamespace:
    data = np.zeros(256, np.uint8)
    return SimpleNamespace(
        shadow=san.Shadow(data.size, initialised=True), space=space, name="b", uid=1, data=data
    )


def _ix(fact: tuple) -> san.AffineIndex:
    ix = san.AffineIndex(fact, EXT, 4)
    ix.lane_fact = LANES
    return ix


def _run(space: str, lazy: bool) -> tuple:
    buf = _buf(space)
    steps = [SimpleNamespace(index=i) for i in range(3)]
    f = san.Findings(
        SimpleNamespace(steps=steps), lambda item: ((item // 8, 0, 0), (item % 8, 0, 0))
    )
    wg = 8

    def items(ix: san.AffineIndex, base: int) -> object:
        return san.Items(ix, base) if lazy else positions(LANES, EXT) + base

    # a write by workitems 100.., a read of the same bytes by workitems 103.. (lanes along the
    # first axis share a position: the last of them is recorded), then a second write
    w = _ix((0, (4, 64, 16)))
    raw = np.arange(w.n * 4, dtype=np.uint8).reshape(-1, 4)
    san.check_write(f, steps[0], buf, w, items(w, 100), None, wg, raw, buf.data)
    r = _ix((0, (0, 64, 16)))
    san.check_read(f, steps[1], buf, r, items(r, 103), None, wg)
    w2 = _ix((0, (4, 64, 16)))
    new = (lambda: raw) if lazy else raw
    san.check_write(f, steps[2], buf, w2, items(w2, 96), None, wg, new, buf.data)
    sh = buf.shadow
    # op entries are only meaningful where a stamp is recorded
    w_op = np.where(sh.w_item != 0, sh.w_op, -1)
    r_op = np.where(sh.r_item != 0, sh.r_op, -1)
    state = [sh.w_item.copy(), sh.r_item.copy(), w_op, r_op]
    found = [(k, v[0][1], v[0][3], v[1]) for k, v in f.items.items()]
    return state, found


@pytest.mark.parametrize("space", ["global", "workgroup"])
def test_lane_fact_items_agree(space: str) -> None:
    state_lazy, found_lazy = _run(space, True)
    state, found = _run(space, False)
    for a, b in zip(state_lazy, state):
        assert np.array_equal(a, b)
    assert found_lazy == found
    if space == "global":
        assert found  # the accesses race: the report paths ran
