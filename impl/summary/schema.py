"""The summary file's structure as a JSON Schema (spec/formats.md, "Summaries").

`check(doc, path)` runs first when a file is read: every field's type, the
required and unknown keys, and the bounds (at most 2^32 - 1 brokers and
4096 attributes; `names` keys in decimal without a leading zero). What a
schema cannot state (canonical rows, IDs of listed brokers, names of IDs
that occur) `summary_file.from_json` checks next, in the same form
(`file: field`).
"""

from __future__ import annotations


from subsum.core.schema import StrictValidator, first_error
from subsum.core.types import TYPES
from subsum.impl.summary.file_reader import SummaryFileError

MAX_ATTRIBUTES = 4096
_ID = {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}
_IDS = {"type": "array", "items": _ID, "minItems": 1}
_COUNT = {"type": "integer", "minimum": 1, "maximum": 2**32 - 1}
_NAME = {"type": "string", "minLength": 1}
_BOUND = {"anyOf": [{"type": "null"}, {"type": "number"}]}

SCHEMA = {
    "type": "object",
    "required": ["format", "version", "layout", "schema", "virtual", "attributes"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "subsum-summary"},
        "version": {"type": "integer", "const": 1},
        "layout": {"type": "object", "required": ["brokers", "max_subscriptions", "attributes"], "additionalProperties": False,
                   "properties": {"brokers": _COUNT, "max_subscriptions": _COUNT,
                                  "attributes": {"type": "integer", "minimum": 0, "maximum": MAX_ATTRIBUTES}}},
        "schema": {"type": "array", "maxItems": MAX_ATTRIBUTES,
                   "items": {"type": "object", "required": ["name", "type"], "additionalProperties": False,
                             "properties": {"name": _NAME, "type": {"enum": list(TYPES)}}}},
        "virtual": {"type": "string"},
        "merged_brokers": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 2**32 - 2}},
        "unconditional": {"type": "array", "items": _ID},
        "names": {"type": "object", "propertyNames": {"pattern": "^(0|[1-9][0-9]{0,19})$"}, "additionalProperties": _NAME},
        "attributes": {"type": "array", "maxItems": MAX_ATTRIBUTES, "items": {
            "type": "object", "required": ["name", "type"],
            "properties": {
                "name": _NAME, "type": {"enum": list(TYPES)},
                "ranges": {"type": "array", "items": {"type": "object", "required": ["lo", "hi", "ids"], "additionalProperties": False,
                                                      "properties": {"lo": _BOUND, "hi": _BOUND, "ids": _IDS}}},
                "equalities": {"type": "array", "items": {"type": "object", "required": ["value", "ids"], "additionalProperties": False,
                                                          "properties": {"value": {"type": "number"}, "ids": _IDS}}},
                "rows": {"type": "array", "items": {"type": "object", "required": ["op", "ids"], "additionalProperties": False,
                                                    "properties": {"op": {"type": "string"}, "value": True, "ids": _IDS}}},
            }}},
    },
}

_VALIDATOR = StrictValidator(SCHEMA)


def check(doc: object, path: str) -> None:
    """Raise SummaryFileError at the first field the schema refuses."""
    found = first_error(_VALIDATOR, doc)
    if found is not None:
        raise SummaryFileError(path, *found)
