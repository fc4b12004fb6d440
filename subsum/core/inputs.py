"""Reading an input file with bounded memory (spec/formats.md, "Input limits").

Every file subsum reads (subscriptions, events, traces, summaries, replay
files, cache operations, edge lists) comes through `read_input`. It streams
the file and refuses a line longer than the limit, so `/dev/zero`, a FIFO
that never sends a newline, or a runaway generator gets a clear error naming
the file and line instead of filling the memory. A folder is refused.

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "ok.jsonl")
>>> _ = open(path, "wb").write(b'{"id": "a"}\\n')
>>> read_input(path, limit=64)
b'{"id": "a"}\\n'
>>> read_input(path, limit=8)
Traceback (most recent call last):
...
subsum.core.errors.InputError: ...ok.jsonl:1: the line is longer than 8 bytes, the input line limit (subsum --max-line-bytes N raises it)
"""

from __future__ import annotations

import os
from pathlib import Path

from subsum.core.errors import InputError

#: The default longest line, in bytes. A line of events this long already
#: needs several times its size in memory once parsed.
DEFAULT_MAX_LINE_BYTES = 64 * 2**20
CHUNK = 2**20

_settings = {"max_line_bytes": DEFAULT_MAX_LINE_BYTES}


def max_line_bytes() -> int:
    """The current line limit (`subsum --max-line-bytes`)."""
    return _settings["max_line_bytes"]


def set_max_line_bytes(limit: int) -> None:
    if limit < 1:
        raise ValueError(f"the line limit must be at least 1 byte, got {limit}")
    _settings["max_line_bytes"] = limit


def too_long(path: str, line: int, limit: int) -> InputError:
    return InputError(path, line, None, f"the line is longer than {limit:,} bytes, the input line limit "
                      "(subsum --max-line-bytes N raises it)")


def read_input(path: str | os.PathLike[str], limit: int | None = None, keep: bool = True) -> bytes:
    """The whole file, read in chunks; InputError for a folder, an unreadable
    file, or a line longer than `limit` (default: `max_line_bytes()`). With
    `keep` False the file is only checked (for a reader elsewhere, Spark),
    and b"" comes back."""
    limit = max_line_bytes() if limit is None else limit
    p = Path(path)
    if p.is_dir():
        raise InputError(str(p), None, None, "is a directory; expected a file")
    chunks: list[bytes] = []
    newlines = 0  # newlines before the current line
    current = 0  # bytes of the current line so far
    try:
        with open(p, "rb") as handle:
            while chunk := handle.read(CHUNK):
                last = chunk.rfind(b"\n")
                if last < 0:
                    current += len(chunk)
                else:
                    first = chunk.find(b"\n")
                    if current + first > limit:
                        raise too_long(str(p), newlines + 1, limit)
                    if last - first > limit:  # a line between the two could be too long
                        for k, line in enumerate(chunk[first + 1:last].split(b"\n")):
                            if len(line) > limit:
                                raise too_long(str(p), newlines + 2 + k, limit)
                    newlines += chunk.count(b"\n")
                    current = len(chunk) - last - 1
                if current > limit:
                    raise too_long(str(p), newlines + 1, limit)
                if keep:
                    chunks.append(chunk)
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read: {exc.strerror or exc}") from None
    return b"".join(chunks)


def read_input_text(path: str | os.PathLike[str]) -> str:
    """`read_input` decoded as UTF-8 (a byte order mark at the start dropped)."""
    raw = read_input(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(str(path), line, None, f"not UTF-8 (byte {exc.start + 1} of the file)") from None
