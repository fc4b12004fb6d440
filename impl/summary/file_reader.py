"""Reading a summary file's JSON document field by field (DEF-SUM-16,
spec/04-summaries.md).

- `SummaryFileError`: a summary file that cannot be loaded, naming the file
  and the field (`path: field 'f': message`).
- `FieldReader`: the checks `summary_file.from_json` makes of each field
  (an object with the right keys, an array, a bounded integer, a scalar of
  an attribute type, a list of IDs); the first one that fails raises the
  error for that field.

The structural checks of `schema.check` raise the same error, so this
module sits below both.
"""

from __future__ import annotations

import math

from subsum.core.errors import InputError
from subsum.impl.summary.ids import IdLayout


class SummaryFileError(InputError):
    """A summary file that cannot be loaded: `path: field 'f': message`."""

    def __init__(self, path: str, field: str | None, message: str) -> None:
        super().__init__(path, None, field, message)


def _shown(value) -> str:
    """A value as an error message shows it: its repr, or only its length
    when the repr is longer than 40 characters."""
    if len(repr(value)) <= 40:
        return repr(value)
    return f"a value of {len(repr(value))} characters"


class FieldReader:
    """Validates one JSON document field by field; every error names the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, field: str | None, message: str):
        """Raise the SummaryFileError of `field` (None: the whole file)."""
        raise SummaryFileError(self.path, field, message)

    def obj(self, value, field: str | None, required: tuple, optional: tuple = ()) -> dict:
        """`value` as a JSON object with every `required` key and no key
        outside `required` and `optional`."""
        if not isinstance(value, dict):
            self.fail(field, f"expected a JSON object, got {type(value).__name__}")
        for key in required:
            if key not in value:
                self.fail(f"{field}.{key}" if field else key, "missing")
        for key in value:
            if key not in required and key not in optional:
                self.fail(f"{field}.{key}" if field else key, f"unknown field; expected {', '.join(required + optional)}")
        return value

    def list_(self, value, field: str) -> list:
        """`value` as a JSON array."""
        if not isinstance(value, list):
            self.fail(field, f"expected an array, got {type(value).__name__}")
        return value

    def int_(self, value, field: str, lo: int = 0, hi: int = 2**64 - 1) -> int:
        """`value` as an integer from `lo` to `hi` (a bool is no integer here)."""
        if type(value) is not int or not lo <= value <= hi:
            self.fail(field, f"expected an integer from {lo} to {hi}, got {_shown(value)}")
        return value

    def scalar(self, value, type_: str, field: str, nullable: bool = False):
        """`value` as a finite value of the attribute type `type_` (an int in
        64 bits, a float, a string, a bool), or None when `nullable`. A
        float comes back as a Python float even when written as an integer."""
        if value is None and nullable:
            return None
        ok = {"int": lambda v: type(v) is int and -(2**63) <= v < 2**63,
              "float": lambda v: (type(v) is int and abs(v) <= 2**1023) or (type(v) is float and math.isfinite(v)),
              "string": lambda v: type(v) is str,
              "bool": lambda v: type(v) is bool}[type_]
        if not ok(value):
            self.fail(field, f"expected a finite {type_} value, got {_shown(value)}")
        return float(value) if type_ == "float" else value

    def ids(self, value, field: str, layout: IdLayout, brokers: set[int]) -> set[int]:
        """`value` as a non-empty list of distinct IDs that fit the layout and
        belong to the listed `brokers` (merged_brokers)."""
        out = set()
        for i, sid in enumerate(self.list_(value, field)):
            self.int_(sid, f"{field}[{i}]")
            if sid >> layout.bits:
                self.fail(f"{field}[{i}]", f"ID {sid} does not fit in the layout's {layout.bits} bits")
            broker = layout.decode(sid)[0]
            if broker not in brokers:
                self.fail(f"{field}[{i}]", f"ID {sid} belongs to broker {broker}, which merged_brokers does not list (a summary "
                          "lists the brokers whose IDs it holds, so that merging two never mixes their IDs)")
            if sid in out:
                self.fail(f"{field}[{i}]", f"ID {sid} is listed twice")
            out.add(sid)
        if not out:
            self.fail(field, "an ID list must not be empty")
        return out
