"""`subsum conform` and `subsum replay` in this process (spec/11-plugins.md
DEF-PLUG-3, 4, 6): the engines under test (a command, a persistent command,
a plug-in), the conformance run and its replay directory, an external
broker, and replays run again. tests/test_conform.py runs the same through
the command line, which a mutation run cannot see; these call the functions."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from subsum.conformance.kit.broker import EXTERNAL, close_processes, proxy_class
from subsum.conformance.kit.engines import CommandEngine, Failure, PersistentEngine, PluginEngine, Received, engine_for
from subsum.conformance.kit.matching import conform
from subsum.conformance.kit.processes import ConformError, describe_exit
from subsum.conformance.kit.profile import Profile
from subsum.conformance.kit.pinned import hostile_workloads, pinned_workloads
from subsum.conformance.kit.workloads import model_results, write_workload
from subsum.conformance.replays.documents import MATCHING, SCHEDULE, ReplayError
from subsum.conformance.replays.formats import load_schedule
from subsum.conformance.replays.running import Outcome, RunOptions, run
from subsum.conformance.replays.writing import ScheduleReplay, save_cache, save_schedule
from subsum.conformance.schedules.runs import execute
from subsum.model import semantics

ROOT = Path(__file__).resolve().parents[1]
BROKER = ROOT / "examples" / "external" / "strawman_broker.py"


def python(code: str) -> str:
    """A command running `code` in a fresh interpreter."""
    return shlex.join([sys.executable, "-c", code])


def small_workload(folder: Path) -> None:
    """The first hostile workload cut to four subscriptions (two characters, both forms) and three events."""
    subscriptions, events, forms = hostile_workloads()[0][1]
    write_workload(folder, subscriptions[:4], events[:3], forms[:4])


# --- processes and engines ---------------------------------------------------------------------

def test_describe_exit_of_status_zero_and_of_signals():
    assert [describe_exit(c) for c in (0, 1, -9, -1000)] == [
        "exited with status 0", "exited with status 1", "was killed by SIGKILL", "was killed by signal 1000"]


def test_engine_for_picks_the_engine_the_options_name():
    assert type(engine_for("cat", None, False, 1.0)) is CommandEngine
    persistent = engine_for("cat", None, True, 1.0)
    assert type(persistent) is PersistentEngine and persistent.describe() == {"command": "cat", "persistent": True, "timeout": 1.0}
    persistent.close()
    assert type(engine_for(None, "brute", False, 1.0)) is PluginEngine
    for command, plugin in ((None, None), ("cat", "brute")):
        with pytest.raises(ConformError) as caught:
            engine_for(command, plugin, False, 1.0)
        assert str(caught.value) == "name the engine under test with --engine-cmd CMD or --engine NAME (one of them)"


def test_a_command_that_crashes_is_a_crash_quoting_its_standard_error(tmp_path):
    received = CommandEngine("sh -c 'echo oops >&2; exit 3' x", 5.0).run(tmp_path)
    assert received == Received(b"", b"oops\n", Failure("crash", "exited with status 3; its standard error ends: oops"))


def test_a_child_left_holding_the_pipes_is_not_waited_for(tmp_path):
    """The engine answers and exits; a child it started keeps its standard
    output open for 30 s. The answer is taken when the engine exits, not
    when the child ends or the 5 s time-out passes (which would be a
    timeout failure, not this answer)."""
    received = CommandEngine("sh -c 'sleep 30 & echo hi' x", 5.0).run(tmp_path)
    assert received == Received(b"hi\n", b"")


@pytest.mark.parametrize("script, timeout, expected", [
    ("import os, sys, time\nsys.stdin.readline()\nsys.stdout.write('abc'); sys.stdout.flush()\n"
     "sys.stderr.write('bye\\n'); sys.stderr.flush()\nos.close(1)\ntime.sleep(30)", 0.5,
     Received(b"abc", b"bye\n", Failure("crash", "closed its standard output before ending its answer; its standard error ends: bye"))),
    ("import sys, time\nsys.stdin.readline()\nsys.stdout.write('x' * (17 * 2**20)); sys.stdout.flush()\ntime.sleep(30)", 5.0,
     Received(b"", b"", Failure("malformed", "wrote more than 16777216 bytes"))),
], ids=["closes its output: keeps what it wrote", "writes past the cap: malformed"])
def test_a_persistent_engine_that_misbehaves_fails_with_what_it_wrote(script, timeout, expected):
    engine = PersistentEngine(python(script), timeout)
    try:
        received = engine.exchange("{}")
    finally:
        engine.close()
    assert received == expected
    assert engine.stderr.closed and engine.process is None


def test_a_plugin_engine_answers_for_the_workload_in_its_folder(tmp_path):
    small_workload(tmp_path)
    received = PluginEngine("brute", 5.0).run(tmp_path)
    assert received == Received(b'{"event": "e0", "subscriptions": []}\n{"event": "e1", "subscriptions": ["s0c", "s0f"]}\n'
                                b'{"event": "e2", "subscriptions": ["s1c", "s1f"]}\n')


def test_the_pinned_workloads_hold_an_event_for_each_character():
    """Each hostile workload's event for a character is matched by that character's two subscriptions."""
    for _, (subscriptions, events, forms) in hostile_workloads():
        assert len(events) == len(subscriptions) // 2 + 1 and len(forms) == len(subscriptions)
        matched = semantics.match_batch(subscriptions, events)
        for k, ids in enumerate(matched[1:]):
            assert {f"s{k}c", f"s{k}f"} <= ids, (subscriptions[0], k, ids)


# --- a conformance run ---------------------------------------------------------------------

class Answers:
    """An engine in this process: the plug-in engine "brute", except that its
    answers are replaced by nothing on the calls named in `wrong` (all of them: None)."""

    def __init__(self, wrong: set[int] | None) -> None:
        self.inner, self.wrong, self.calls = PluginEngine("brute", 5.0), wrong, 0

    def describe(self) -> dict:
        return {"engine": "answers", "timeout": 5.0}

    def run(self, folder: Path) -> Received:
        self.calls += 1
        got = self.inner.run(folder)
        return Received(b"", b"err\n") if self.wrong is None or self.calls in self.wrong else got

    def close(self) -> None:
        pass


def test_a_conformance_run_saves_the_shrunk_failure_as_a_replay(tmp_path):
    result = conform(Answers(None), workloads=2, out_dir=tmp_path)
    assert (result.workloads, result.pinned) == (1, 1)
    assert result.failure == Failure("malformed", "0 output lines for 1 events")
    assert result.replay is not None and result.replay.parent == tmp_path
    files = {p.name: p.read_bytes() for p in result.replay.iterdir()}
    case = json.loads(files.pop("case.json"))
    assert case == {"format": MATCHING, "version": 1, "engine": {"engine": "answers", "timeout": 5.0},
                    "seed": 0, "failure": {"kind": "malformed", "message": "0 output lines for 1 events"},
                    "found_at": "seed 0, pinned wildcard-overlap", "workload": "wildcard-overlap", **Profile().to_json()}
    (line,) = files["subscriptions.jsonl"].decode().splitlines()  # shrunk to nothing: one empty subscription, one empty event
    sid = json.loads(line)["id"]
    assert json.loads(line) == {"id": sid, "constraints": []} and files["events.jsonl"] == b'{"id": "e0", "attributes": {}}\n'
    assert files["expected.jsonl"] == b'{"event": "e0", "subscriptions": ["' + sid.encode() + b'"]}\n'
    assert (files["received.jsonl"], files["stderr.txt"]) == (b"", b"err\n")
    assert model_results(result.replay) == [("e0", {sid})]


def test_a_failure_that_does_not_repeat_is_reported_as_such(tmp_path):
    result = conform(Answers({2}), workloads=2, out_dir=tmp_path)
    assert (result.workloads, result.pinned) == (2, 2)
    assert result.failure == Failure("malformed", "0 output lines for 5 events (it did not happen again on the same workload: "
                                                  "the engine is not deterministic, or keeps state between workloads)")
    assert result.replay is not None and result.replay.is_dir()


def test_a_conformance_run_of_a_correct_engine_finds_nothing(tmp_path):
    result = conform(PluginEngine("brute", 5.0), workloads=2, out_dir=tmp_path / "none")
    assert (result.pinned, result.failure, result.replay) == (len(pinned_workloads()), None, None)
    assert not (tmp_path / "none").exists()


# --- replays -----------------------------------------------------------------------------------

def test_a_matching_replay_names_the_engine_it_needs_and_runs_with_one(tmp_path):
    result = conform(Answers(None), workloads=1, out_dir=tmp_path)
    path = str(result.replay)
    with pytest.raises(ReplayError) as caught:
        run(path)
    assert str(caught.value) == f"{path}: name the engine to run; the recorded one is: subsum replay --engine answers {path}"
    note = ("found at seed 0, pinned wildcard-overlap; not checked in that run: nothing",)
    assert run(path, RunOptions(engine_cmd="true")) == Outcome(
        path, MATCHING, True, "malformed", f"{path}: malformed: 0 output lines for 1 events", "malformed", note)
    assert run(path, RunOptions(engine="brute")) == Outcome(
        path, MATCHING, False, None, f"{path}: the engine agrees with the model now (recorded: malformed)", "malformed", note)


def test_replays_are_written_into_folders_that_do_not_exist_yet(tmp_path):
    folder = tmp_path / "a" / "b"
    path = save_cache("lru", 1, [{"op": "advance", "time": 1.0}], folder)
    assert path.parent == folder and json.loads(path.read_text())["operations"] == [{"op": "advance", "time": 1.0}]


TWO_BROKERS = {"kind": "line", "brokers": 2, "links": [[0, 1]], "clients": [1, 1]}
#: broker 0's first subscriber of the filter is broker 1, its second its own client: it must send SUB to 1
SECOND_SUBSCRIBER = [{"op": "subscribe", "client": 1_000_001, "filter": "x > 1"}, {"op": "quiesce"},
                     {"op": "subscribe", "client": 1_000_000, "filter": "x > 1"}]


def test_an_external_broker_runs_in_the_simulator():
    broker = proxy_class(f"{sys.executable} {BROKER}")
    try:
        assert execute(TWO_BROKERS, 0, SECOND_SUBSCRIBER, EXTERNAL, broker_class=broker) is None
    finally:
        close_processes(broker)


def test_a_schedule_replay_of_an_external_broker_runs_again(tmp_path):
    buggy = f"{sys.executable} {BROKER} --forget-second-subscriber"
    message = "broker 0 SUB from 1000000: sent [], the model sends [(1, 'SUB', [x > 1])]"
    path = save_schedule(tmp_path, ScheduleReplay(EXTERNAL, TWO_BROKERS, 0, SECOND_SUBSCRIBER,
                                                  {"claim": "CLM-NET-6", "step": 2, "message": message}, 1.0, 1.0, command=buggy))
    assert run(path, RunOptions(broker_cmd=buggy)) == Outcome(
        str(path), SCHEDULE, True, "CLM-NET-6", f"CLM-NET-6 violated at operation 3 of 3: {message}", "CLM-NET-6 at operation 3 of 3", ())


def test_a_schedule_replay_needs_a_client_count_per_broker(tmp_path):
    path = tmp_path / "r.json"
    doc = {"format": SCHEDULE, "version": 1, "protocol": "strawman", "seed": 0, "topology": {**TWO_BROKERS, "clients": [1]},
           "schedule": [], "violation": {"claim": "CLM-NET-2", "step": 0, "message": "m"}}
    path.write_text(json.dumps(doc))
    with pytest.raises(ReplayError) as caught:
        load_schedule(path)
    assert str(caught.value) == f"{path}: field 'topology.clients': expected one client count per broker (2), got 1"


def test_a_schedule_replay_that_no_longer_fails_under_another_protocol_keeps_its_note(tmp_path):
    topology = {"kind": "path", "brokers": 2, "links": [[0, 1]], "clients": [1, 1]}
    path = save_schedule(tmp_path, ScheduleReplay("timed", topology, 0, [{"op": "subscribe", "client": 1_000_000, "filter": "x > 0"}],
                                                  {"claim": "CLM-RCF-1", "message": "planted", "step": 0}, 3000.0, 5000.0))
    outcome = run(path, RunOptions(protocol="strawman"))
    assert not outcome.fails and outcome.violated is None
    assert outcome.message == f"{path}: no violation now (recorded: CLM-RCF-1 at operation 1 of 1)"
    assert outcome.notes == ("running strawman on a schedule recorded with timed",)
