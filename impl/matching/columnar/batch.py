"""A batch of events as columns, the input of the vectorized engine.

Per type, three aligned arrays: the event index of each attribute
occurrence, the code of its name (into `names`), and its value (int64,
float64, bool, or for strings a code into `strings`). This is Arrow's
dictionary encoding by hand; a Parquet reader or a generator can fill it
without building one Python object per attribute.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import attrs
import numpy as np

from subsum.core.types import TYPES, Attribute, Event

DTYPES = {"int": np.int64, "float": np.float64, "bool": np.bool_, "string": np.int64}


@attrs.define
class Column:
    event: np.ndarray  # int64: event index of each occurrence
    name: np.ndarray  # int64: code into ColumnarBatch.names
    value: np.ndarray  # per DTYPES; strings are codes into ColumnarBatch.strings

    def __len__(self) -> int:
        return len(self.event)


def _empty_column(type_: str) -> Column:
    return Column(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, DTYPES[type_]))


def not_a_map(event: int) -> ValueError:
    """The error of an engine given a batch in which `event` holds a (type, name) twice."""
    return ValueError(f"event {event} of the batch holds an attribute name twice with one type: events are Maps (DEF-DATA-4)")


@attrs.define
class ColumnarBatch:
    n_events: int
    names: list[str]
    strings: list[str]
    columns: dict[str, Column]

    @classmethod
    def from_events(cls, events: Sequence[Event]) -> "ColumnarBatch":
        names: dict[str, int] = {}
        strings: dict[str, int] = {}
        lists: dict[str, tuple[list[int], list[int], list[Any]]] = {t: ([], [], []) for t in TYPES}
        for i, event in enumerate(events):
            for a in event.attributes:
                ev, nm, val = lists[a.type]
                ev.append(i)
                code = names.get(a.name)
                if code is None:
                    code = names[a.name] = len(names)
                nm.append(code)
                if a.type == "string":
                    s = strings.get(cast(str, a.value))
                    if s is None:
                        s = strings[cast(str, a.value)] = len(strings)
                    val.append(s)
                else:
                    val.append(a.value)
        columns = {
            t: Column(np.array(ev, np.int64), np.array(nm, np.int64), np.array(val, DTYPES[t]))
            if ev else _empty_column(t)
            for t, (ev, nm, val) in lists.items()
        }
        return cls(len(events), list(names), list(strings), columns)

    def to_events(self) -> list[Event]:
        per_event: list[list[Attribute]] = [[] for _ in range(self.n_events)]
        for t, col in self.columns.items():
            values = col.value.tolist()
            for i, n, v in zip(col.event.tolist(), col.name.tolist(), values):
                if t == "string":
                    v = self.strings[v]
                elif t == "float":
                    v = float(v)
                per_event[i].append(Attribute(name=self.names[n], type=t, value=v))
        return [Event(tuple(attrs_)) for attrs_ in per_event]

    def check(self) -> None:
        """Raise ValueError, naming the first problem, unless this batch is
        well formed: columns of known types, aligned one-dimensional arrays of
        the right dtypes, event indices in [0, n_events), name and string
        codes in range, and finite floats. (That each event is a Map is
        checked by the engines, for the (type, name) groups some constraint
        names.) A batch built by
        `from_events` or a reader always is; one built by hand may not be,
        and the compiled engine's kernels do not check bounds."""
        if set(self.columns) - set(TYPES):
            raise ValueError(f"unknown column types {sorted(set(self.columns) - set(TYPES))}; expected {', '.join(TYPES)}")
        if type(self.n_events) is not int or self.n_events < 0:
            raise ValueError(f"n_events must be an integer >= 0, got {self.n_events!r}")
        for field in ("names", "strings"):
            if not isinstance(getattr(self, field), list) or not all(type(v) is str for v in getattr(self, field)):
                raise ValueError(f"the {field} of a ColumnarBatch must be a list of strings")
        for t, col in self.columns.items():
            if not isinstance(col, Column):
                raise ValueError(f"the {t} column must be a Column, got {type(col).__name__}")
            arrays = {"event": col.event, "name": col.name, "value": col.value}
            for field, values in arrays.items():
                want = np.dtype(DTYPES[t]) if field == "value" else np.dtype(np.int64)
                # not a subclass either: a masked array hides entries from min() and max()
                if type(values) is not np.ndarray or values.ndim != 1 or values.dtype != want:
                    raise ValueError(f"the {t} column's {field} must be a one-dimensional {want} array")
            if not len(col.event) == len(col.name) == len(col.value):
                raise ValueError(f"the {t} column's arrays differ in length")
            if not len(col):
                continue
            bounds = {"event": self.n_events, "name": len(self.names), **({"value": len(self.strings)} if t == "string" else {})}
            for field, bound in bounds.items():
                values = arrays[field]
                if not (0 <= values.min() and values.max() < bound):
                    raise ValueError(f"the {t} column's {field} codes must lie in [0, {bound})")
            if t == "float" and not np.isfinite(col.value).all():
                raise ValueError("the float column holds NaN or an infinity, which are not values (DEF-DATA-2)")

    def head(self, n: int) -> "ColumnarBatch":
        """The batch of the first n events (all of them if there are fewer)."""
        n = min(n, self.n_events)
        columns = {t: Column(col.event[keep], col.name[keep], col.value[keep])
                   for t, col in self.columns.items() for keep in [col.event < n]}
        return ColumnarBatch(n, self.names, self.strings, columns)

    @property
    def n_attributes(self) -> int:
        return sum(len(c) for c in self.columns.values())

    def distinct_attributes(self) -> int:
        """The number of distinct (type, name, value) attributes (seed 001 Def 5)."""
        total = 0
        for t, col in self.columns.items():
            if not len(col):
                continue
            value = col.value.astype(np.int64) if t == "bool" else col.value + 0.0 if t == "float" else col.value  # -0.0 is +0.0
            pairs = np.empty((len(col), 2), np.int64)
            pairs[:, 0] = col.name
            pairs[:, 1] = value.view(np.int64) if value.dtype == np.float64 else value
            total += len(np.unique(pairs, axis=0))
        return total
