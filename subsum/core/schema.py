"""JSON Schema validation with subsum's error form (spec/formats.md): the
first field at fault, written `a.b[2].c`, and a message of bounded length.

>>> import jsonschema
>>> v = jsonschema.Draft202012Validator({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}})
>>> first_error(v, {"a": [1, "x"]})
('a[1]', "'x' is not of type 'integer'")
>>> first_error(v, {"a": []}) is None
True
>>> first_error(StrictValidator({"type": "integer"}), 2.0)
(None, "2.0 is not of type 'integer'")
"""

from __future__ import annotations

from typing import Any

import jsonschema


def _an_int(_checker: Any, instance: object) -> bool:
    return type(instance) is int


#: Draft 2020-12, except that an integer is written as one: `2.0` is a number, not an integer (the draft
#: counts it as one, and a reader that hands it to `range` or an index would fail past the schema).
StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _an_int))


def field_name(path: Any) -> str:
    """A JSON path as the messages write it: `schedule[3].client`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def first_error(validator: Any, doc: object) -> tuple[str | None, str] | None:
    """(field or None for the whole document, message) of the most relevant error, or None."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return None
    message = error.message if len(error.message) <= 160 else error.message[:150] + " …"
    return field_name(error.absolute_path) or None, message
