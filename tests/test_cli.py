"""The CLI end to end: the seed 000 golden example, check-filter, verify's exit status."""

import json
from pathlib import Path

import attrs
from click.testing import CliRunner

import subsum.conformance.claims as claims_module
from subsum.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_seed000_running_example_matches_exactly_s1():
    ex = ROOT / "examples" / "seed000"
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(ex / "subscriptions.jsonl"), "--events", str(ex / "events.jsonl")])
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in result.stdout.splitlines()] == [{"event": "fig-2-2", "subscriptions": ["S1"]}]


def test_every_event_gets_a_line_even_without_matches(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"id": "b", "filter": "x > 0"}\n{"id": "a", "constraints": []}\n')
    (tmp_path / "e.jsonl").write_text('{"id": "e1", "attributes": {"x": 1}}\n{"id": "e2", "attributes": {}}\n')
    result = CliRunner().invoke(main, ["match", "--subscriptions", str(tmp_path / "s.jsonl"), "--events", str(tmp_path / "e.jsonl")])
    assert result.stdout.splitlines() == [
        '{"event": "e1", "subscriptions": ["a", "b"]}',
        '{"event": "e2", "subscriptions": ["a"]}',
    ]


def test_check_filter_prints_the_normal_form():
    result = CliRunner().invoke(main, ["check-filter", 'symbol prefix "OT" and price > 8.30 and price > 8.30 and vol:int any'])
    assert result.exit_code == 0
    assert result.stdout == 'price > 8.3 and symbol prefix "OT" and vol:int any\n'


def test_check_filter_points_at_the_column():
    result = CliRunner().invoke(main, ["check-filter", "price > 8.30 and symbol < 3 and x"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: column 34: the filter ends too early; expected ':' or an operator (=, !=, <, <=, >, >=, prefix, suffix, contains, wildcard, any)",
        "  price > 8.30 and symbol < 3 and x",
        "                                   ^",
    ]


def test_verify_passes_and_prints_json(tmp_path):
    result = CliRunner().invoke(main, ["verify", "--claim", "CLM-EX-1", "--claim", "CLM-MATCH-3", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(r["claim"], r["status"]) for r in data["results"]] == [("CLM-EX-1", "pass"), ("CLM-MATCH-3", "pass")]
    assert (data["passed"], data["failed"], data["timed_out"]) == (2, 0, 0)
    out = tmp_path / "v.json"  # the old spelling, for one release
    old = CliRunner().invoke(main, ["verify", "--claim", "CLM-EX-1", "--json", str(out)])
    assert old.exit_code == 0 and json.loads(out.read_text())["results"][0]["claim"] == "CLM-EX-1", old.output
    assert "`--json FILE` is deprecated" in old.stderr


def test_verify_fails_when_a_check_fails(monkeypatch):
    def broken():
        raise AssertionError("planted failure")

    claim = claims_module.claim_by_id("CLM-EX-1")
    planted = attrs.evolve(claim, checks=(claims_module.Check("example", "planted", broken),))
    monkeypatch.setattr(claims_module, "CLAIMS", (planted,))
    result = CliRunner().invoke(main, ["verify"])
    assert result.exit_code == 1
    assert "planted failure" in result.stderr
    assert "0 passed, 1 failed" in result.stdout


def test_verify_rejects_an_unknown_claim():
    result = CliRunner().invoke(main, ["verify", "--claim", "CLM-NOPE"])
    assert result.exit_code == 2
    assert "unknown claim 'CLM-NOPE'" in result.stderr


def test_properties_use_the_profile_active_when_they_run():
    # Regression: Hypothesis binds settings when @given decorates. A slow
    # example must not trip the default 200 ms deadline under the ci profile.
    import time

    from hypothesis import strategies as st

    from subsum.conformance.runner import profiles
    from subsum.conformance.checks.matching.properties import property_check, run_property

    calls = []

    @property_check(st.integers())
    def slow(n):
        calls.append(n)
        if len(calls) == 1:
            time.sleep(0.3)

    profiles.load("ci")
    run_property(slow)
    assert 1 <= len(calls) <= 60
