"""Bad input stops with file:line:field, exit code 2, and no partial output."""

import json

import pytest
from click.testing import CliRunner

from subsum.cli import main

GOOD_SUBS = '{"id": "s1", "filter": "x > 1"}\n'
GOOD_EVENTS = '{"id": "e1", "attributes": {"x": 2}}\n'

# (name, subscriptions text, events text, the exact error message)
CASES = [
    ("malformed-json", '{"id": "s1", "filter": }\n', GOOD_EVENTS,
     "subs.jsonl:1: malformed JSON: Expecting value (column 24)"),
    ("not-an-object", "[1, 2]\n", GOOD_EVENTS,
     "subs.jsonl:1: expected a JSON object, got an array"),
    ("unknown-operator", '{"id": "s1", "constraints": [{"name": "x", "type": "int", "op": "~", "value": 1}]}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'constraints[0].op': unknown operator '~'; expected one of =, !=, <, <=, >, >=, prefix, suffix, contains, wildcard, any"),
    ("operator-type-mismatch", '{"id": "s1", "constraints": [{"name": "s", "type": "string", "op": "<", "value": "a"}]}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'constraints[0].op': operator '<' does not apply to type string; string allows =, !=, prefix, suffix, contains, wildcard, any"),
    ("ordering-on-bool-in-filter", '{"id": "s1", "filter": "flag > true"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': column 6: operator '>' does not apply to type bool; bool allows =, !=, any"),
    ("constraint-value-type-mismatch", '{"id": "s1", "constraints": [{"name": "x", "type": "int", "op": "=", "value": "7"}]}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'constraints[0].value': int value must be an integer, got the string '7'"),
    ("nan", GOOD_SUBS, '{"id": "e1", "attributes": {"price": NaN}}\n',
     "events.jsonl:1: field 'attributes.price': NaN is not allowed; values must be finite numbers"),
    ("infinity-by-overflow", GOOD_SUBS, '{"id": "e1", "attributes": {"price": 1e400}}\n',
     "events.jsonl:1: field 'attributes.price': inf is out of the float range; infinities are not allowed"),
    ("duplicate-attribute-name", GOOD_SUBS, '{"id": "e1", "attributes": {"price": 1, "price": 2}}\n',
     "events.jsonl:1: field 'attributes.price': duplicate attribute name; an event holds each name at most once"),
    ("duplicate-subscription-id", GOOD_SUBS + '{"id": "s1", "filter": "x < 1"}\n', GOOD_EVENTS,
     "subs.jsonl:2: field 'id': duplicate subscription id 's1' (first on line 1)"),
    ("duplicate-event-id", GOOD_SUBS, GOOD_EVENTS + "\n" + GOOD_EVENTS,
     "events.jsonl:3: field 'id': duplicate event id 'e1' (first on line 1)"),
    ("int-out-of-range", GOOD_SUBS, '{"id": "e1", "attributes": {"volume": 9223372036854775808}}\n',
     "events.jsonl:1: field 'attributes.volume': int value 9223372036854775808 is outside the 64-bit range [-9223372036854775808, 9223372036854775807]"),
    ("explicit-type-mismatch", GOOD_SUBS, '{"id": "e1", "attributes": {"x": {"type": "int", "value": 8.5}}}\n',
     "events.jsonl:1: field 'attributes.x.value': int value must be an integer, got the float 8.5"),
    ("unknown-type", GOOD_SUBS, '{"id": "e1", "attributes": {"x": {"type": "date", "value": "2003-01-01"}}}\n',
     "events.jsonl:1: field 'attributes.x.type': unknown type 'date'; expected one of int, float, string, bool"),
    ("empty-events-file", GOOD_SUBS, "",
     "events.jsonl: the file is empty; expected one event per line"),
    ("blank-subscriptions-file", "\n  \n", GOOD_EVENTS,
     "subs.jsonl: the file is empty; expected one subscription per line"),
    ("missing-id", '{"filter": "x > 1"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'id': missing"),
    ("missing-value", '{"id": "s1", "constraints": [{"name": "x", "type": "int", "op": ">"}]}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'constraints[0].value': missing; operator '>' needs a value"),
    ("unknown-field", '{"id": "s1", "filtr": "x > 1"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filtr': unknown field; expected id, filter, constraints"),
    ("filter-and-constraints", '{"id": "s1", "filter": "x > 1", "constraints": []}\n', GOOD_EVENTS,
     "subs.jsonl:1: give exactly one of 'filter' or 'constraints'"),
    ("bad-filter-syntax", '{"id": "s1", "filter": "price > 3 or x = 1"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': column 11: unexpected 'or'; expected 'and' or the end of the filter"),
    ("wildcard-two-stars", '{"id": "s1", "filter": "s wildcard \\"a*b*\\""}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': column 12: wildcard pattern 'a*b*' must hold exactly one '*', it holds 2"),
    ("empty-id", '{"id": "", "filter": "x > 1"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'id': must be a non-empty string, got an empty string"),
    ("lone-surrogate", GOOD_SUBS, '{"id": "e1", "attributes": {"s": "\\ud800"}}\n',
     "events.jsonl:1: field 'attributes.s': string value is not valid Unicode (lone surrogate at index 0)"),
    # Integers past every range: more digits than Python converts, or too many for a float.
    ("integer-of-5001-digits", GOOD_SUBS, '{"id": "e1", "attributes": {"x": 1' + "0" * 5000 + '}}\n',
     "events.jsonl:1: field 'attributes.x': an integer of 5001 digits is out of range; ints are 64-bit, floats finite"),
    ("int-past-the-float-range", '{"id": "s1", "constraints": [{"name": "x", "type": "float", "op": ">", "value": 1'
     + "0" * 400 + '}]}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'constraints[0].value': an integer of 401 digits is out of the float range"),
    ("filter-int-of-5001-digits", '{"id": "s1", "filter": "x > 1' + "0" * 5000 + '"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': column 5: an integer of 5001 digits is out of range; ints are 64-bit"),
    ("filter-int-past-the-float-range", '{"id": "s1", "filter": "x:float > 1' + "0" * 400 + '"}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': column 11: an integer of 401 digits is out of the float range"),
    # Non-finite constants where a string is expected.
    ("nan-id", GOOD_SUBS, '{"id": NaN, "attributes": {}}\n',
     "events.jsonl:1: field 'id': must be a non-empty string, got a number"),
    ("nan-filter", '{"id": "s1", "filter": NaN}\n', GOOD_EVENTS,
     "subs.jsonl:1: field 'filter': must be a string, got a number"),
    # A byte order mark is dropped at the start of a file only (as Spark's reader does).
    ("bom-not-at-the-start", GOOD_SUBS + "\ufeff" + '{"id": "s2", "filter": "x > 2"}\n', GOOD_EVENTS,
     "subs.jsonl:2: malformed JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)"),
]


def run_match(tmp_path, monkeypatch, subs_text, events_text):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "subs.jsonl").write_text(subs_text, encoding="utf-8")
    (tmp_path / "events.jsonl").write_text(events_text, encoding="utf-8")
    args = ["match", "--subscriptions", "subs.jsonl", "--events", "events.jsonl", "--output", "out.jsonl"]
    result = CliRunner().invoke(main, args)
    return result, sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("name,subs,events,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_reported_exactly_with_no_output(tmp_path, monkeypatch, name, subs, events, message):
    result, produced = run_match(tmp_path, monkeypatch, subs, events)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {message}"
    assert produced == ["events.jsonl", "subs.jsonl"], "partial output was written"


def test_not_utf8_is_reported_with_its_line(tmp_path):
    (tmp_path / "subs.jsonl").write_bytes(GOOD_SUBS.encode() + b'{"id": "s2", "filter": "s = \\"\xff\\""}\n')
    (tmp_path / "events.jsonl").write_text(GOOD_EVENTS)
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(tmp_path / "subs.jsonl"), "--events", str(tmp_path / "events.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'subs.jsonl'}:2: not UTF-8 (byte 31 of the line)"
    assert result.stdout == ""


def test_missing_file_is_reported(tmp_path):
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(tmp_path / "nope.jsonl"), "--events", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'nope.jsonl'}: cannot read: No such file or directory"


def test_an_existing_output_is_left_untouched_on_bad_input(tmp_path):
    (tmp_path / "subs.jsonl").write_text(GOOD_SUBS)
    (tmp_path / "events.jsonl").write_text('{"id": "e1", "attributes": {"x": NaN}}\n')
    (tmp_path / "out.jsonl").write_text("previous\n")
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(tmp_path / "subs.jsonl"), "--events", str(tmp_path / "events.jsonl"),
                                       "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2
    assert (tmp_path / "out.jsonl").read_text() == "previous\n"


def test_a_large_valid_input_is_matched_completely(tmp_path):
    subs = "".join(json.dumps({"id": f"s{i}", "filter": f"x >= {i}"}) + "\n" for i in range(200))
    events = "".join(json.dumps({"id": f"e{j}", "attributes": {"x": j}}) + "\n" for j in range(2000))
    (tmp_path / "subs.jsonl").write_text(subs)
    (tmp_path / "events.jsonl").write_text(events)
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(tmp_path / "subs.jsonl"), "--events", str(tmp_path / "events.jsonl"),
                                       "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(lines) == 2000
    # Event j matches x >= i for every i <= j, capped at 200 subscriptions.
    assert all(len(line["subscriptions"]) == min(int(line["event"][1:]) + 1, 200) for line in lines)


def test_a_byte_order_mark_at_the_start_is_dropped(tmp_path, monkeypatch):
    result, produced = run_match(tmp_path, monkeypatch, "\ufeff" + GOOD_SUBS, "\ufeff" + GOOD_EVENTS)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.jsonl").read_text() == '{"event": "e1", "subscriptions": ["s1"]}\n'


def test_outputs_get_the_usual_file_mode(tmp_path, monkeypatch):
    """Atomic writes go through mkstemp (0600); the renamed output must have 0666 less the umask."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        result, _ = run_match(tmp_path, monkeypatch, GOOD_SUBS, GOOD_EVENTS)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "out.jsonl").stat().st_mode) == 0o644


LINK = '{"time": 0.0, "kind": "link", "a": 0, "b": 1, "up": true}\n'


@pytest.mark.parametrize("reader, name, text, where", [
    ("edgelist", "bad.edgelist", "0 1\n2\n", ":2: expected two node names, got '2'"),
    ("edgelist", "bad.edgelist", "3 3\n", ":1: link 3 3 is a self-loop"),
    ("edgelist", "bad.edgelist", "# only a comment\n\n", ": the file holds no links"),
    ("trace", "t.jsonl", "\ufeff" + LINK + '{"time": 1.0, "kind": NaN}\n', ":2: field 'kind': must be a string, got a number"),
    ("trace", "t.jsonl", "\ufeff" + LINK + '{"time": 1.0, "kind": ["publish"]}\n', ":2: field 'kind': must be a string, got an array"),
    ("trace", "t.jsonl", "\ufeff" + LINK + '{"time": 1.0, "kind": "teleport"}\n', ":2: field 'kind': unknown kind 'teleport'; "
     "expected one of subscribe, unsubscribe, publish, deliver, link, crash, leave, join"),
])
def test_a_bad_topology_or_trace_file_is_refused_naming_file_and_line(tmp_path, reader, name, text, where):
    from subsum.core.errors import InputError
    from subsum.core.tracefile import read_trace
    from subsum.impl.network import read_edgelist

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        {"edgelist": read_edgelist, "trace": read_trace}[reader](path)
    assert str(caught.value) == f"{path}{where}"


def test_a_trace_publishing_one_event_id_twice_is_bad_input(tmp_path):
    """spec/07: the reference checker's reader refuses it, naming both lines
    (the Spark reader's twin is in the hostile corpus, `trace-check/event-published-twice`)."""
    from subsum.core.errors import InputError
    from subsum.core.tracefile import read_trace

    path = tmp_path / "t.jsonl"
    path.write_text('{"time": 0.0, "kind": "link", "a": 0, "b": 1, "up": true}\n'
                    '{"time": 1, "kind": "publish", "event": 7, "client": 1000000, "broker": 1, "attributes": {"x": 5}}\n'
                    '{"time": 2, "kind": "publish", "event": 8, "client": 1000000, "broker": 1, "attributes": {"x": 5}}\n'
                    '{"time": 3, "kind": "publish", "event": 7, "client": 1000000, "broker": 1, "attributes": {"x": 6}}\n')
    with pytest.raises(InputError, match=r"t.jsonl:4: field 'event': event 7 is published twice \(first on line 2\)"):
        read_trace(path)
