"""Checks of the Spark pipeline's file readers and writers (spec/07-pipeline.md
CLM-PIPE-1's files example, CLM-PIPE-2, CLM-PIPE-3).

Seed 000's example files, as JSONL and as Parquet, go through the Spark
readers, engine and writers and must give the model's lines; bad Parquet
files must be refused naming the row and field; and each bad JSONL file must
get from the Spark reader exactly the in-process reader's error.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.jsonio import match_result_lines
from subsum.core.jsonio import read_events as read_events_jsonl
from subsum.core.jsonio import read_subscriptions as read_subscriptions_jsonl
from subsum.core.types import Event
from subsum.impl.spark.kernel import kernel_match
from subsum.impl.spark.frames import EVENTS_DDL, arrow_schema, attribute_rows
from subsum.model import semantics
from subsum.conformance.checks.pipeline.spark import session, write_lines

SEED000_SUBSCRIPTIONS = [
    '{"id": "S1", "filter": "symbol = \\"OTE\\" and price = 8.50"}',
    '{"id": "S2", "filter": "symbol = \\"OTER\\" and price = 8.55"}',
    '{"id": "S3", "filter": "symbol prefix \\"OTE\\" and price >= 8.45 and price <= 8.60"}',
    '{"id": "S4", "filter": "symbol prefix \\"T\\" and price >= 8.60 and price <= 8.70"}',
    '{"id": "S5", "filter": "exchange wildcard \\"N*SE\\" and symbol = \\"OTE\\" and price < 8.70 and price > 8.30"}',
    '{"id": "S6", "constraints": [{"name": "symbol", "type": "string", "op": "prefix", "value": "OT"}, '
    '{"name": "price", "type": "float", "op": "=", "value": 8.20}, {"name": "volume", "type": "int", "op": ">", '
    '"value": 130000}, {"name": "low", "type": "float", "op": "<", "value": 8.05}]}',
    '{"id": "S7", "filter": "volume != 132700 and exchange:string any"}',
    '{"id": "EMPTY", "constraints": []}',
]
SEED000_EVENTS = [
    '{"id": "fig-2-2", "attributes": {"exchange": "NYSE", "symbol": "OTE", "price": 8.40, "volume": 132700, '
    '"high": 8.80, "low": 8.22}}',
    '{"id": "false-positive", "attributes": {"symbol": "OTE", "price": 8.65}}',
    '{"id": "s1-s3-match", "attributes": {"symbol": "OTE", "price": 8.50}}',
    '{"id": "s4-match", "attributes": {"symbol": "TEL", "price": 8.62}}',
    '',
    '{"id": "no-symbol", "attributes": {"price": 8.50, "exchange": "LSE", "volume": 5}}',
    '{"id": "nothing", "attributes": {}}',
]


def write_events_parquet(path: Path, events: list[tuple[str, Event]]) -> None:
    """Events as DEF-PIPE-1's Parquet schema, written by pyarrow (not by Spark)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(EVENTS_DDL)
    table = pa.table({"id": [i for i, _ in events], "attributes": [attribute_rows(e) for _, e in events]},
                     schema=pa.schema([schema.field("id"), schema.field("attributes")]))
    pq.write_table(table, path)


def seed000_files_through_every_reader() -> str:
    """CLM-PIPE-1 (example): seed 000's example subscriptions and events, as
    JSONL and as Parquet, through the Spark readers, either plan and the writers, give
    the model's lines (in input order, one per event)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from subsum.impl.spark import io as sio
    from subsum.impl.spark.match import match

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        subs_path = write_lines(d, "subs.jsonl", SEED000_SUBSCRIPTIONS)
        events_path = write_lines(d, "events.jsonl", SEED000_EVENTS)
        subs = [(s.id, s.subscription) for s in read_subscriptions_jsonl(subs_path)]
        named = [(e.id, e.event) for e in read_events_jsonl(events_path)]
        want = [{"event": i, "subscriptions": sorted(m)}
                for (i, _), m in zip(named, semantics.match_batch(subs, [e for _, e in named]))]
        assert any(w["subscriptions"] for w in want) and any(len(w["subscriptions"]) == 1 for w in want)
        pq.write_table(pa.table({"id": [json.loads(line)["id"] for line in SEED000_SUBSCRIPTIONS[:5]],
                                 "filter": [json.loads(line)["filter"] for line in SEED000_SUBSCRIPTIONS[:5]]}),
                       d / "subs.parquet")
        write_events_parquet(d / "events.parquet", named)
        subs_parquet_want = [{"event": w["event"], "subscriptions": [s for s in w["subscriptions"]
                                                                     if s in ("S1", "S2", "S3", "S4", "S5")]}
                             for w in want]
        for (subs_in, events_in, expected, out), plan in itertools.product(
                ((subs_path, d / "events.parquet", want, "out.jsonl"),
                 (d / "subs.parquet", events_path, subs_parquet_want, "out.parquet")), ("sql", "kernel")):
            events = sio.read_events(spark, str(events_in))
            if plan == "kernel":  # DEF-PIPE-4: in input order as it comes, not sorted
                results = kernel_match(spark, sio.read_subscription_pairs(spark, str(subs_in)), events)
                sio.write_results(results, str(d / out), in_order=sio.in_partition_order(results))
            else:
                results = match(sio.read_subscriptions(spark, str(subs_in)), events)
                sio.write_results(results, str(d / out))
            if out.endswith(".jsonl"):
                lines = (d / out).read_text(encoding="utf-8").splitlines()
                assert lines == list(match_result_lines((w["event"], w["subscriptions"]) for w in expected)), (plan, lines)
            else:
                table = pq.read_table(d / out).to_pylist()
                assert table == expected, (plan, subs_in.name, events_in.name, table)
            spark.catalog.clearCache()
    return f"{len(want)} events x {len(subs)} subscriptions, JSONL and Parquet in, JSONL and Parquet out, both plans"


# --- CLM-PIPE-2 and CLM-PIPE-3: bad input ---------------------------------------------------

def _parquet_case(d: Path, name: str, rows: list[dict], attributes_type=None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(EVENTS_DDL)
    fields = [schema.field("id"), attributes_type or schema.field("attributes")]
    path = d / f"{name}.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in rows], "attributes": [r["attributes"] for r in rows]},
                            schema=pa.schema(fields)), path)
    return path


def _attr(name, type_, **value):
    out = {"name": name, "type": type_, "int": None, "float": None, "string": None, "bool": None}
    out.update(value)
    return out


def parquet_rejects_bad_events() -> str:
    """CLM-PIPE-2: the Parquet reader refuses each bad events file, naming the row and field."""
    import pyarrow as pa

    from subsum.impl.spark import io as sio

    spark = session()
    good = {"id": "e1", "attributes": [_attr("x", "int", int=1)]}
    cases = [
        ("repeated-name", [good, {"id": "e2", "attributes": [_attr("x", "int", int=1), _attr("x", "int", int=2)]}],
         "attributes", "row 2: duplicate attribute name"),
        ("nan", [good, {"id": "e2", "attributes": [_attr("p", "float", float=float("nan"))]}],
         "attributes.p.value", "row 2: float value is NaN"),
        ("second-attribute", [{"id": "e1", "attributes": [_attr("a", "int", int=1), _attr("b", "bool")]}],
         "attributes.b.value", "row 1: exactly the 'bool' value field must be set"),
        ("infinity", [{"id": "e1", "attributes": [_attr("p", "float", float=float("-inf"))]}],
         "attributes.p.value", "row 1: infinities are not allowed"),
        ("wrong-slot", [{"id": "e1", "attributes": [_attr("p", "float", int=3)]}],
         "attributes.p.value", "row 1: exactly the 'float' value field must be set"),
        ("two-slots", [{"id": "e1", "attributes": [_attr("p", "int", int=3, string="x")]}],
         "attributes.p.value", "row 1: exactly the 'int' value field must be set"),
        ("unknown-type", [good, good | {"id": "e2"}, {"id": "e3", "attributes": [_attr("p", "decimal", int=3)]}],
         "attributes.p.type", "row 3: unknown type decimal"),
        ("empty-id", [{"id": "", "attributes": []}], "id", "row 1: must be a non-empty string"),
        ("empty-name", [{"id": "e1", "attributes": [_attr("", "int", int=3)]}], "attributes..name",
         "row 1: must be a non-empty string"),
        ("duplicate-id", [good, {"id": "e2", "attributes": []}, good], "id",
         "row 3: duplicate event id 'e1' (first on row 1)"),
        ("empty", [], None, "the file is empty"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, rows, field, message in cases:
            path = _parquet_case(d, name, rows)
            try:
                sio.read_events(spark, str(path))
            except InputError as exc:
                assert exc.field == field and exc.message.startswith(message), (name, str(exc))
                assert exc.path == str(path)
            else:
                raise AssertionError(f"{name}: accepted")
        bad_type = pa.field("attributes", pa.list_(pa.struct([pa.field("name", pa.string()),
                                                              pa.field("value", pa.string())])))
        path = _parquet_case(d, "column-type", [{"id": "e1", "attributes": [{"name": "x", "value": "1"}]}], bad_type)
        try:
            sio.read_events(spark, str(path))
        except InputError as exc:
            assert exc.field == "attributes" and "expected array<struct" in exc.message, str(exc)
        else:
            raise AssertionError("column-type: accepted")
    return f"{len(cases) + 1} bad Parquet files refused"


JSONL_CASES = {
    "malformed": (["{\"id\": \"s1\", \"filter\": \"x > 1\"}", "{\"id\": \"s2\", \"filter\": "], "subscription"),
    "unknown-operator": (["{\"id\": \"s1\", \"constraints\": [{\"name\": \"x\", \"type\": \"int\", \"op\": \"~\", "
                          "\"value\": 1}]}"], "subscription"),
    "operator-type": (["", "", "{\"id\": \"s1\", \"filter\": \"x:bool > true\"}"], "subscription"),
    "nan": (["{\"id\": \"e1\", \"attributes\": {\"p\": 1.5}}", "{\"id\": \"e2\", \"attributes\": {\"p\": NaN}}"],
            "event"),
    "duplicate-id": (["{\"id\": \"e1\", \"attributes\": {}}", "", "{\"id\": \"e1\", \"attributes\": {\"x\": 1}}"],
                     "event"),
    "not-object": (["[1, 2]"], "event"),
    "empty": (["", "  "], "event"),
    "unknown-field": (["{\"id\": \"e1\", \"attributes\": {}, \"extra\": 1}"], "event"),
    "typed-value": (["{\"id\": \"e1\", \"attributes\": {\"p\": {\"type\": \"float\", \"value\": \"x\"}}}"], "event"),
    # A UTF-8 byte order mark starts the file: Hadoop's line reader drops it there, and so must
    # the in-process reader (spec/formats.md), so the error is line 2's for both.
    "bom-at-start": (["\ufeff{\"id\": \"e1\", \"attributes\": {}}", "{\"id\": \"e1\", \"attributes\": {}}"], "event"),
    # Anywhere else a BOM is not whitespace: malformed JSON on line 2 for both.
    "bom-later": (["{\"id\": \"s1\", \"filter\": \"x > 1\"}", "\ufeff{\"id\": \"s2\", \"filter\": \"x > 2\"}"],
                  "subscription"),
    "float-overflow": (["{\"id\": \"s1\", \"constraints\": [{\"name\": \"x\", \"type\": \"float\", \"op\": \">\", "
                        "\"value\": 1" + "0" * 400 + "}]}"], "subscription"),
}


def jsonl_errors_agree() -> str:
    """CLM-PIPE-3: for each bad JSONL file, the Spark reader raises the in-process reader's error."""
    from subsum.impl.spark import io as sio

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, (lines, kind) in JSONL_CASES.items():
            path = str(write_lines(d, f"{name}.jsonl", lines))
            local, remote = (read_events_jsonl, sio.read_events) if kind == "event" else (
                read_subscriptions_jsonl, sio.read_subscriptions)
            try:
                local(path)
            except InputError as exc:
                want = exc
            else:
                raise AssertionError(f"{name}: the in-process reader accepted it")
            try:
                remote(spark, path)
            except InputError as exc:  # attrs exceptions compare by identity: compare the fields
                got = (exc.path, exc.line, exc.field, exc.message)
                assert got == (want.path, want.line, want.field, want.message), \
                    f"{name}: spark said {exc}, in-process said {want}"
            else:
                raise AssertionError(f"{name}: the Spark reader accepted it")
    return f"{len(JSONL_CASES)} bad files, same errors"
