#!/usr/bin/env python3
"""A matching engine built on DuckDB's SQL, run by `subsum conform matching`
as an external process (spec/11-plugins.md DEF-PLUG-3).

    duckdb_matcher.py SUBSCRIPTIONS EVENTS    one workload; result lines on stdout
    duckdb_matcher.py --serve                 persistent mode: one request line per
                                              workload on stdin, {"subscriptions": PATH,
                                              "events": PATH}; the result lines and an
                                              empty line back

It reads the two files with subsum's reader (spec/formats.md), so what is
tested is the matching: one SQL query joins each event's attributes with
the constraints on the same name and type, keeps the (attribute,
constraint) pairs whose operator holds in DuckDB's own semantics, and
counts them per (event, subscription), the counting algorithm (seed 001
§2). A subscription matches an event when every one of its distinct
constraints holds for some attribute.
"""

import json
import sys

import duckdb
import pyarrow as pa

from subsum.core.jsonio import read_events, read_subscriptions

HOLDS = """
CASE c.op
    WHEN 'any' THEN true
    WHEN '=' THEN a.i = c.i OR a.f = c.f OR a.s = c.s OR a.b = c.b
    WHEN '!=' THEN a.i <> c.i OR a.f <> c.f OR a.s <> c.s OR a.b <> c.b
    WHEN '<' THEN a.i < c.i OR a.f < c.f
    WHEN '<=' THEN a.i <= c.i OR a.f <= c.f
    WHEN '>' THEN a.i > c.i OR a.f > c.f
    WHEN '>=' THEN a.i >= c.i OR a.f >= c.f
    WHEN 'prefix' THEN starts_with(a.s, c.s)
    WHEN 'suffix' THEN ends_with(a.s, c.s)
    WHEN 'contains' THEN contains(a.s, c.s)
    WHEN 'wildcard' THEN starts_with(a.s, c.l) AND ends_with(a.s, c.r) AND length(a.s) >= length(c.l) + length(c.r)
END
"""

QUERY = f"""
SELECT a.event, c.sub
FROM attributes a JOIN constraints c ON a.name = c.name AND a.type = c.type
WHERE coalesce({HOLDS}, false)
GROUP BY a.event, c.sub
HAVING count(DISTINCT c.id) = any_value(c.size)
"""

VALUE_COLUMNS = {"i": ("int", pa.int64()), "f": ("float", pa.float64()), "s": ("string", pa.string()), "b": ("bool", pa.bool_())}


def typed_columns(rows):
    """Per row (type, value): one column per type, the value in its type's column, null elsewhere."""
    return {col: pa.array([v if t == want else None for t, v in rows], kind) for col, (want, kind) in VALUE_COLUMNS.items()}


def match(subscriptions_path, events_path):
    subscriptions = read_subscriptions(subscriptions_path)
    events = read_events(events_path)
    constraints = [(sub, cid, len(s.subscription.constraints), c)
                   for sub, s in enumerate(subscriptions) for cid, c in enumerate(s.subscription.constraints)]
    attributes = [(event, a) for event, e in enumerate(events) for a in e.event.attributes]
    wild = [c.value.partition("*") if c.op == "wildcard" else ("", "", "") for _, _, _, c in constraints]
    constraint_table = pa.table({
        "sub": pa.array([sub for sub, _, _, _ in constraints], pa.int64()),
        "id": pa.array([cid for _, cid, _, _ in constraints], pa.int64()),
        "size": pa.array([size for _, _, size, _ in constraints], pa.int64()),
        "name": pa.array([c.name for _, _, _, c in constraints], pa.string()),
        "type": pa.array([c.type for _, _, _, c in constraints], pa.string()),
        "op": pa.array([c.op for _, _, _, c in constraints], pa.string()),
        **typed_columns([(c.type, c.value) for _, _, _, c in constraints]),
        "l": pa.array([w[0] for w in wild], pa.string()),
        "r": pa.array([w[2] for w in wild], pa.string()),
    })
    attribute_table = pa.table({
        "event": pa.array([event for event, _ in attributes], pa.int64()),
        "name": pa.array([a.name for _, a in attributes], pa.string()),
        "type": pa.array([a.type for _, a in attributes], pa.string()),
        **typed_columns([(a.type, a.value) for _, a in attributes]),
    })
    con = duckdb.connect()
    con.register("constraints", constraint_table)
    con.register("attributes", attribute_table)
    matched = [set() for _ in events]
    for event, sub in con.execute(QUERY).fetchall():
        matched[event].add(subscriptions[sub].id)
    everywhere = {s.id for s in subscriptions if not s.subscription.constraints}  # the empty subscription
    return [json.dumps({"event": e.id, "subscriptions": sorted(ids | everywhere)}) for e, ids in zip(events, matched)]


def serve():
    for request in sys.stdin:
        paths = json.loads(request)
        lines = match(paths["subscriptions"], paths["events"])
        sys.stdout.write("".join(line + "\n" for line in lines) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    elif len(sys.argv) == 3:
        print("\n".join(match(sys.argv[1], sys.argv[2])))
    else:
        sys.exit(__doc__)
