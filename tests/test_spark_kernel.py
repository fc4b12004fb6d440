"""The kernel plan of the Spark engine (spec/07-pipeline.md DEF-PIPE-4):
Arrow batches to the kernel's columns and back, the plan's choice, and
executors that cannot run it. Its agreement with the model is CLM-PIPE-1's
(conformance/checks/pipeline/spark.py, both plans); the CLI's bytes against the in-process
engines are tests/test_engine_agreement.py's and the hostile corpus's;
executors without Python, tests/test_spark.py's fresh-process test."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from subsum.cli import main
from subsum.core.types import Attribute, Event
from subsum.impl.spark import arrow as karrow
from subsum.impl.spark.frames import attribute_rows

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"

values = {"int": st.integers(-(2**63), 2**63 - 1), "float": st.floats(allow_nan=False, allow_infinity=False),
          "string": st.text(max_size=5), "bool": st.booleans()}


@st.composite
def events(draw):
    out = []
    for _ in range(draw(st.integers(0, 6))):
        names = draw(st.lists(st.sampled_from(["x", "y", "é", "z\x00"]), unique=True, max_size=4))
        attrs = []
        for name in names:
            t = draw(st.sampled_from(list(values)))
            attrs.append(Attribute(name, t, draw(values[t])))
        out.append(Event(tuple(attrs)))
    return out


#: DEF-PIPE-1's events as Spark hands them to mapInArrow (frames.EVENTS_DDL; building it from the DDL needs a session)
ATTRIBUTES = pa.list_(pa.struct([("name", pa.string()), ("type", pa.string()), ("int", pa.int64()), ("float", pa.float64()),
                                 ("string", pa.string()), ("bool", pa.bool_())]))
EVENTS = pa.schema([("ord", pa.int64()), ("id", pa.string()), ("attributes", ATTRIBUTES)])


def arrow_events(evs: list[Event]) -> pa.RecordBatch:
    schema = EVENTS
    rows = [{"ord": 10 + i, "id": f"e{i}", "attributes": attribute_rows(e)} for i, e in enumerate(evs)]
    return pa.Table.from_pylist(rows, schema=schema).combine_chunks().to_batches()[0] if rows else \
        pa.RecordBatch.from_pylist([], schema=schema)


def as_sets(evs: list[Event]) -> list[set]:
    return [{(a.name, a.type, a.value + 0.0 if a.type == "float" else a.value) for a in e.attributes} for e in evs]


@settings(max_examples=60, deadline=None)
@given(events(), st.integers(0, 3))
def test_an_arrow_batch_becomes_the_columnar_batch_of_its_events(evs, start):
    """Row i of the Arrow batch is event i of the ColumnarBatch, whatever slice of a larger batch it is."""
    batch = arrow_events([Event(()) for _ in range(start)] + evs).slice(start)
    columnar = karrow.columnar_batch(batch)
    columnar.check()
    assert columnar.n_events == len(evs)
    got = columnar.to_events()
    assert as_sets(got) == as_sets(evs)
    for e in got:  # -0.0 arrives as +0.0 (DEF-DATA-2)
        assert all(np.copysign(1.0, a.value) == 1.0 for a in e.attributes if a.type == "float" and a.value == 0)


def test_result_batches_are_cut_between_events_and_keep_every_pair(monkeypatch):
    ids = pa.array(["b", "a", "c"])
    rank = karrow.slot_ranks(["b", "a", "c"])
    pairs = (np.array([0, 0, 2, 2, 2, 3]), np.array([2, 0, 0, 1, 2, 1]))
    whole = [r for b in karrow.result_batches(pa.array([5, 6, 7, 8]), pa.array(["p", "q", "r", "s"]), pairs, ids, rank)
             for r in b.to_pylist()]
    assert whole == [{"ord": 5, "event": "p", "subscriptions": ["b", "c"]}, {"ord": 6, "event": "q", "subscriptions": []},
                     {"ord": 7, "event": "r", "subscriptions": ["a", "b", "c"]}, {"ord": 8, "event": "s", "subscriptions": ["a"]}]
    monkeypatch.setattr(karrow, "PAIRS_PER_BATCH", 2)
    cut = list(karrow.result_batches(pa.array([5, 6, 7, 8]), pa.array(["p", "q", "r", "s"]), pairs, ids, rank))
    assert len(cut) == 3 and [r for b in cut for r in b.to_pylist()] == whole  # event r's three pairs stay together


def test_a_batch_missing_its_typed_value_is_refused():
    bad = pa.table({"attributes": [[{"name": "x", "type": "int", "int": None, "float": 1.0, "string": None, "bool": None}]]},
                   schema=pa.schema([("attributes", ATTRIBUTES)]))
    with pytest.raises(ValueError, match="type int has no int value"):
        karrow.columnar_batch(bad)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_plan_is_refused_without_spark_and_reported_with_it(tmp_path):
    local = run("match", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl", "--plan", "kernel")
    assert local.exit_code == 2 and "--plan apply only to --engine spark" in local.stderr
    bad = run("match", "--engine", "spark", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl",
              "--plan", "fast")
    assert bad.exit_code == 2 and "'fast' is not one of 'sql', 'kernel', 'auto'" in bad.stderr
    for plan, reason in (("kernel", "the executors run subsum's kernel"), ("sql", None)):
        stats = tmp_path / f"{plan}.json"
        done = run("match", "--engine", "spark", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl",
                   "--events", EX / "fig-4-5-events.jsonl", "--plan", plan, "--json", stats)
        assert done.exit_code == 0, done.output
        report = json.loads(stats.read_text())
        assert report["plan"] == plan and report.get("plan_reason") == reason
        assert done.stderr.splitlines()[-1] == f"plan: {plan}" + (f" ({reason})" if reason else "")
        assert done.stdout == run("match", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl",
                                  "--events", EX / "fig-4-5-events.jsonl").stdout
