"""The peer: DuckDB evaluating the same match as SQL, a join on (name, type)
plus a group-by-count (the counting algorithm, declaratively).

One table of attributes and one of constraints per type; names are integer
codes; the constraint counts per subscription in `sizes`. A pair (event,
subscription) matches iff the number of satisfied (attribute, constraint)
rows equals the subscription's number of distinct constraints. Events are
Maps, so each constraint is satisfied by at most one attribute of an event.
"""

from __future__ import annotations

import numpy as np

from subsum.impl.matching.columnar.batch import ColumnarBatch

_CONDITION = {
    "int": "CASE c.op WHEN '=' THEN a.v = c.v WHEN '!=' THEN a.v <> c.v WHEN '<' THEN a.v < c.v "
           "WHEN '<=' THEN a.v <= c.v WHEN '>' THEN a.v > c.v WHEN '>=' THEN a.v >= c.v ELSE true END",
    "string": "CASE c.op WHEN '=' THEN a.v = c.v WHEN '!=' THEN a.v <> c.v "
              "WHEN 'prefix' THEN starts_with(a.v, c.v) WHEN 'suffix' THEN ends_with(a.v, c.v) "
              "WHEN 'contains' THEN contains(a.v, c.v) "
              "WHEN 'wildcard' THEN starts_with(a.v, c.l) AND ends_with(a.v, c.r) AND length(a.v) >= length(c.l) + length(c.r) "
              "ELSE true END",
    "bool": "CASE c.op WHEN '=' THEN a.v = c.v WHEN '!=' THEN a.v <> c.v ELSE true END",
}
_CONDITION["float"] = _CONDITION["int"]
_SQL_TYPE = {"int": "BIGINT", "float": "DOUBLE", "string": "VARCHAR", "bool": "BOOLEAN"}


class DuckDBPeer:
    name = "duckdb"

    def __init__(self, subscriptions, threads: int | None = None):
        try:
            import duckdb
        except ImportError:  # pragma: no cover - depends on the install
            raise RuntimeError("the DuckDB peer needs duckdb: pip install 'subsum[bench]'") from None
        self.con = duckdb.connect()
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.ids = [sid for sid, _ in subscriptions]
        self.name_code: dict[str, int] = {}
        rows = {t: ([], [], [], [], [], []) for t in _SQL_TYPE}  # sub, name, op, value, l, r
        sizes = []
        self.empty = []
        for slot, (_sid, subscription) in enumerate(subscriptions):
            sizes.append(len(subscription.constraints))
            if not subscription.constraints:
                self.empty.append(slot)
            for c in subscription.constraints:
                sub, nm, op, val, left, right = rows[c.type]
                sub.append(slot)
                nm.append(self.name_code.setdefault(c.name, len(self.name_code)))
                op.append(c.op)
                val.append(c.value)
                l, _, r = (c.value or "").partition("*") if c.op == "wildcard" else ("", "", "")
                left.append(l)
                right.append(r)
        for t, (sub, nm, op, val, left, right) in rows.items():
            self._load(f"c_{t}", {
                "sub": np.array(sub, np.int64), "name": np.array(nm, np.int64), "op": np.array(op, dtype=object),
                "v": self._values(t, val), "l": np.array(left, dtype=object), "r": np.array(right, dtype=object),
            }, {"sub": "BIGINT", "name": "BIGINT", "op": "VARCHAR", "v": _SQL_TYPE[t], "l": "VARCHAR", "r": "VARCHAR"})
        self._load("sizes", {"sub": np.arange(len(sizes), dtype=np.int64), "n": np.array(sizes, np.int64)},
                   {"sub": "BIGINT", "n": "BIGINT"})
        self.n_events = 0

    @staticmethod
    def _values(t: str, values: list) -> np.ndarray:
        if t == "string":
            return np.array(values, dtype=object)
        mask = np.array([v is None for v in values], bool)
        dtype = {"int": np.int64, "float": np.float64, "bool": np.bool_}[t]
        data = np.array([0 if v is None else v for v in values], dtype)
        return np.ma.masked_array(data, mask=mask) if mask.any() else data

    def _load(self, table: str, columns: dict, types: dict) -> None:
        self.con.execute(f"CREATE OR REPLACE TABLE {table} ({', '.join(f'{k} {v}' for k, v in types.items())})")
        if len(next(iter(columns.values()))):
            self.con.register("_incoming", columns)
            self.con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
            self.con.unregister("_incoming")

    def load_events(self, batch: ColumnarBatch) -> None:
        """Load the batch (not timed by the benchmark, like building an index)."""
        self.n_events = batch.n_events
        code = np.array([self.name_code.get(n, -1) for n in batch.names] or [-1], np.int64)
        strings = np.array(batch.strings or [""], dtype=object)
        for t, col in batch.columns.items():
            value = strings[col.value] if t == "string" else col.value
            self._load(f"a_{t}", {"event": col.event, "name": code[col.name], "v": value},
                       {"event": "BIGINT", "name": "BIGINT", "v": _SQL_TYPE[t]})

    QUERY = (
        "WITH sat AS ("
        + " UNION ALL ".join(
            f"SELECT a.event, c.sub FROM a_{t} a JOIN c_{t} c ON a.name = c.name WHERE {_CONDITION[t]}"
            for t in _SQL_TYPE)
        + ") SELECT sat.event, sat.sub FROM sat JOIN sizes ON sat.sub = sizes.sub "
        "GROUP BY sat.event, sat.sub, sizes.n HAVING count(*) = sizes.n"
    )

    def match(self) -> tuple[np.ndarray, np.ndarray]:
        """The matching (event index, subscription slot) pairs, empty subscriptions included."""
        result = self.con.execute(self.QUERY).fetchnumpy()
        ev, sub = np.asarray(result["event"], np.int64), np.asarray(result["sub"], np.int64)
        if self.empty:
            empty = np.array(self.empty, np.int64)
            ev = np.concatenate([ev, np.repeat(np.arange(self.n_events, dtype=np.int64), len(empty))])
            sub = np.concatenate([sub, np.tile(empty, self.n_events)])
        return ev, sub
