"""The workload of `subsum bench spark` (benchmarks/README.md), generated
with numpy, column-wise, so that 10^7 events never become Python objects:
20 names (12 int in [0, 1000), 4 float with one decimal in [0, 100), 4
string from a table of 500 words); each event holds 5 of them, each
subscription 1 to 3 constraints: mostly `=`, and `>`, `<`, `prefix` near
the edges of the domains, so that an event satisfies a few constraints, not
hundreds (the counting plan's work is the number of satisfied pairs;
spec/07-pipeline.md, "Cost"). The same arrays feed the in-process engines
(a ColumnarBatch), DuckDB (its tables) and Spark and the in-process
read-to-write run (Parquet files written by pyarrow, DEF-PIPE-1's schema).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from subsum.core.filters import format_filter
from subsum.core.types import Constraint, Subscription
from subsum.impl.matching.columnar.batch import Column, ColumnarBatch

N_NAMES = 20
NAME_TYPES = ["int"] * 12 + ["float"] * 4 + ["string"] * 4
NAMES = [f"a{k:02d}" for k in range(N_NAMES)]
PER_EVENT = 5
WORDS = 500
#: Rows per Parquet row group: Spark splits a file between row groups only, so that a 10^6-event file
#: (12 MB) still gives every core a partition (one group of 10^6 rows made one task do all the work).
ROW_GROUP = 131_072


def _words(rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out: dict[str, None] = {}
    while len(out) < WORDS:
        out["".join(rng.choice(letters, 6))] = None
    return list(out)


def generate(events: int, subscriptions: int, seed: int = 1):
    """(subscriptions as (id, Subscription), ColumnarBatch, words)."""
    rng = np.random.default_rng(seed)
    words = _words(rng)
    subs = []
    for j in range(subscriptions):
        constraints = []
        for k in rng.choice(N_NAMES, int(rng.integers(1, 4)), replace=False):
            name, type_ = NAMES[k], NAME_TYPES[k]
            roll = rng.random()
            if type_ == "int":
                op, value = ("=", int(rng.integers(0, 1000))) if roll < 0.6 else (
                    (">", int(rng.integers(990, 1000))) if roll < 0.8 else ("<", int(rng.integers(0, 10))))
            elif type_ == "float":
                op, value = ("=", round(float(rng.integers(0, 1000)) / 10, 1)) if roll < 0.5 else (
                    (">", 99.0 + float(rng.integers(0, 10)) / 10) if roll < 0.75 else ("<", float(rng.integers(0, 10)) / 10))
            else:
                word = words[int(rng.integers(0, WORDS))]
                op, value = ("=", word) if roll < 0.6 else ("prefix", word[:3])
            constraints.append(Constraint(name, type_, op, value))
        subs.append((f"s{j}", Subscription(frozenset(constraints))))
    # Event i holds names b, b+4, ..., b+16 with b = i's random base in [0, 4): five distinct names.
    base = rng.integers(0, 4, events)
    name_idx = (base[:, None] + 4 * np.arange(PER_EVENT)[None, :]).ravel()
    event_idx = np.repeat(np.arange(events, dtype=np.int64), PER_EVENT)
    types = np.array(NAME_TYPES)[name_idx]
    columns = {}
    for t in ("int", "float", "string", "bool"):
        mask = types == t
        n = int(mask.sum())
        if t == "int":
            values = rng.integers(0, 1000, n).astype(np.int64)
        elif t == "float":
            values = rng.integers(0, 1000, n).astype(np.float64) / 10
        elif t == "string":
            values = rng.integers(0, WORDS, n).astype(np.int64)
        else:
            values = np.zeros(0, np.bool_)
        columns[t] = Column(event_idx[mask], name_idx[mask].astype(np.int64), values)
    return subs, ColumnarBatch(events, list(NAMES), words, columns), words


def write_parquet(subs, batch, directory: Path) -> tuple[Path, Path]:
    """DEF-PIPE-1's Parquet files: events (id, attributes list<struct>) and subscriptions (id, filter)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = batch.n_events
    parts = []
    for t, col in batch.columns.items():
        if len(col):
            parts.append((t, col))
    event = np.concatenate([c.event for _, c in parts])
    order = np.argsort(event, kind="stable")
    event = event[order]
    name = np.concatenate([c.name for _, c in parts])[order]
    type_code = np.concatenate([np.full(len(c), k) for k, (_, c) in enumerate(parts)])[order]
    type_names = [t for t, _ in parts]

    names_arr = pa.array(np.array(batch.names, dtype=object)[name])
    types_arr = pa.array(np.array(type_names, dtype=object)[type_code])
    ints = pa.array(np.concatenate([c.value if t == "int" else np.zeros(len(c), np.int64) for t, c in parts])[order],
                    mask=(np.array(type_names)[type_code] != "int"))
    floats = pa.array(np.concatenate([c.value if t == "float" else np.zeros(len(c)) for t, c in parts])[order],
                      mask=(np.array(type_names)[type_code] != "float"))
    codes = np.concatenate([c.value if t == "string" else np.zeros(len(c), np.int64) for t, c in parts])[order]
    strings = pa.array(np.array(batch.strings, dtype=object)[codes], mask=(np.array(type_names)[type_code] != "string"))
    bools = pa.nulls(len(event), pa.bool_())
    structs = pa.StructArray.from_arrays([names_arr, types_arr, ints, floats, strings, bools],
                                         names=["name", "type", "int", "float", "string", "bool"])
    offsets = np.concatenate([[0], np.cumsum(np.bincount(event, minlength=n))]).astype(np.int32)
    attributes = pa.ListArray.from_arrays(pa.array(offsets), structs)
    ids = pa.array([f"e{i}" for i in range(n)])
    events_path, subs_path = directory / "events.parquet", directory / "subscriptions.parquet"
    pq.write_table(pa.table({"id": ids, "attributes": attributes}), events_path, row_group_size=ROW_GROUP)
    pq.write_table(pa.table({"id": [sid for sid, _ in subs], "filter": [format_filter(s) for sid, s in subs]}),
                   subs_path)
    return events_path, subs_path
