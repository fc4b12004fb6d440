"""Batch matching on Spark: the counting plan over distinct attributes
(spec/07-pipeline.md DEF-PIPE-3, seed 001's redundant-attribute matching).

1. Explode the subscriptions into constraints, each carrying its
   subscription's constraint count n.
2. Take the distinct (name, type, value) attributes of the events.
3. Join them to the constraints on (name, type) and evaluate each operator
   with native column expressions (no Python UDF).
4. Join the satisfied (attribute, constraint) pairs back to the events.
5. Per (event, subscription), count the satisfied constraints and keep the
   pairs whose count equals n. Events are Maps (one attribute per name), so
   each constraint is satisfied by at most one attribute of an event, and
   counting rows counts distinct constraints (CLM-MATCH-3, CLM-PIPE-2).

The empty subscription has no constraint rows, so it never appears in the
count; it matches every event and is added per event (DEF-MATCH-2).

Values sit in four typed columns; the join and the comparisons use copies
with nulls replaced by a fixed default (0, 0.0, "", false). Attribute and
constraint agree on the type (a join key), so for the three columns not of
that type both sides hold the default, and one expression per operator
serves every type: `=` is equality of all four, `<` is `i < i' or f < f'`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

_KEYS = ("i", "f", "s", "b")
_DEFAULTS = {"i": 0, "f": 0.0, "s": "", "b": False}  # literals: Column objects need a live session
_CAST = {"i": "bigint", "f": "double", "s": "string", "b": "boolean"}
_SOURCE = {"i": "int", "f": "float", "s": "string", "b": "bool"}


def _keyed(struct_col: str):
    """The four value columns of an attribute/constraint struct, nulls defaulted."""
    return [F.coalesce(F.col(f"{struct_col}.{_SOURCE[k]}"), F.lit(_DEFAULTS[k]).cast(_CAST[k])).alias(k) for k in _KEYS]


def numbered_subscriptions(subscriptions: DataFrame) -> DataFrame:
    """sub (a number per subscription, for cheap keys in step 5), sid, constraints;
    kept, so that the number stays one (subscriptions are few)."""
    return subscriptions.select(F.monotonically_increasing_id().alias("sub"), F.col("id").alias("sid"),
                                "constraints").cache()


def constraints_of(numbered: DataFrame) -> DataFrame:
    """Step 1: one row per constraint: sub, n, name, type, op, i, f, s, b, l, r
    (l and r: a wildcard pattern's two sides, DEF-DATA-6)."""
    exploded = numbered.select("sub", F.size("constraints").alias("n"), F.explode("constraints").alias("c"))
    return exploded.select(
        "sub", "n", F.col("c.name").alias("name"), F.col("c.type").alias("type"), F.col("c.op").alias("op"),
        *[F.coalesce(F.col(f"c.{_SOURCE[k]}"), F.lit(_DEFAULTS[k]).cast(_CAST[k])).alias("c" + k) for k in _KEYS],
        F.when(F.col("c.op") == "wildcard", F.substring_index("c.string", "*", 1)).alias("cl"),
        F.when(F.col("c.op") == "wildcard", F.substring_index("c.string", "*", -1)).alias("cr"),
    )


def attributes_of(events: DataFrame) -> DataFrame:
    """One row per attribute occurrence: ord, name, type, i, f, s, b."""
    exploded = events.select("ord", F.explode("attributes").alias("a"))
    return exploded.select("ord", F.col("a.name").alias("name"), F.col("a.type").alias("type"), *_keyed("a"))


def operator_holds() -> F.Column:
    """DEF-DATA-6, op(v, w) with the attribute value v on the left, over the
    defaulted columns (see the module docstring)."""
    op = F.col("op")
    equal = (F.col("i") == F.col("ci")) & (F.col("f") == F.col("cf")) & (F.col("s") == F.col("cs")) & (
        F.col("b") == F.col("cb"))
    return (F.when(op == "=", equal)
            .when(op == "!=", ~equal)
            .when(op == "<", (F.col("i") < F.col("ci")) | (F.col("f") < F.col("cf")))
            .when(op == "<=", (F.col("i") < F.col("ci")) | (F.col("f") < F.col("cf")) | equal)
            .when(op == ">", (F.col("i") > F.col("ci")) | (F.col("f") > F.col("cf")))
            .when(op == ">=", (F.col("i") > F.col("ci")) | (F.col("f") > F.col("cf")) | equal)
            .when(op == "prefix", F.col("s").startswith(F.col("cs")))
            .when(op == "suffix", F.col("s").endswith(F.col("cs")))
            .when(op == "contains", F.col("s").contains(F.col("cs")))
            .when(op == "wildcard", F.col("s").startswith(F.col("cl")) & F.col("s").endswith(F.col("cr"))
                  & (F.length("s") >= F.length("cl") + F.length("cr")))
            .when(op == "any", F.lit(True))
            .otherwise(F.lit(False)))


def satisfied_constraints(distinct_attributes: DataFrame, constraints: DataFrame) -> DataFrame:
    """Step 3: (name, type, i, f, s, b, sub, n) for every distinct attribute
    and every constraint it satisfies."""
    joined = distinct_attributes.join(constraints, ["name", "type"])
    return joined.where(operator_holds()).select("name", "type", *_KEYS, "sub", "n")


#: Step 4 sends the satisfied pairs to every task, instead of shuffling every attribute
#: occurrence, when there are at most this many (a few tens of MB).
BROADCAST_SATISFIED_ROWS = 1_000_000


def matching_pairs(subscriptions: DataFrame, events: DataFrame) -> DataFrame:
    """Steps 1-5: the (ord, sid) pairs with event `ord` matching subscription
    `sid`, empty subscriptions left out (see `match`). Step 3's result is
    computed (one job) and kept, to choose how step 4 joins."""
    numbered = numbered_subscriptions(subscriptions)
    constraints = constraints_of(numbered)
    attributes = attributes_of(events)
    distinct = attributes.select("name", "type", *_KEYS).distinct()  # step 2: seed 001's redundancy
    satisfied = satisfied_constraints(distinct, constraints).cache()
    if satisfied.count() <= BROADCAST_SATISFIED_ROWS:
        satisfied = F.broadcast(satisfied)
    counted = (attributes.join(satisfied, ["name", "type", *_KEYS])  # step 4
               .groupBy("ord", "sub", "n").count())  # step 5
    matched = counted.where(F.col("count") == F.col("n")).select("ord", "sub")
    return matched.join(F.broadcast(numbered.select("sub", "sid")), "sub").select("ord", "sid")


def all_matching_pairs(subscriptions: DataFrame, events: DataFrame) -> DataFrame:
    """Every (ord, sid) pair with event `ord` matching subscription `sid`,
    empty subscriptions included (each pairs with every event)."""
    empty = subscriptions.where(F.size("constraints") == 0).select(F.col("id").alias("sid"))
    return matching_pairs(subscriptions, events).unionByName(events.select("ord").crossJoin(F.broadcast(empty)))


def match(subscriptions: DataFrame, events: DataFrame) -> DataFrame:
    """DEF-MATCH-6 on Spark: one row per input event, (ord, event, subscriptions)
    with the matching subscription IDs sorted, events with no match included."""
    pairs = matching_pairs(subscriptions, events)
    per_event = pairs.groupBy("ord").agg(F.collect_list("sid").alias("matched"))
    empties = (subscriptions.where(F.size("constraints") == 0)
               .agg(F.collect_list("id").alias("empty")))
    out = (events.select("ord", F.col("id").alias("event"))
           .join(per_event, "ord", "left")
           .crossJoin(F.broadcast(empties)))
    both = F.concat(F.coalesce("matched", F.array().cast("array<string>")),
                    F.coalesce("empty", F.array().cast("array<string>")))
    return out.select("ord", "event", F.array_sort(both).alias("subscriptions"))


def result_counters(subscriptions: DataFrame, events: DataFrame, results: DataFrame) -> dict:
    """What `subsum match --engine spark --stats` reports beside the timings:
    subscriptions, events, matches, event attributes and distinct attributes
    (extra jobs; cache `results` first)."""
    attributes = attributes_of(events)
    return {"subscriptions": subscriptions.count(), "events": results.count(),
            "matches": results.agg(F.sum(F.size("subscriptions"))).first()[0] or 0,
            "attributes": attributes.count(),
            "distinct_attributes": attributes.select("name", "type", "i", "f", "s", "b").distinct().count()}
