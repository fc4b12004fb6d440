"""`subsum cache replay` (spec/formats.md, "Cache operations"): the example
of examples/caching gives the evictions worked out by hand in its README,
and bad operation files get a file:line:field error and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "caching"


def hand_worked() -> dict[str, tuple[list[tuple[int, str]], list[str]]]:
    """The README's table: policy -> ([(line, evicted)], final contents)."""
    rows = {}
    for line in (EXAMPLE / "README.md").read_text().splitlines():
        match = re.fullmatch(r"\| (fifo|regdeg|lru|lfu) \| (.+) \| (.+) \|", line)
        if match:
            evictions = [(int(n), m) for n, m in re.findall(r"(\d+): (m\d+)", match.group(2))]
            rows[match.group(1)] = (evictions, match.group(3).split())
    return rows


def test_the_readme_lists_all_four_policies():
    assert sorted(hand_worked()) == ["fifo", "lfu", "lru", "regdeg"]


@pytest.mark.parametrize("policy", ["fifo", "regdeg", "lru", "lfu"])
def test_example_gives_the_hand_worked_evictions(policy):
    result = CliRunner().invoke(main, ["cache", "replay", "--policy", policy, "--capacity", "3", "--format", "json",
                                       str(EXAMPLE / "ops.jsonl")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    evictions, final = hand_worked()[policy]
    assert [(e["line"], e["evicted"]) for e in report["evictions"]] == evictions
    assert report["final"] == final


def test_text_output_and_the_reference_beside_it():
    result = CliRunner().invoke(main, ["cache", "replay", "--policy", "lfu", "--capacity", "3", str(EXAMPLE / "ops.jsonl")])
    assert result.exit_code == 0, result.output
    assert "final (head first, next victim last): m6 m4 m1" in result.stdout
    checked = CliRunner().invoke(main, ["replay", str(EXAMPLE / "ops.jsonl"), "--policy", "lfu", "--capacity", "3"])
    assert checked.exit_code == 0 and "agree on all 10 operations" in checked.stdout, checked.output
    old = CliRunner().invoke(main, ["cache", "replay", "--policy", "lfu", "--capacity", "3", "--check", str(EXAMPLE / "ops.jsonl")])
    assert old.exit_code == 0 and "agree on all 10 operations" in old.stderr, old.output  # the old spelling, for one release
    assert "`subsum cache replay --check` is deprecated" in old.stderr


ONE_OF = "expected one of insert, hit, unsubscribe, advance"
NOT_AN_ID = "must be a non-empty string (a message id), got"


@pytest.mark.parametrize("lines, where", [
    (['{"op": "insert", "message": "m1", "time": 3}', '{"op": "hit", "matching": ["m1"], "time": 2}'],
     ":2: field 'time': 2 is earlier than the time before it, 3.0; the clock never goes back"),
    (['{"op": "insert", "message": "m1", "time": 2}', '{"op": "advance", "time": 1}'],
     ":2: field 'time': 1 is earlier than the time before it, 2.0; the clock never goes back"),
    (['{"op": "insert", "message": "", "time": 0}'], f":1: field 'message': {NOT_AN_ID} an empty string"),
    (['{"op": "insert", "message": 7}'], f":1: field 'message': {NOT_AN_ID} int"),
    (['{"op": "insert", "message": "m1", "time": 2}', '', '{"op": "insert", "message": 3}'], f":3: field 'message': {NOT_AN_ID} int"),
    (['{"op": "evict", "message": "m1"}'], f":1: field 'op': unknown operation 'evict'; {ONE_OF}"),
    (['{"message": "m1"}'], f":1: field 'op': missing; {ONE_OF}"),
    (['{"op": "advance"}'], ":1: field 'time': missing"),
    (['{"op": "hit", "matching": "m1"}'], ":1: field 'matching': must be a list of message ids, got string"),
    (['{"op": "hit", "matching": ["m1", 2]}'], f":1: field 'matching[1]': {NOT_AN_ID} int"),
    (['{"op": "unsubscribe", "matching": [""]}'], f":1: field 'matching[0]': {NOT_AN_ID} an empty string"),
    (['{"op": "insert", "message": "m1", "time": NaN}'], ":1: field 'time': NaN is not allowed; values must be finite numbers"),
    (['{"op": "insert", "message": "m1", "time": 1e999}'], ":1: field 'time': inf is out of the float range; infinities are not allowed"),
    (['{"op": "insert", "message": "m1", "time": true}'], ":1: field 'time': must be a number, got bool"),
    (['{"op": "insert", "message": "m1", "time": "3"}'], ":1: field 'time': must be a number, got string"),
    (['{"op": "insert", "message": "m1", "time": -1}'], ":1: field 'time': must be a finite number >= 0, got -1"),
    (['{"op": "insert", "message": "m1", "ttl": 4}'], ":1: field 'ttl': unknown field; expected op, message, time"),
    (['{"op": "advance", "time": 1, "x": 2}'], ":1: field 'x': unknown field; expected op, time"),
    (['{"op": "insert", "message": "m1", "message": "m2"}'], ":1: field 'message': given more than once"),
    (['{"op": "insert", "message": "\\ud800"}'], ":1: field 'message': holds a lone surrogate, which no output can encode"),
    (['{"op": "insert", "message": "m1"', ], ":1: malformed JSON: Expecting ',' delimiter (column 33)"),
    (['[1, 2]'], ":1: expected a JSON object, got an array"),
    (['', '  '], ": the file is empty; expected one operation per line"),
])
def test_bad_operation_files(tmp_path, lines, where):
    """The whole error line, as the user reads it: the file, the line, the field and what was wrong."""
    path = tmp_path / "ops.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["cache", "replay", "--policy", "fifo", "--capacity", "2", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.replace("\n", "") == f"error: {path}{where}", result.stderr
    assert result.stdout == ""  # no partial output


def test_missing_file_and_bad_capacity(tmp_path):
    result = CliRunner().invoke(main, ["cache", "replay", "--policy", "fifo", "--capacity", "2", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "cannot read" in result.stderr
    result = CliRunner().invoke(main, ["cache", "replay", "--policy", "fifo", "--capacity", "0", str(EXAMPLE / "ops.jsonl")])
    assert result.exit_code == 2 and "--capacity" in result.stderr
