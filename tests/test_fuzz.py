"""`subsum fuzz reconfig` finds planted bugs in the Strawman handlers within
60 s, saves replay files, and `subsum replay` reproduces them exactly."""

import json

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.impl.network.sim import Broker

ORIGINAL_SUB, ORIGINAL_UNSUB = Broker.sub_received, Broker.unsub_received


def no_second_subscriber_rule(self, n, f):
    """Mutant: the second subscriber of a filter is not announced to the first."""
    if n not in self.neighbors:
        return
    subscribers = self.table.get(f)
    if subscribers is None:
        ORIGINAL_SUB(self, n, f)
    else:
        subscribers.add(n)


def unknown_unsub_not_ignored(self, n, f):
    """Mutant: an UNSUB for an unknown (n, p) is acted on."""
    subscribers = self.table.get(f)
    if subscribers is not None:
        subscribers.add(n)
        self.by_node.setdefault(n, set()).add(f)
        self.process_unsub_from(n, f)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("attribute,mutant,claim", [
    ("sub_received", no_second_subscriber_rule, "CLM-NET-6"),
    ("unsub_received", unknown_unsub_not_ignored, "CLM-NET-6"),
], ids=["no-second-subscriber-rule", "unknown-unsub-not-ignored"])
def test_fuzz_catches_a_planted_bug_within_60_s_and_replays_it(tmp_path, monkeypatch, attribute, mutant, claim):
    monkeypatch.setattr(Broker, attribute, mutant)
    summary = tmp_path / "fuzz.json"
    result = run("fuzz", "reconfig", "--budget", 60, "--max-violations", 1, "--replay-dir", tmp_path / "replays", "--json", summary)
    assert result.exit_code == 1, result.output
    found = json.loads(summary.read_text())
    assert found["first_violation_seconds"] < 60, found  # the acceptance point: caught within 60 s
    (violation,) = found["violations"]
    assert violation["claim"] == claim
    replayed = run("replay", violation["replay"])
    assert replayed.exit_code == 1 and replayed.stdout.startswith(f"{claim} violated at step"), replayed.output
    monkeypatch.setattr(Broker, attribute, ORIGINAL_SUB if attribute == "sub_received" else ORIGINAL_UNSUB)
    fixed = run("replay", violation["replay"])
    assert fixed.exit_code == 0 and "no violation now" in fixed.stdout, fixed.output


def test_fuzz_of_the_real_handlers_finds_nothing(tmp_path):
    result = run("fuzz", "reconfig", "--schedules", 40, "--churn", 0.3, "--replay-dir", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert "40 schedules" in result.stdout and "0 violations" in result.stdout
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("text,message", [
    ("{", "malformed JSON"),
    ('{"format": "other"}', "field 'format': expected 'subsum-replay'"),
    ('{"format": "subsum-replay", "protocol": "strawman", "seed": 1, "topology": {}, "schedule": 3}', "field 'schedule': missing or not a list"),
    ('{"format": "subsum-replay", "protocol": "strawman", "seed": 1, "topology": {"brokers": 2, "links": [[0, 1]], "clients": [1, 0]}, '
     '"schedule": [{"op": "teleport"}]}', "field 'schedule': cannot run it"),
])
def test_bad_replay_files_name_the_field(tmp_path, text, message):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = run("replay", bad)
    assert result.exit_code == 2 and message in result.stderr and str(bad) in result.stderr, result.output
