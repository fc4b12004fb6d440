"""`subsum fuzz reconfig` finds planted bugs in the Strawman handlers within
60 s, saves replay files, and `subsum replay` reproduces them exactly."""

import json

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.impl.network import StrawmanBroker

ORIGINAL_SUB, ORIGINAL_UNSUB = StrawmanBroker.sub_received, StrawmanBroker.unsub_received


def no_second_subscriber_rule(self, n, f, out):
    """Mutant: the second subscriber of a filter is not announced to the first."""
    if n not in self.neighbors:
        return
    subscribers = self.table.get(f)
    if subscribers is None:
        ORIGINAL_SUB(self, n, f, out)
    else:
        subscribers.add(n)


def unknown_unsub_not_ignored(self, n, f, out):
    """Mutant: an UNSUB for an unknown (n, p) is acted on."""
    subscribers = self.table.get(f)
    if subscribers is not None:
        subscribers.add(n)
        self.by_node.setdefault(n, set()).add(f)
        self.process_unsub_from(n, f, out)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("attribute,mutant,claim", [
    ("sub_received", no_second_subscriber_rule, "CLM-NET-6"),
    ("unsub_received", unknown_unsub_not_ignored, "CLM-NET-6"),
], ids=["no-second-subscriber-rule", "unknown-unsub-not-ignored"])
def test_fuzz_catches_a_planted_bug_within_60_s_and_replays_it(tmp_path, monkeypatch, attribute, mutant, claim):
    monkeypatch.setattr(StrawmanBroker, attribute, mutant)
    result = run("fuzz", "reconfig", "--budget", 60, "--max-violations", 1, "--out-dir", tmp_path / "replays", "--format", "json")
    assert result.exit_code == 1, result.output
    found = json.loads(result.stdout)
    assert found["first_violation_seconds"] < 60, found  # the acceptance point: caught within 60 s
    (violation,) = found["violations"]
    assert violation["claim"] == claim
    replayed = run("replay", violation["replay"])
    assert replayed.exit_code == 1 and replayed.stdout.startswith(f"{claim} violated at "), replayed.output
    monkeypatch.setattr(StrawmanBroker, attribute, ORIGINAL_SUB if attribute == "sub_received" else ORIGINAL_UNSUB)
    fixed = run("replay", violation["replay"])
    assert fixed.exit_code == 0 and "no violation now" in fixed.stdout, fixed.output


def test_fuzz_of_the_real_handlers_finds_nothing(tmp_path):
    result = run("fuzz", "reconfig", "--schedules", 40, "--churn", 0.3, "--out-dir", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert "40 schedules" in result.stdout and "0 violations" in result.stdout
    assert not (tmp_path / "r").exists()


REPLAY_HEAD = ('{"format": "subsum-replay", "version": 1, "protocol": "strawman", "seed": 1, '
               '"topology": {"kind": "path", "brokers": 2, "links": [[0, 1]], "clients": [1, 0]}, '
               '"violation": {"claim": "CLM-NET-1", "message": "", "step": 0}, ')


@pytest.mark.parametrize("text,message", [
    ("{", "malformed JSON"),
    ('{"format": "subsum-replay", "seed": 1' + "0" * 5000 + '}', "malformed JSON"),
    ('{"format": "other"}', "field 'format': unknown replay format 'other'"),
    ('{"format": "subsum-replay", "version": 1, "protocol": "strawman", "seed": 1, "topology": {}, "schedule": [], '
     '"violation": {"claim": "CLM-NET-1", "message": "", "step": 0}}', "'kind' is a required property"),
    (REPLAY_HEAD + '"schedule": 3}', "field 'schedule': 3 is not of type 'array'"),
    (REPLAY_HEAD + '"schedule": [{"op": "teleport"}]}', "field 'schedule[0].op': 'teleport' is not one of"),
    (REPLAY_HEAD + '"schedule": [{"op": "subscribe", "filter": "x > 1"}]}', "field 'schedule[0]': 'client' is a required property"),
    (REPLAY_HEAD + '"schedule": [{"op": "subscribe", "client": 1000001, "filter": "x > 1"}]}', "field 'schedule[0].client': client 1000001 does not exist"),
    (REPLAY_HEAD.replace('"seed": 1', '"seed": true') + '"schedule": []}', "field 'seed': True is not of type 'integer'"),
    (REPLAY_HEAD.replace('"links": [[0, 1]]', '"links": [[0, 0]]') + '"schedule": []}', "field 'topology.links[0]'"),
])
def test_bad_replay_files_name_the_field(tmp_path, text, message):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    result = run("replay", bad)
    assert result.exit_code == 2 and message in result.stderr and str(bad) in result.stderr, result.output


# --- the optimized protocols (spec/06-reconfiguration.md): one planted bug each -------------------

from subsum.impl.network.protocols.deferred import NotifiedBroker, TimedBroker  # noqa: E402
from subsum.impl.network.protocols.informed import InformedBroker  # noqa: E402


def timed_forgets_the_resubscribe_rule(self, rid, out):
    """Mutant: a waiting (n', p) is unsubscribed even if n' re-subscribed meanwhile."""
    if rid in self.unsub_timers:
        self.unsub_timers.discard(rid)
        out.cancel("unsub_timer_expired", rid)
    for n, f in self.waiting.pop(rid, []):
        self.insert_entry(n, f, out)
        self.process_unsub_from(n, f, out)


def notified_flush_drops_the_waiting_unsubs(self, m, rid, out):
    """Mutant: FLUSH cancels the timer but never runs the waiting UNSUBs."""
    if rid in self.unsub_timers:
        self.unsub_timers.discard(rid)
        out.cancel("unsub_timer_expired", rid)
        self.waiting.pop(rid, None)
    else:
        for k in self.neighbors:
            if k != m and k < 1_000_000:
                out.send(k, "FLUSH", rid)


def informed_releases_everything(self, rid, out):
    """Mutant: when subTimer fires, every held-back filter is sent, wanted or not."""
    n, tagged = self.tagged.pop(rid)
    if n in self.neighbors:
        for f in tagged:
            out.send(n, "SUB", f)


@pytest.mark.parametrize("protocol,cls,attribute,mutant", [
    ("timed", TimedBroker, "unsub_timer_expired", timed_forgets_the_resubscribe_rule),
    ("notified", NotifiedBroker, "flush_received", notified_flush_drops_the_waiting_unsubs),
    ("informed", InformedBroker, "sub_timer_expired", informed_releases_everything),
], ids=["timed-resubscribe-rule", "notified-flush-without-unsubs", "informed-release-unwanted"])
def test_fuzz_finds_a_planted_protocol_bug(tmp_path, monkeypatch, protocol, cls, attribute, mutant):
    original = cls.__dict__[attribute]
    monkeypatch.setattr(cls, attribute, mutant)
    result = run("fuzz", "reconfig", "--protocol", protocol, "--budget", 60, "--churn", 0.3, "--max-violations", 1,
                 "--out-dir", tmp_path / "replays", "--format", "json")
    assert result.exit_code == 1, result.output
    found = json.loads(result.stdout)
    assert found["first_violation_seconds"] < 60, found
    (violation,) = found["violations"]
    assert violation["claim"].startswith("CLM-RCF-"), violation
    replayed = run("replay", violation["replay"])
    assert replayed.exit_code == 1 and replayed.stdout.startswith(f"{violation['claim']} violated at "), replayed.output
    monkeypatch.setattr(cls, attribute, original)
    fixed = run("replay", violation["replay"])
    assert fixed.exit_code == 0 and "no violation now" in fixed.stdout, fixed.output


@pytest.mark.parametrize("protocol", ["timed", "notified", "informed"])
def test_fuzz_of_the_real_protocols_finds_nothing(tmp_path, protocol):
    result = run("fuzz", "reconfig", "--protocol", protocol, "--schedules", 40, "--churn", 0.3, "--out-dir", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert "40 schedules" in result.stdout and "0 violations" in result.stdout
