"""Access traces (launch(trace=True)) and their pictures: right cells, stable bytes."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest

from loom.errors import LoomRuntimeError
from loom.format.text.parser import parse_module
from loom.interp import launch

pytest.importorskip("matplotlib")

KERNELS = Path(__file__).resolve().parent / "jupyter_kernels"


def kernel(name: str):
    path = KERNELS / f"{name}.loom"
    return parse_module(path.read_text(), filename=path.name)


def run(name: str):
    data = np.arange(24, dtype=np.float32)
    sums = np.zeros(3, dtype=np.float32)
    return launch(kernel(name), "block_sum", workload=(3,), args=(3, data, sums), trace=True)


def test_trace_records_last_writer_and_counts() -> None:
    r = run("block_sum")
    sums = r.accesses["sums"]
    # lane 0 of each workgroup writes its sum: flat workitems 0, 8, 16
    assert sums.last_writer[::4].tolist() == [0, 8, 16]
    assert sums.writes[::4].tolist() == [1, 1, 1] and not sums.reads.any()
    data = r.accesses["data"]
    assert (data.reads == 1).all() and (data.last_writer == -1).all()
    stage = r.accesses["%stage_root"]
    assert stage.owners == 3 and stage.owner_bytes == 32
    # every workitem writes its own stage element first; lane 0 rewrites element 0 last
    assert stage.last_writer[0::32].tolist() == [0, 8, 16]
    assert not stage.race.any() and not stage.uninit_read.any()


def test_trace_flags_the_racy_elements() -> None:
    r = run("block_sum_racy")
    assert r.findings
    stage = r.accesses["%stage_root"]
    racy = np.flatnonzero(stage.race[::4])
    assert racy.tolist() == [2, 3, 10, 11, 18, 19], "stage[2], stage[3] of each workgroup"


def test_trace_of_an_out_of_bounds_read_rides_on_the_error() -> None:
    with pytest.raises(LoomRuntimeError) as info:
        run("block_sum_oob")
    oob = info.value.accesses["data"].out_of_bounds
    assert [(o.workitem, o.start) for o in oob] == [(20, 96), (21, 100), (22, 104), (23, 108)]


def test_trace_needs_the_sanitizer() -> None:
    with pytest.raises(ValueError, match="sanitizer"):
        launch(kernel("block_sum"), "block_sum", workload=(1,),
               args=(1, np.zeros(8, np.float32), np.zeros(1, np.float32)),
               sanitize=False, trace=True)  # fmt: skip


def test_access_picture_is_byte_stable_svg_with_marks() -> None:
    from loom_jupyter.pictures import access_picture

    a, b = access_picture(run("block_sum_racy")), access_picture(run("block_sum_racy"))
    assert a.svg == b.svg
    assert a.svg.startswith("<?xml") and "<dc:date>" not in a.svg
    assert "matplotlib v" not in a.svg.lower()
    assert "g0.2" in a.svg and "r2 w2" in a.svg, "writer and counts are labelled"
    assert "%stage_root (4-byte elements): 24 of 24 elements written, 6 racy" in a.summary
    bundle = a._repr_mimebundle_()
    img = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', bundle["text/html"])
    assert img and base64.b64decode(img.group(1)).decode() == a.svg
    assert bundle["image/svg+xml"] == a.svg


def test_out_of_bounds_cells_are_drawn_past_the_end() -> None:
    from loom_jupyter.pictures import access_picture

    with pytest.raises(LoomRuntimeError) as info:
        run("block_sum_oob")
    pic = access_picture(info.value)
    assert "4 out of bounds" in pic.summary
    for elem in ("[24]", "[25]", "[26]", "[27]"):
        assert elem in pic.svg


def test_launch_result_display_includes_the_picture() -> None:
    from loom_jupyter.display import error_bundle, launch_bundle

    bundle = launch_bundle(run("block_sum_racy"))
    assert "data:image/svg+xml;base64," in bundle["text/html"]
    assert "6 racy" in bundle["text/plain"]
    with pytest.raises(LoomRuntimeError) as info:
        run("block_sum_oob")
    bundle = error_bundle(info.value)
    assert "RUNTIME/001" in bundle["text/plain"] and "4 out of bounds" in bundle["text/plain"]
    untraced = launch(kernel("block_sum"), "block_sum", workload=(1,),
                      args=(1, np.zeros(8, np.float32), np.zeros(1, np.float32)))  # fmt: skip
    assert "data:image" not in launch_bundle(untraced)["text/html"]


def test_stepper_pictures_describe_the_state_shown() -> None:
    from loom_jupyter.stepper import StepperWidget

    data = np.arange(8, dtype=np.float32)
    w = StepperWidget(kernel("block_sum"), "block_sum", workload=(1,),
                      args=(1, data, np.zeros(1, np.float32)),
                      dtypes={"stage_root": np.float32})  # fmt: skip
    w.run_to_barrier()
    grid = w.picture("grid")
    assert grid.summary == "workgroup (0,0,0) of 1 x 1 x 1: 1 at barrier, 7 running"
    lines = w.model.item_lines()
    assert len(set(lines.values())) == 2, "one at the barrier, the rest before it"
    for line in lines.values():
        assert f"L{line}" in grid.svg
    w.run()
    assert w.picture("grid").summary.startswith("grid of 1 x 1 x 1 workgroups: every workitem")
    hist = w.picture("histogram")
    assert "data: 8 values in [0.0, 7.0]" in hist.summary
    assert w.picture("histogram").svg == hist.svg


def test_loom_run_plot_writes_the_svg(tmp_path: Path) -> None:
    from loom.cli.run import main

    np.save(tmp_path / "data.npy", np.arange(24, dtype=np.float32))
    np.save(tmp_path / "sums.npy", np.zeros(3, dtype=np.float32))
    out = tmp_path / "map.svg"
    status = main([
        str(KERNELS / "block_sum_racy.loom"), "--kernel", "block_sum", "--workload", "3",
        "--arg", "groups=3", "--arg", f"data={tmp_path / 'data.npy'}",
        "--arg", f"sums={tmp_path / 'sums.npy'}", "-o", str(tmp_path), "--force",
        "--plot", str(out),
    ])  # fmt: skip
    assert status == 1, "the race is an error finding"
    assert out.read_text().startswith("<?xml") and "%stage_root" in out.read_text()


def test_missing_matplotlib_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from loom.plot import PictureError, access_svg

    real = builtins.__import__

    def no_mpl(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    with pytest.raises(PictureError, match="pip install matplotlib"):
        access_svg(run("block_sum"))
