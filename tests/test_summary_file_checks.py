"""impl/summary in process: `from_json`'s errors word for word (field and message), `statistics` per attribute,
the binary encoding's round trip with finite and infinite bounds, and the owner directory's error.

`subsum summary` reads files through a JSON schema first, so some of `from_json`'s own checks are reached only by
callers of `from_json` (the wire tests, the simulator, users' code): they are tested here, directly.
Expected values are worked by hand from examples/seed000 (S1: exchange wildcard N*SE, symbol = OTE,
8.30 < price < 8.70; S2: symbol prefix OT, price = 8.20, volume > 130000, low < 8.05).
"""

import copy
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.core.filters import parse_filter
from subsum.impl.summary import Directory, IdLayout, OwnerSummary, summary_file, wire
from subsum.impl.summary.file_reader import SummaryFileError
from subsum.impl.summary.stats import statistics
from subsum.impl.summary.summary import SummaryError

EX = Path(__file__).resolve().parents[1] / "examples" / "seed000"


@pytest.fixture(scope="module")
def good_doc(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("summary") / "a.json"
    result = CliRunner().invoke(main, ["summary", "build", "--subscriptions", str(EX / "subscriptions.jsonl"), "--output", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [a["name"] for a in doc["attributes"]] == ["exchange", "low", "price", "symbol", "volume"]
    return doc


def _error(doc) -> str:
    with pytest.raises(SummaryFileError) as caught:
        summary_file.from_json(doc, "s.json")
    return str(caught.value)


def _some_id(doc) -> int:
    return doc["attributes"][0]["rows"][0]["ids"][0]


BAD = {
    "missing-layout": (lambda d: d.pop("layout"), "s.json: field 'layout': missing"),
    "schema-unsorted": (lambda d: d["schema"].reverse(), "s.json: field 'schema': attributes must be sorted by (name, type) and distinct"),
    "names-not-an-object": (lambda d: d.update(names=[]), "s.json: field 'names': expected a JSON object mapping IDs to subscription names"),
    "id-twice": (lambda d: d["attributes"][0]["rows"][0].update(ids=[_some_id(d)] * 2),
                 "s.json: field 'attributes[0].rows[0].ids[1]': ID {id} is listed twice"),
    "unconditional-twice": (lambda d: d.update(unconditional=[_some_id(d)] * 2), "s.json: field 'unconditional[1]': ID {id} is listed twice"),
    "range-hi-not-a-number": (lambda d: d["attributes"][2]["ranges"][0].update(hi="8.7"),
                              "s.json: field 'attributes[2].ranges[0].hi': expected a finite float value, got '8.7'"),
    "equality-not-a-number": (lambda d: d["attributes"][2]["equalities"][0].update(value="8.2"),
                              "s.json: field 'attributes[2].equalities[0].value': expected a finite float value, got '8.2'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_from_json_names_the_field_and_the_fault(good_doc, case):
    change, expected = BAD[case]
    doc = copy.deepcopy(good_doc)
    change(doc)
    assert _error(doc) == expected.format(id=_some_id(good_doc))


def test_a_file_nested_too_deeply_is_one_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SummaryFileError) as caught:
        summary_file.read_json(deep)
    assert str(caught.value) == f"{deep}: malformed JSON: nested too deeply"


def test_statistics_count_each_attributes_rows_by_kind(good_doc):
    got = statistics(summary_file.from_json(good_doc), json_bytes=123)
    per = {a["attribute"]: (a["ranges"], a["equalities"], a["rows"], a["ids"], a["longest_id_list"]) for a in got["attributes"]}
    assert per == {
        "exchange:string": (0, 0, 1, 1, 1),   # S1's wildcard row
        "low:float": (1, 0, 1, 1, 1),         # S2: (-inf, 8.05)
        "price:float": (1, 1, 2, 2, 1),       # S1: (8.30, 8.70); S2: = 8.20
        "symbol:string": (0, 0, 1, 2, 2),     # prefix OT covers = OTE: one row holding both
        "volume:int": (1, 0, 1, 1, 1),        # S2: (130000, inf)
    }
    assert (got["rows"], got["id_entries"], got["mean_id_list"], got["subscriptions"], got["json_bytes"]) == (6, 7, 1.167, 2, 123)


def test_the_binary_encoding_round_trips_finite_and_infinite_bounds(good_doc):
    back = summary_file.to_json(wire.from_bytes(wire.to_bytes(summary_file.from_json(good_doc))))
    assert back["attributes"] == good_doc["attributes"]
    price = next(a for a in back["attributes"] if a["name"] == "price")
    assert [(r["lo"], r["hi"]) for r in price["ranges"]] == [(8.3, 8.7)]  # both bounds finite: each read from the wire


def test_the_directory_refuses_an_id_of_a_broker_it_does_not_know():
    layout = IdLayout(4, 8, 2)
    owners = [OwnerSummary(b, layout, [("price", "float"), ("symbol", "string")]) for b in (0, 2)]
    sid = owners[1].add("s", parse_filter("price > 1.0"))
    owners[1].take_delta()  # shipped: the owner answers for it
    with pytest.raises(SummaryError) as caught:
        Directory(owners[:1]).resolve(("price", "float"), {sid})
    assert str(caught.value) == "no owner broker 2 to ask about price:float"
    with pytest.raises(SummaryError) as none:
        Directory([]).resolve(("price", "float"), {sid})
    assert str(none.value) == "no owner brokers to ask about price:float"
    assert Directory(owners).resolve(("price", "float"), {sid}) == [(sid, (1.0, math.inf))]
