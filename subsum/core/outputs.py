"""Writing outputs safely (spec/formats.md, "Exit codes and errors"): an
output path is checked before the work starts, and a file is written to a
temporary file beside it that is renamed into place only when complete,
so a failure never leaves partial output behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from subsum.core.errors import InputError


def _new_file_mode() -> int:
    """The mode open() would give a new file: 0666 less the process's umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def cannot_write_in(folder: Path) -> str | None:
    """Why no file can be made in the existing folder `folder`, or None. It
    tries: permission bits do not tell (root may write anywhere they say,
    and still not in /proc or on a read-only mount)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".subsum-probe-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(probe)
    return None


def check_output_path(path: Path | str, folder_ok: bool = False) -> None:
    """Raise InputError unless `path` can be written as an output: its
    folder exists and a file can be made in it, and it is not a folder
    itself (unless `folder_ok`). Commands check their outputs before they
    start the work."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir() and not folder_ok:
        raise InputError(str(path), None, None, "is a directory; expected a file to write")
    if path.exists() and not path.is_dir() and not path.is_file():  # a FIFO, a device node, a socket
        raise InputError(str(path), None, None, "is not a regular file; subsum writes an output beside it and renames "
                         "it into place, which would replace it: name a regular file")
    missing = folder
    while not missing.exists() and missing != missing.parent:
        missing = missing.parent
    if not missing.is_dir():
        raise InputError(str(path), None, None, f"cannot write: {missing} is not a folder")
    if not folder.is_dir():
        raise InputError(str(path), None, None, f"cannot write: the folder {folder} does not exist")
    why = cannot_write_in(folder)
    if why:
        raise InputError(str(path), None, None, f"cannot write in the folder {folder}: {why}")


def check_output_folder(path: Path | str) -> None:
    """Raise InputError unless `path` is a folder that files can be made in,
    or one that can be made: its missing folders are made, tried and removed
    again, so the check leaves nothing behind."""
    path = Path(path)
    missing: list[Path] = []
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        missing.append(ancestor)
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(str(path), None, None, f"cannot write: {ancestor} is not a folder")
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except OSError as exc:
                raise InputError(str(path), None, None, f"cannot make the folder {folder}: {exc.strerror or exc}") from None
            made.append(folder)
        why = cannot_write_in(path)
        if why:
            raise InputError(str(path), None, None, f"cannot write in the folder: {why}")
    finally:
        for folder in reversed(made):
            folder.rmdir()


def write_lines_atomically(path: Path | str, lines: Iterable[str]) -> None:
    """Write all lines to a temporary file beside `path`, then rename it."""
    path = Path(path)
    check_output_path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot write: {exc.strerror}") from None
    try:
        os.fchmod(fd, _new_file_mode())  # mkstemp makes 0600; an output is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
