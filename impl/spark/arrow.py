"""Arrow batches in and out of the compiled kernel (spec/07-pipeline.md
DEF-PIPE-4), with no Python object per event or attribute occurrence.

- `columnar_batch`: the events of an Arrow batch (DEF-PIPE-1's columns `id`
  and `attributes`) as a `ColumnarBatch`: the attribute lists flattened
  (`list_flatten`, `list_parent_indices`), names and strings
  dictionary-encoded by Arrow.
- `result_batches`: the (event index, subscription slot) pairs the kernel
  found, as Arrow batches of DEF-PIPE-2's rows (`ord`, `event`,
  `subscriptions` with the IDs sorted).

The Spark kernel plan (`kernel`) and the in-process baseline of `subsum
bench spark` both use them; this module imports pyarrow and numpy only.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from subsum.core.types import TYPES
from subsum.impl.matching.columnar.batch import DTYPES, Column, ColumnarBatch

#: Pairs per result batch at most: a batch's ID strings must fit Arrow's 32-bit offsets.
PAIRS_PER_BATCH = 1 << 20


def _codes(values: pa.Array) -> tuple[np.ndarray, list[str]]:
    """Arrow's dictionary encoding of a string array: (codes, distinct values)."""
    encoded = pc.dictionary_encode(values)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()


def columnar_batch(events: pa.RecordBatch | pa.Table) -> ColumnarBatch:
    """The events of `events` (column `attributes`, a list of structs with
    fields name, type, int, float, string, bool, exactly the value field
    named by `type` set) as a ColumnarBatch. Event i of the batch is row i.

    >>> b = pa.table({"attributes": [[{"name": "x", "type": "int", "int": 3, "float": None, "string": None, "bool": None}]]})
    >>> columnar_batch(b).columns["int"].value.tolist()
    [3]
    """
    attributes = events.column("attributes")
    if isinstance(attributes, pa.ChunkedArray):
        attributes = attributes.combine_chunks()
    flat = pc.list_flatten(attributes)
    event = pc.list_parent_indices(attributes).to_numpy(zero_copy_only=False).astype(np.int64)
    name, names = _codes(flat.field("name"))
    kind = flat.field("type")
    columns: dict[str, Column] = {}
    strings: list[str] = []
    for t in TYPES:
        rows = np.flatnonzero(pc.equal(kind, t).to_numpy(zero_copy_only=False))
        if not len(rows):
            columns[t] = Column(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, DTYPES[t]))
            continue
        picked = flat.field(t).take(pa.array(rows, pa.int64()))
        if picked.null_count:
            raise ValueError(f"an attribute of type {t} has no {t} value (DEF-PIPE-1)")
        if t == "string":
            value, strings = _codes(picked)
        else:
            value = picked.to_numpy(zero_copy_only=False).astype(DTYPES[t])
            if t == "float":
                value = value + 0.0  # -0.0 is +0.0 (DEF-DATA-2)
        columns[t] = Column(event[rows], name[rows], value)
    return ColumnarBatch(len(events), names, strings, columns)


def slot_ranks(ids: list[str]) -> np.ndarray:
    """rank[slot]: the position of subscription `slot`'s ID among the IDs
    sorted (code point order, which is UTF-8 byte order and Spark's)."""
    rank = np.empty(len(ids), np.int64)
    rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    return rank


def result_batches(ords: pa.Array, event_ids: pa.Array, pairs: tuple[np.ndarray, np.ndarray], ids: pa.Array,
                   rank: np.ndarray) -> Iterator[pa.RecordBatch]:
    """DEF-PIPE-2's rows (ord, event, subscriptions) of one batch of events:
    row i carries `ords[i]`, `event_ids[i]` and the IDs (`ids[slot]`) of
    the slots paired with event index i, sorted by `rank`; events with no
    match get an empty list. Cut into batches of at most `PAIRS_PER_BATCH`
    pairs (one event's pairs are never cut).

    >>> [b.to_pylist() for b in result_batches(pa.array([7, 8]), pa.array(["a", "b"]),
    ...     (np.array([1, 1]), np.array([1, 0])), pa.array(["t", "s"]), slot_ranks(["t", "s"]))]
    [[{'ord': 7, 'event': 'a', 'subscriptions': []}, {'ord': 8, 'event': 'b', 'subscriptions': ['s', 't']}]]
    """
    event, slot = pairs
    n = len(ords)
    order = np.lexsort((rank[slot], event))
    slots = slot[order]
    start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(event, minlength=n), out=start[1:])
    first = 0
    while first < n:
        last = min(n, max(first + 1, int(np.searchsorted(start, start[first] + PAIRS_PER_BATCH, "right")) - 1))
        offsets = (start[first:last + 1] - start[first]).astype(np.int32)
        chosen = ids.take(pa.array(slots[start[first]:start[last]], pa.int64()))
        listed = pa.ListArray.from_arrays(pa.array(offsets), chosen)
        yield pa.RecordBatch.from_arrays([ords.slice(first, last - first), event_ids.slice(first, last - first), listed],
                                         names=["ord", "event", "subscriptions"])
        first = last
