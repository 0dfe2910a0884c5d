"""Durable file replacement shared by the command-line tools."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import BinaryIO


class OwnerNotKept(OSError):
    """A replacement file could not be given the replaced file's owner and group."""


def umask() -> int:
    """The process umask (read without changing it for longer than the call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_dir(directory: str) -> None:
    """Make a rename durable; some file systems cannot fsync a folder, which is harmless."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomically(
    target: str,
    write: Callable[[BinaryIO], None],
    *,
    prefix: str,
    suffix: str,
    like: os.stat_result | None = None,
) -> None:
    """Replace (or create) the regular file ``target`` with what ``write(f)`` writes.

    The data goes to a temporary file in the same folder, which gets ``like``'s mode, owner and
    group (or the umask's default mode for a new file), is fsynced, renamed over ``target``, and
    the folder fsynced. The temporary file is removed on any failure. Raises ``OSError``
    (:class:`OwnerNotKept` when the owner cannot be kept; ``target`` is then unchanged).
    """
    directory = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            if like is None:
                os.fchmod(f.fileno(), 0o666 & ~umask())
            else:
                os.fchmod(f.fileno(), stat.S_IMODE(like.st_mode))
                mine = os.fstat(f.fileno())
                if (mine.st_uid, mine.st_gid) != (like.st_uid, like.st_gid):
                    try:
                        os.fchown(f.fileno(), like.st_uid, like.st_gid)
                    except PermissionError:
                        raise OwnerNotKept(
                            f"a replacement could not keep its owner (uid {like.st_uid}, "
                            f"gid {like.st_gid})"
                        ) from None
                    os.fchmod(f.fileno(), stat.S_IMODE(like.st_mode))  # chown clears setuid
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = None
        fsync_dir(directory)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
