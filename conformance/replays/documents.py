"""The replay formats' names and folders, and reading a replay document with
subsum's bounded reader (spec/formats.md, "Replays")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from subsum.core.errors import InputError
from subsum.core.inputs import max_line_bytes, read_input_text
from subsum.core.schema import first_error

SCHEDULE = "subsum-replay"
CLIENT_SERVER = "subsum-client-server-replay"
CACHE = "subsum-cache-replay"
MATCHING = "subsum-conform-matching"
#: the formats a replay names in its `format` field
FORMATS = (SCHEDULE, CLIENT_SERVER, CACHE, MATCHING)
#: a `subsum cache replay` operations file: no `format` field, policy and capacity given apart
CACHE_OPERATIONS = "cache operations"

#: where the fuzzer and the checks write their replays, unless told otherwise
FUZZ_FOLDER = Path("fuzz-replays")
#: where `subsum conform matching` writes its replay directories, unless told otherwise
CONFORM_FOLDER = Path("conform-replays")
#: the file of a replay directory that names its format
CASE_FILE = "case.json"


class ReplayError(InputError):
    """A replay that cannot be read or run: `path: field 'f': message` (exit 2)."""

    def __init__(self, path: str | Path, field: str | None, message: str, line: int | None = None) -> None:
        super().__init__(str(path), line, field, message)


def read_document(path: str | Path) -> object:
    """One JSON document, read with the input limits; NaN and Infinity are
    refused, and every error names the file (ReplayError)."""
    def no_constants(token: str):
        raise ReplayError(path, None, f"{token} is not a number a replay may hold")

    try:
        return json.loads(read_input_text(path), parse_constant=no_constants)
    except ReplayError:
        raise
    except RecursionError:
        raise ReplayError(path, None, "malformed JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ReplayError(path, None, f"malformed JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ReplayError(path, None, f"malformed JSON: {exc}") from None


def check_schema(path: str | Path, doc: object, validator, lists: Mapping[str, tuple[int, str]] = {}) -> dict:
    """`doc` if its structure is what `validator`'s schema says, else a
    ReplayError at the first field that is not; a list longer than its bound
    in `lists` (field -> (most items, what they are)) is refused first, as a
    schema check would walk all of it."""
    if isinstance(doc, dict):
        for field, (most, items) in lists.items():
            if isinstance(doc.get(field), list) and len(doc[field]) > most:
                raise ReplayError(path, field, f"{len(doc[field]):,} {items}; a replay holds at most {most:,}")
    found = first_error(validator, doc)
    if found is not None:
        raise ReplayError(path, *found)
    assert isinstance(doc, dict)
    return doc


def format_of(path: str | Path) -> str:
    """The format of the replay at `path`: a directory's `case.json` names
    it, a file's `format` field does, and a file of JSON lines each with an
    `op` is a cache operations file."""
    path = Path(path)
    if path.is_dir():
        if not (path / CASE_FILE).is_file():
            raise ReplayError(path, None, f"is a directory, but no {CASE_FILE} in it: not a replay directory of `subsum conform matching`")
        named = _named_format(read_document(path / CASE_FILE))
        if named != MATCHING:
            raise ReplayError(path / CASE_FILE, "format", f"expected {MATCHING!r}, got {named!r}")
        return MATCHING
    if not path.exists():
        raise ReplayError(path, None, "no such file or directory")
    try:
        named = _named_format(read_document(path)) or _not_a_replay(path)
    except ReplayError as exc:
        if _operation_lines(path):
            return CACHE_OPERATIONS
        raise exc from None
    if named not in FORMATS:
        raise ReplayError(path, "format", f"unknown replay format {named!r}; expected one of {', '.join(FORMATS)}")
    return named


def _named_format(doc: object) -> str | None:
    return doc.get("format") if isinstance(doc, dict) and isinstance(doc.get("format"), str) else None


def _operation_lines(path: Path) -> bool:
    """Whether the first non-blank line is a JSON object with an `op`: a cache operations file."""
    limit = max_line_bytes()
    with open(path, "rb") as handle:
        while line := handle.readline(limit):
            if line.strip():
                try:
                    first = json.loads(line)
                except (ValueError, RecursionError):
                    return False
                return isinstance(first, dict) and "op" in first
    return False


def _not_a_replay(path: Path) -> str:
    raise ReplayError(path, "format", f"not a replay: expected a JSON document whose format is one of {', '.join(FORMATS)}, "
                                      "a replay directory, or a cache operations file")
