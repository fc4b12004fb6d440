"""`subsum summary build | match | stats | merge` end to end, and bad summary files."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def lines(text):
    return [json.loads(line) for line in text.splitlines()]


def build(tmp_path, subs, name="a.json", *extra):
    out = tmp_path / name
    result = run("summary", "build", "--subscriptions", subs, "--output", out, *extra)
    assert result.exit_code == 0, result.output
    return out


def test_example_4_1_through_the_cli(tmp_path):
    summary = build(tmp_path, EX / "subscriptions.jsonl")
    result = run("summary", "match", "--summary", summary, "--events", EX / "events.jsonl")
    assert result.exit_code == 0, result.output
    assert lines(result.stdout) == [{"event": "fig-2-2", "subscriptions": ["S1"]}]
    doc = json.loads(summary.read_text())
    price = next(a for a in doc["attributes"] if a["name"] == "price")
    assert [(r["lo"], r["hi"]) for r in price["ranges"]] == [(8.3, 8.7)]
    assert [e["value"] for e in price["equalities"]] == [8.2]


def test_false_positive_and_recheck(tmp_path):
    summary = build(tmp_path, EX / "fig-4-5-subscriptions.jsonl")
    events = EX / "fig-4-5-events.jsonl"
    raw = run("summary", "match", "--summary", summary, "--events", events)
    assert [l["subscriptions"] for l in lines(raw.stdout)] == [["S1", "S2", "S3"], ["S1", "S2", "S3"], ["S4"], []]
    checked = run("summary", "match", "--summary", summary, "--events", events, "--subscriptions", EX / "fig-4-5-subscriptions.jsonl")
    assert [l["subscriptions"] for l in lines(checked.stdout)] == [[], ["S1", "S3"], ["S4"], []]
    assert "7 candidate matches, 4 false positives removed" in checked.stderr
    exact = run("match", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl", "--events", events)
    assert lines(exact.stdout) == lines(checked.stdout)


def test_stats_reports_formula_and_measured_sizes(tmp_path):
    summary = build(tmp_path, EX / "fig-4-5-subscriptions.jsonl")
    result = run("summary", "stats", "--summary", summary, "--format", "json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["rows"] == 3 and stats["id_entries"] == 8 and stats["subscriptions"] == 4
    # price: one range (2 values) + 4 IDs = 2*4 + 4*4; symbol: 2 rows + 4 IDs = 2*10 + 4*4 (DEF-SUM-15).
    assert stats["formula_bytes"] == {"aacs": 24.0, "sacs": 36.0, "total": 60.0}
    assert stats["measured_bytes"] > 0 and stats["json_bytes"] == summary.stat().st_size
    table = run("summary", "stats", "--summary", summary)
    assert "price:float" in table.stdout and "formula: 60" in table.stdout


def test_merge_of_two_brokers(tmp_path):
    subs = tmp_path / "s.jsonl"
    subs.write_text('{"id": "a", "filter": "x >= 1 and x <= 3"}\n')
    other = tmp_path / "t.jsonl"
    other.write_text('{"id": "b", "filter": "x >= 3 and x <= 5"}\n')
    a = build(tmp_path, subs, "a.json", "--broker", 0, "--brokers", 2, "--max-subscriptions", 4)
    b = build(tmp_path, other, "b.json", "--broker", 1, "--brokers", 2, "--max-subscriptions", 4)
    result = run("summary", "merge", "--output", tmp_path / "m.json", a, b)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["merged_brokers"] == [0, 1]
    assert [(r["lo"], r["hi"], len(r["ids"])) for r in doc["attributes"][0]["ranges"]] == [(1, 5, 2)]
    events = tmp_path / "e.jsonl"
    events.write_text('{"id": "e", "attributes": {"x": 2}}\n')
    matched = run("summary", "match", "--summary", tmp_path / "m.json", "--events", events)
    assert lines(matched.stdout) == [{"event": "e", "subscriptions": ["a", "b"]}]  # b is a false positive


def test_unsatisfiable_subscriptions_are_left_out_and_named(tmp_path):
    subs = tmp_path / "s.jsonl"
    subs.write_text('{"id": "never", "filter": "x < 1 and x > 2"}\n{"id": "ok", "filter": "x > 0"}\n')
    result = run("summary", "build", "--subscriptions", subs)
    assert result.exit_code == 0
    assert "left out 1 that can never match: never" in result.stderr
    assert list(json.loads(result.stdout)["names"].values()) == ["ok"]


def _good_doc(tmp_path):
    return json.loads(build(tmp_path, EX / "subscriptions.jsonl").read_text())


BAD = [
    ("malformed", lambda d: None, "{not json", "malformed JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ("nan", lambda d: None, '{"format": NaN}', "NaN is not allowed in a summary file"),
    ("format", lambda d: d.update(format="other"), None, "field 'format': 'subsum-summary' was expected"),
    ("unknown-field", lambda d: d.update(extra=1), None, "Additional properties are not allowed ('extra' was unexpected)"),
    ("empty-ids", lambda d: d["attributes"][0]["rows"][0].update(ids=[]), None, "field 'attributes[0].rows[0].ids': [] should be non-empty"),
    ("bad-op", lambda d: d["attributes"][0]["rows"][0].update(op="<"), None,
     "field 'attributes[0].rows[0].op': operator '<' cannot stand in a string summary row"),
    ("range-order", lambda d: d["attributes"][2]["ranges"][0].update(lo=9.0), None,
     "field 'attributes[2].ranges[0]': a range needs lo < hi, got 9.0 .. 8.7"),
    ("equality-in-range", lambda d: d["attributes"][2]["equalities"][0].update(value=8.5), None,
     "field 'attributes (price:float)': rows are not in canonical form"),
    ("string-for-float", lambda d: d["attributes"][2]["equalities"][0].update(value="8.2"), None,
     "field 'attributes[2].equalities[0].value': '8.2' is not of type 'number'"),
    ("id-too-wide", lambda d: d["attributes"][0]["rows"][0].update(ids=[1 << 40]), None,
     "field 'attributes[0].rows[0].ids[0]': ID 1099511627776 does not fit in the layout's 6 bits"),
    ("not-in-schema", lambda d: d["attributes"][0].update(name="nope"), None,
     "field 'attributes[0]': attribute nope:string is not in the schema"),
    ("repeated-key", lambda d: None, '{"format": "subsum-summary", "format": "subsum-summary"}',
     "field 'format': given more than once"),
    ("integer-of-5001-digits", lambda d: None, '{"version": 1' + "0" * 5000 + '}', "an integer of 5001 digits is out of range"),
]


@pytest.mark.parametrize("name,mutate,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_summary_files_name_the_field_and_write_nothing(tmp_path, name, mutate, text, message):
    doc = _good_doc(tmp_path)
    assert [a["name"] for a in doc["attributes"]] == ["exchange", "low", "price", "symbol", "volume"]
    if text is None:
        mutate(doc)
        text = json.dumps(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    out = tmp_path / "out.jsonl"
    result = run("summary", "match", "--summary", bad, "--events", EX / "events.jsonl", "--output", out)
    assert result.exit_code == 2, result.output
    assert f"{bad}: " in result.stderr and message in result.stderr.replace("\n", " "), result.stderr
    assert not out.exists()
    stats = run("summary", "stats", "--summary", bad)
    assert stats.exit_code == 2 and message in stats.stderr.replace("\n", " ")


def test_bad_build_arguments(tmp_path):
    result = run("summary", "build", "--subscriptions", EX / "subscriptions.jsonl", "--broker", 3, "--brokers", 2, "--output", tmp_path / "x.json")
    assert result.exit_code == 2 and "--broker 3 is outside 0 .. 1 (--brokers 2)" in result.stderr
    assert not (tmp_path / "x.json").exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = run("summary", "build", "--subscriptions", empty, "--output", tmp_path / "x.json")
    assert result.exit_code == 2 and "the file is empty" in result.stderr and not (tmp_path / "x.json").exists()


def test_recheck_needs_every_named_subscription(tmp_path):
    summary = build(tmp_path, EX / "fig-4-5-subscriptions.jsonl")
    partial = tmp_path / "p.jsonl"
    partial.write_text('{"id": "S1", "filter": "symbol = \\"OTE\\" and price = 8.50"}\n')
    result = run("summary", "match", "--summary", summary, "--events", EX / "fig-4-5-events.jsonl", "--subscriptions", partial)
    assert result.exit_code == 2 and "does not hold 3 subscription(s) the summary names: S2, S3, S4" in result.stderr


def test_merge_rejects_different_layouts(tmp_path):
    a = build(tmp_path, EX / "subscriptions.jsonl", "a.json")
    b = build(tmp_path, EX / "fig-4-5-subscriptions.jsonl", "b.json")
    result = run("summary", "merge", "--output", tmp_path / "m.json", a, b)
    assert result.exit_code == 2 and "cannot merge summaries with different ID layouts" in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_a_byte_order_mark_at_the_start_of_a_summary_file_is_dropped(tmp_path):
    good = build(tmp_path, EX / "subscriptions.jsonl")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + good.read_bytes())
    plain, marked = (run("summary", "match", "--summary", f, "--events", EX / "events.jsonl") for f in (good, bom))
    assert marked.exit_code == 0, marked.output
    assert marked.stdout == plain.stdout and '"fig-2-2"' in marked.stdout


def test_the_binary_encoding_round_trips_strings_of_64_kib_and_more():
    """The 2-byte string length escapes to 4 bytes at 65,535 (issue 21: `summary stats`
    crashed on a summary `summary build` wrote)."""
    from subsum.impl.summary import summary_file, wire

    sizes = {}
    for size in (65_534, 65_535, 70_000):
        value = "é" * (size // 2) + "x" * (size % 2)  # `size` bytes of UTF-8
        doc = {"format": "subsum-summary", "version": 1, "layout": {"brokers": 1, "max_subscriptions": 1, "attributes": 1},
               "schema": [{"name": "s", "type": "string"}], "virtual": "none", "merged_brokers": [0],
               "attributes": [{"name": "s", "type": "string", "rows": [{"op": "prefix", "value": value, "ids": [1]}]}]}
        data = wire.to_bytes(summary_file.from_json(doc))
        assert summary_file.to_json(wire.from_bytes(data))["attributes"] == doc["attributes"]
        sizes[size] = len(data)
    assert sizes[65_535] - sizes[65_534] == 1 + 4  # one byte more, and the 4-byte length after the escape
    assert sizes[70_000] - sizes[65_535] == 70_000 - 65_535
