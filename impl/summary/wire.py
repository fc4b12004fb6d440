"""The binary encoding of a summary (DEF-SUM-15, DEF-SUM-16, spec/04-summaries.md).

`to_bytes` / `from_bytes`: the compact encoding whose length is the
*measured* size of a summary, set beside the thesis's size formula
(`stats.formula_size`). Names are not part of it: the thesis's summary
carries only packed IDs. Numbers take 8 bytes, strings a 2-byte length plus
UTF-8 (a string of 65,535 bytes or more: the 2 bytes hold 65,535 and 4 more
the length), IDs `layout.id_bytes` bytes each.

The JSON summary file, which carries the names too, is `summary_file`.
"""

from __future__ import annotations

import math
import struct

from subsum.core.types import TYPES
from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.normalize import NUMERIC
from subsum.impl.summary.summary import VIRTUAL_POLICIES, Summary, SummaryError
from subsum.impl.summary.summary_file import VERSION

MAGIC = b"SSUM"
_TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
#: A string's length takes 2 bytes; this value in them means 4 more bytes hold it.
LONG_STRING = 0xFFFF
_OP_CODE = {op: i for i, op in enumerate(("=", "prefix", "suffix", "contains", "wildcard", "any"))}
_OPS = {i: op for op, i in _OP_CODE.items()}


def _value_bytes(type_: str, v) -> bytes:
    """One value of an attribute type: an int or float in 8 bytes, a bool in
    one, a string as its length (2 bytes, or the escape and 4 bytes) and UTF-8."""
    if type_ == "int":
        return struct.pack(">q", v)
    if type_ == "float":
        return struct.pack(">d", v)
    if type_ == "bool":
        return b"\x01" if v else b"\x00"
    raw = v.encode("utf-8")
    if len(raw) < LONG_STRING:
        return struct.pack(">H", len(raw)) + raw
    return struct.pack(">HI", LONG_STRING, len(raw)) + raw  # a string of 64 KiB or more: the escape, then 4 bytes


def to_bytes(summary: Summary) -> bytes:
    """The compact binary encoding (DEF-SUM-16). Layout: magic, version,
    the ID layout, the schema, then per attribute its rows, each row its
    value(s) and its ID list as a count plus `layout.id_bytes` bytes per ID;
    numbers take 8 bytes, strings a 2-byte length plus UTF-8."""
    layout = summary.layout
    width = layout.id_bytes

    def id_list(ids) -> bytes:
        return struct.pack(">I", len(ids)) + b"".join(sid.to_bytes(width, "big") for sid in sorted(ids))

    out = [MAGIC, struct.pack(">BIIH", VERSION, layout.brokers, layout.max_subscriptions, layout.attributes)]
    for name, type_ in summary.schema:
        out += [_value_bytes("string", name), bytes([_TYPE_CODE[type_]])]
    out.append(bytes([list(VIRTUAL_POLICIES).index(summary.virtual)]))
    out.append(struct.pack(">I", len(summary.merged_brokers)) + b"".join(struct.pack(">I", b) for b in sorted(summary.merged_brokers)))
    out.append(id_list(summary.unconditional))
    rows_by_key = summary.rows()
    out.append(struct.pack(">H", len(rows_by_key)))
    for key, rows in rows_by_key.items():
        out += [struct.pack(">HI", summary.index[key], len(rows))]
        for kind, c, ids in rows:
            if key[1] in NUMERIC:
                lo, hi = c
                flags = (kind == "equality") | (math.isinf(lo) << 1) | (math.isinf(hi) << 2)
                out.append(bytes([flags]))
                if kind == "equality":
                    out.append(_value_bytes(key[1], lo))
                else:
                    out += [b"" if math.isinf(lo) else _value_bytes(key[1], lo), b"" if math.isinf(hi) else _value_bytes(key[1], hi)]
            else:
                op, value = c
                out.append(bytes([_OP_CODE[op]]) + (b"" if op == "any" else _value_bytes(key[1], value)))
            out.append(id_list(ids))
    return b"".join(out)


class _Cursor:
    """Reads `to_bytes`'s output front to back; running past the end is a SummaryError."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str):
        """The next value(s) packed as the struct format `fmt`."""
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise SummaryError(f"truncated summary: {len(self.data)} bytes, needed more at offset {self.at}")
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values[0] if len(values) == 1 else values

    def raw(self, n: int) -> bytes:
        """The next n bytes."""
        if self.at + n > len(self.data):
            raise SummaryError(f"truncated summary at offset {self.at}")
        self.at += n
        return self.data[self.at - n:self.at]

    def value(self, type_: str):
        """The next value of an attribute type, as `_value_bytes` wrote it."""
        if type_ == "int":
            return self.take(">q")
        if type_ == "float":
            return self.take(">d")
        if type_ == "bool":
            return self.take(">B") == 1
        length = self.take(">H")
        return self.raw(self.take(">I") if length == LONG_STRING else length).decode("utf-8")


def from_bytes(data: bytes) -> Summary:
    """Decode `to_bytes` (names are not on the wire and come back empty)."""
    cur = _Cursor(data)
    if cur.raw(4) != MAGIC:
        raise SummaryError("not a subsum binary summary (bad magic)")
    version, brokers, max_subs, attributes = cur.take(">BIIH")
    if version != VERSION:
        raise SummaryError(f"binary summary version {version}; this subsum reads {VERSION}")
    layout = IdLayout(brokers, max_subs, attributes)
    schema = [(cur.value("string"), TYPES[cur.take(">B")]) for _ in range(attributes)]
    summary = Summary(layout, schema, VIRTUAL_POLICIES[cur.take(">B")])
    width = layout.id_bytes

    def id_list() -> set[int]:
        return {int.from_bytes(cur.raw(width), "big") for _ in range(cur.take(">I"))}

    summary.merged_brokers = {cur.take(">I") for _ in range(cur.take(">I"))}
    summary.unconditional = id_list()
    for _ in range(cur.take(">H")):
        index, count = cur.take(">HI")
        key = schema[index]
        for _ in range(count):
            if key[1] in NUMERIC:
                flags = cur.take(">B")
                if flags & 1:
                    v = cur.value(key[1])
                    c = (v, v)
                else:
                    lo = -math.inf if flags & 2 else cur.value(key[1])
                    hi = math.inf if flags & 4 else cur.value(key[1])
                    c = (lo, hi)
            else:
                op = _OPS[cur.take(">B")]
                c = (op, None if op == "any" else cur.value(key[1]))
            summary.insert(key, c, id_list())
    if cur.at != len(data):
        raise SummaryError(f"{len(data) - cur.at} trailing bytes after the summary")
    return summary
