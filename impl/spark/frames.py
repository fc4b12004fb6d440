"""Frames the driver builds from rows it holds, and the columns of the frames
every step uses (spec/07-pipeline.md DEF-PIPE-1).

- events: `ord` (long, input order), `id`, `attributes`
  (array<struct<name, type, int, float, string, bool>>, one value field set);
- subscriptions: `ord`, `id`, `constraints`
  (array<struct<name, type, op, int, float, string, bool>>, no value for `any`).

`local_frame` sends rows to the cluster as Arrow data, so that no Python
worker ever runs; the readers (`io`, `jsonl`) and the trace check (`trace`)
build their driver-side frames with it.
"""

from __future__ import annotations

from typing import Iterable, Sequence, cast

from subsum.core.types import Event, Subscription

VALUE_FIELDS = ("int", "float", "string", "bool")
ATTRIBUTE_DDL = "struct<name: string, type: string, int: bigint, float: double, string: string, bool: boolean>"
CONSTRAINT_DDL = ("struct<name: string, type: string, op: string, int: bigint, float: double, string: string, "
                  "bool: boolean>")
EVENTS_DDL = f"ord bigint, id string, attributes array<{ATTRIBUTE_DDL}>"
SUBSCRIPTIONS_DDL = f"ord bigint, id string, constraints array<{CONSTRAINT_DDL}>"
ATTRIBUTE_KEYS = ("name", "type", *VALUE_FIELDS)
CONSTRAINT_KEYS = ("name", "type", "op", *VALUE_FIELDS)


def _value_slots(type_: str, value) -> tuple:
    """The four value fields (int, float, string, bool) with `value` in its type's; None elsewhere."""
    slots = [None, None, None, None]
    if value is not None:
        slots[VALUE_FIELDS.index(type_)] = value
    return tuple(slots)


def attribute_rows(event: Event) -> list[dict]:
    """An event's attributes as `attributes` structs."""
    return [dict(zip(ATTRIBUTE_KEYS, (a.name, a.type, *_value_slots(a.type, a.value)))) for a in event.attributes]


def constraint_rows(subscription: Subscription) -> list[dict]:
    """A subscription's constraints as `constraints` structs."""
    return [dict(zip(CONSTRAINT_KEYS, (c.name, c.type, c.op, *_value_slots(c.type, c.value))))
            for c in subscription.constraints]


def arrow_schema(ddl: str):
    """The Arrow schema of a Spark DDL string (e.g. EVENTS_DDL)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    return to_arrow_schema(cast(StructType, StructType.fromDDL(ddl)))  # the DDL of a row: a struct


def local_frame(spark, ddl: str, rows: Sequence[tuple]):
    """A frame of rows the driver holds, built through Arrow, so that no
    Python worker ever runs (a list of tuples would be pickled and
    unpickled by one)."""
    import pyarrow as pa

    schema = arrow_schema(ddl)
    return spark.createDataFrame(pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema))


def events_frame(spark, events: Sequence[Event], ids: Sequence[str] | None = None):
    """A frame of in-memory events (tests and benchmarks); ids default to e0, e1, ..."""
    ids = ids if ids is not None else [f"e{i}" for i in range(len(events))]
    return local_frame(spark, EVENTS_DDL, [(i, ident, attribute_rows(e)) for i, (ident, e) in enumerate(zip(ids, events))])


def subscriptions_frame(spark, subscriptions: Iterable[tuple[str, Subscription]]):
    """A frame of in-memory (id, subscription) pairs."""
    return local_frame(spark, SUBSCRIPTIONS_DDL,
                       [(i, sid, constraint_rows(s)) for i, (sid, s) in enumerate(subscriptions)])
