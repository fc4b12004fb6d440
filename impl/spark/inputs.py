"""Where Spark reads a user's local input from, so that every engine gives
one answer for one path (spec/formats.md, "Input limits and hostile input").
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.inputs import read_input


def is_uri(path: str) -> bool:
    return "://" in str(path)


def is_parquet(path: str) -> bool:
    return str(path).rstrip("/").endswith(".parquet")


PARQUET_MAGIC = b"PAR1"


def _check_parquet_magic(source: Path, path: str) -> None:
    """A Parquet file begins and ends with PAR1 (a dataset folder: each of its
    .parquet files). Checked here, so that a text file named .parquet is bad
    input, not a failed Spark job."""
    files = sorted(f for f in source.rglob("*.parquet") if not f.name.startswith((".", "_"))) if source.is_dir() else [source]
    for f in files:
        try:
            with open(f, "rb") as handle:
                head = handle.read(4)
                handle.seek(max(0, f.stat().st_size - 4))
                tail = handle.read(4)
        except OSError as exc:
            raise InputError(path, None, None, f"cannot read: {exc.strerror or exc}") from None
        if head != PARQUET_MAGIC or tail != PARQUET_MAGIC or f.stat().st_size < 12:
            shown = path if f == source else f"{path} ({f.relative_to(source)})"
            raise InputError(shown, None, None, "is not a Parquet file (it does not begin and end with PAR1)")


_LINKS: list[str] = []  # the folder of this process's input links, made on first use


def spark_path(path: str) -> str:
    """The path Spark reads for the user's input `path`, so that every engine gives
    one answer. A URI is Spark's to resolve. A local file is checked as the
    in-process readers check it (it exists; a JSONL input is not a directory and
    has no line over the limit) and handed to Spark as a link with a plain
    name: Hadoop would read `ev[1].jsonl` as a glob and `a:b.jsonl` as a URI,
    skip `_x.jsonl` and `.x.jsonl` as hidden, and unpack `x.jsonl.gz`."""
    if is_uri(path):
        return path
    source = Path(path)
    if not source.exists():
        raise InputError(path, None, None, "cannot read: No such file or directory")
    if is_parquet(path):
        suffix = ".parquet"
        _check_parquet_magic(source, path)
    else:
        read_input(source, keep=False)  # a directory, an unreadable file, a line over the limit
        suffix = ".jsonl"
    if not _LINKS:
        _LINKS.append(tempfile.mkdtemp(prefix="subsum-inputs-"))
        atexit.register(shutil.rmtree, _LINKS[0], True)
    link = Path(_LINKS[0]) / f"input-{len(os.listdir(_LINKS[0]))}{suffix}"
    link.symlink_to(source.resolve())
    return str(link)
