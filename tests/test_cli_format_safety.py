"""loom-format writes safely: nodes that are not regular files are written into, never replaced;
symlinks are kept; unwritable files and folders are clean errors; modes and owners survive;
temporary files never stay behind; replaces are fsynced; inputs are bounded."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import tty
from pathlib import Path

import pytest

from loom.cli import format as fmt
from loom.cli.format import main

KERNELS = Path(__file__).resolve().parents[1] / "examples" / "kernels"
GOOD = (KERNELS / "vector_add_i32.loom").read_text(encoding="utf-8")
NONCANONICAL = GOOD.replace("index.add %n, %spare", "index.add   %n,%spare")
NOBODY = 65534


@pytest.fixture
def no_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any rename or temporary file an assertion failure (never a clobbered device)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"loom-format tried to replace a node: {args}")

    monkeypatch.setattr(fmt.os, "replace", refuse)
    monkeypatch.setattr(tempfile, "mkstemp", refuse)


def leftovers(folder: Path) -> list[Path]:
    return list(folder.glob(".loom-format-*"))


def src(tmp_path: Path, text: str = NONCANONICAL, name: str = "k.loom") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------- -o onto special nodes


def test_output_into_a_fifo_writes_into_it(tmp_path: Path, no_replace: None) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    status = None
    try:
        status = main([str(src(tmp_path)), "-o", str(fifo)])
    finally:
        if status is None:  # main raised: release a reader still waiting in open()
            with contextlib.suppress(OSError):  # ENXIO: the reader has already gone
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=30)
    assert status == 0
    assert got == [GOOD.encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_into_a_character_device_writes_into_it(tmp_path: Path, no_replace: None) -> None:
    master, slave = os.openpty()  # a terminal: a character device we own
    try:
        tty.setraw(slave)  # no newline translation
        name = os.ttyname(slave)
        got = bytearray()
        want = len(GOOD.encode())

        def read() -> None:
            while len(got) < want:
                got.extend(os.read(master, 65536))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert main([str(src(tmp_path)), "-o", name]) == 0
        reader.join(timeout=30)
        assert bytes(got) == GOOD.encode()
        assert stat.S_ISCHR(os.stat(name).st_mode)
    finally:
        os.close(slave)
        os.close(master)


def test_output_to_dev_stdout_writes_into_stdout(
    tmp_path: Path, no_replace: None, capfd: pytest.CaptureFixture[str]
) -> None:
    # Under capfd, fd 1 is a regular temporary file: /dev/stdout leads to a regular file, which
    # must still be written into, not renamed over.
    assert main([str(src(tmp_path)), "-o", "/dev/stdout"]) == 0
    assert capfd.readouterr().out == GOOD
    assert os.path.islink("/dev/stdout") or stat.S_ISCHR(os.stat("/dev/stdout").st_mode)


def test_output_through_a_link_into_a_device_tree(tmp_path: Path, no_replace: None) -> None:
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    assert main([str(src(tmp_path)), "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_output_onto_a_directory_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(src(tmp_path)), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "it is a directory" in err and "Traceback" not in err


def test_output_to_a_regular_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.loom"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    assert main([str(src(tmp_path)), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == GOOD
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert not leftovers(tmp_path)


def test_new_output_file_gets_the_umask_mode(tmp_path: Path) -> None:
    out = tmp_path / "new.loom"
    old = os.umask(0o027)
    try:
        assert main([str(src(tmp_path)), "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert out.read_text(encoding="utf-8") == GOOD
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


# ---------------------------------------------------------------- --in-place


def test_in_place_through_a_symlink_updates_the_target_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    real = src(tmp_path, name="real.loom")
    link = tmp_path / "link.loom"
    link.symlink_to("real.loom")
    assert main(["--in-place", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == "real.loom"
    assert real.read_text(encoding="utf-8") == GOOD
    assert not leftovers(tmp_path)


def test_in_place_keeps_mode(tmp_path: Path) -> None:
    p = src(tmp_path)
    p.chmod(0o604)
    assert main(["--in-place", str(p)]) == 0
    assert p.read_text(encoding="utf-8") == GOOD
    assert stat.S_IMODE(p.stat().st_mode) == 0o604


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a file owned by another user")
def test_in_place_keeps_owner_and_group(tmp_path: Path) -> None:
    p = src(tmp_path)
    os.chown(p, NOBODY, NOBODY)
    assert main(["--in-place", str(p)]) == 0
    st = p.stat()
    assert p.read_text(encoding="utf-8") == GOOD
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY)


def test_an_owner_that_cannot_be_kept_leaves_the_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = src(tmp_path)
    real_stat = os.stat
    mine = real_stat(p)

    def foreign_owner(name, *args, **kwargs):  # noqa: ANN001, ANN202
        st = real_stat(name, *args, **kwargs)
        if os.path.realpath(name) == str(p):
            return os.stat_result((*st[:4], mine.st_uid + 1, *st[5:]))
        return st

    def no_chown(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(fmt.os, "stat", foreign_owner)
    monkeypatch.setattr(fmt.os, "fchown", no_chown)
    assert main(["--in-place", str(p)]) == 2
    err = capsys.readouterr().err
    assert "could not keep its owner" in err and "Traceback" not in err
    assert p.read_text(encoding="utf-8") == NONCANONICAL
    assert not leftovers(tmp_path)


def test_in_place_refuses_what_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.loom"
    os.mkfifo(fifo)

    # A writer, so that a regression that reads the FIFO gets text instead of hanging.
    def write() -> None:
        with contextlib.suppress(OSError):  # the release below closes the pipe early
            fifo.write_text(NONCANONICAL)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        assert main(["--in-place", str(fifo)]) == 2
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # release the writer
        writer.join(timeout=30)
    assert "regular files only" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_failed_replace_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    p = src(tmp_path)

    def broken_disk(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fmt.os, "fsync", broken_disk)
    assert main(["--in-place", str(p)]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Input/output error" in err and "Traceback" not in err
    assert "not written, left unchanged" in err
    assert p.read_text(encoding="utf-8") == NONCANONICAL
    assert not leftovers(tmp_path)


def test_an_interrupted_replace_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = src(tmp_path)

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fmt.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        main(["--in-place", str(p)])
    assert p.read_text(encoding="utf-8") == NONCANONICAL
    assert not leftovers(tmp_path)


def test_the_replace_is_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = src(tmp_path)
    synced: list[str] = []
    real_fsync = os.fsync

    def record(fd: int) -> None:
        mode = os.fstat(fd).st_mode
        synced.append("dir" if stat.S_ISDIR(mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(fmt.os, "fsync", record)
    assert main(["--in-place", str(p)]) == 0
    assert synced == ["file", "dir"]


# ---------------------------------------------------------------- unwritable, for real


SETPRIV = shutil.which("setpriv")
# Root ignores file permissions; without these capabilities it meets them like anyone else.
NO_OVERRIDE = ["--bounding-set", "-dac_override,-dac_read_search,-fowner,-linux_immutable"]


@pytest.fixture
def unprivileged() -> list[str]:
    """The command prefix that runs loom-format subject to file permissions."""
    cmd = [sys.executable, "-m", "loom.cli.format"]
    if os.geteuid() != 0:
        return cmd
    if SETPRIV is None:
        pytest.skip("running as root without setpriv: file permissions cannot be enforced")
    return [SETPRIV, *NO_OVERRIDE, "--", *cmd]


def run(cmd: list[str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *argv], capture_output=True, text=True, timeout=120)


def test_unwritable_file_is_a_clean_error_and_stays(
    tmp_path: Path, unprivileged: list[str]
) -> None:
    p = src(tmp_path)  # the folder is writable: only the file is protected
    p.chmod(0o444)
    proc = run(unprivileged, "--in-place", str(p))
    assert proc.returncode == 2, proc.stderr
    assert "cannot write" in proc.stderr and "Permission denied" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert p.read_text(encoding="utf-8") == NONCANONICAL
    assert stat.S_IMODE(p.stat().st_mode) == 0o444
    assert not leftovers(tmp_path)
    out = tmp_path / "out.loom"
    out.write_text("keep", encoding="utf-8")
    out.chmod(0o444)
    proc = run(unprivileged, str(p), "-o", str(out))
    assert proc.returncode == 2 and "Permission denied" in proc.stderr
    assert out.read_text(encoding="utf-8") == "keep"


def test_unwritable_folder_is_a_clean_error(tmp_path: Path, unprivileged: list[str]) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    p = src(folder)  # the file is writable but its folder is not: no temporary file possible
    folder.chmod(0o555)
    try:
        proc = run(unprivileged, "--in-place", str(p))
        assert proc.returncode == 2, proc.stderr
        assert "cannot write" in proc.stderr and "Traceback" not in proc.stderr
        assert p.read_text(encoding="utf-8") == NONCANONICAL
        proc = run(unprivileged, str(p), "-o", str(folder / "new.loom"))
        assert proc.returncode == 2 and "cannot write" in proc.stderr
        assert sorted(x.name for x in folder.iterdir()) == ["k.loom"]
    finally:
        folder.chmod(0o755)


# ---------------------------------------------------------------- bounded input


def _limited_memory() -> None:
    # A regression that reads /dev/zero to the end fails fast instead of filling the machine.
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize(
    ("flags", "limit"), [(["--max-input-size", "1M"], "1 MiB"), ([], "256 MiB")]
)
def test_check_dev_zero_is_a_clean_error(flags: list[str], limit: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "loom.cli.format", "--check", *flags, "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited_memory,
    )
    assert proc.returncode == 2
    assert f"/dev/zero is larger than the input limit of {limit}" in proc.stderr
    assert "--max-input-size" in proc.stderr
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_large_regular_file_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.loom"
    with open(big, "wb") as f:
        f.truncate(3 << 20)  # sparse: no disk used
    assert main(["--check", "--max-input-size", "2M", str(big)]) == 2
    assert "larger than the input limit of 2 MiB" in capsys.readouterr().err


def test_stdin_is_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    assert main(["--check", "--max-input-size", "100", "-"]) == 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    assert main(["--check", "--max-input-size", str(len(GOOD.encode())), "-"]) == 0


@pytest.mark.parametrize(
    ("text", "size"), [("4096", 4096), ("64K", 64 << 10), ("256M", 256 << 20), ("1GiB", 1 << 30)]
)
def test_sizes(text: str, size: int) -> None:
    assert fmt.parse_size(text) == size


def test_a_bad_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--check", "--max-input-size", "lots", "x.loom"])
    assert e.value.code == 2 and "is not a size" in capsys.readouterr().err
