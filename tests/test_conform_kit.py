"""Issue 55, `subsum conform matching` against an engine with real semantic
gaps (tests/kit_planted/gaps_engine.py): every distinct difference in one
run (--keep-going), declared gaps (--unsupported) never sent and reported
as not checked, classic bugs found in the pinned workloads, draws that
depend on (seed, i) alone (--only), the engine's standard error kept
(--stderr-log), and shrinking toward small values. Both modes: one-shot
and --persistent."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from subsum.conformance.kit.draws import draw_workload
from subsum.conformance.kit.profile import FEATURES, OPERATORS, Profile, parse_unsupported
from subsum.conformance.kit.shrink import shrink_workload
from subsum.core.types import INT_MIN, Constraint, Subscription
from tests.test_conform import cli
from tests.test_findings_kept import interrupt_when, interruptible

GAPS = Path(__file__).parent / "kit_planted" / "gaps_engine.py"
THREE_GAPS = "wildcard,mixed,last-wins"
DECLARED = "wildcard,mixed-types,repeated-names"


def engine(gaps: str, persistent: bool, *extra: str) -> list[str]:
    """The options naming the gaps engine, in either mode."""
    command = f"{sys.executable} {GAPS} --gaps {gaps}" + (" --serve" if persistent else "") + "".join(f" {e}" for e in extra)
    return ["--engine-cmd", command, *(["--persistent"] if persistent else [])]


def conform(*args) -> tuple[int, dict]:
    done = cli("conform", "matching", *args, "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {})


@pytest.mark.parametrize("persistent", [True, False])
def test_three_gaps_are_three_distinct_differences_in_one_run(persistent, tmp_path):
    code, report = conform(*engine(THREE_GAPS, persistent), "--keep-going", "5", "--workloads", "60" if persistent else "2",
                           *([] if persistent else ["--shrink-budget", "0"]), "--out-dir", tmp_path)
    assert code == 1, report
    assert [(f["kind"], f["direction"], f["declare"]) for f in report["findings"]] == [
        ("difference", "extra", "wildcard"), ("difference", "extra", "mixed-types"), ("difference", "extra", "repeated-names")]
    replays = sorted(tmp_path.iterdir())
    assert len(replays) == 3 and sorted(f["replay"] for f in report["findings"]) == [str(p) for p in replays]
    for finding in report["findings"]:  # each replay fails again on its own
        again = cli("replay", *engine(THREE_GAPS, persistent), finding["replay"])
        assert again.returncode == 1, again.stdout + again.stderr
        assert "found at seed 0, pinned " in again.stderr + again.stdout


@pytest.mark.parametrize("persistent", [True, False])
def test_declared_gaps_pass_and_the_report_says_what_was_not_checked(persistent, tmp_path):
    args = [*engine(THREE_GAPS, persistent), "--unsupported", DECLARED, "--workloads", "300" if persistent else "4", "--out-dir", tmp_path]
    code, report = conform(*args)
    assert code == 0 and report["findings"] == [], report
    assert report["not_checked"] == {"types": [], "operators": ["wildcard"], "features": ["mixed-types", "repeated-names"]}
    assert "wildcard" not in report["checked"]["operators"]
    text = cli("conform", "matching", *args, "--junit", tmp_path / "kit.xml")
    assert text.stdout.splitlines()[0] == report["headline"] and report["headline"].endswith(
        "/ not checked: wildcard; mixed-types, repeated-names"), text.stdout
    suite = ET.parse(tmp_path / "kit.xml").getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "3")
    assert sorted(c.get("name") for c in suite.iter("testcase") if c.find("skipped") is not None) == [
        "feature mixed-types", "feature repeated-names", "operator wildcard"]


def test_unsupported_operators_are_never_sent(tmp_path):
    """An engine that exits 3 on any wildcard passes 400 workloads once wildcard is declared (and fails at once without)."""
    assert conform(*engine("no-wildcard", True), "--unsupported", "wildcard", "--workloads", "400", "--out-dir", tmp_path)[0] == 0
    code, report = conform(*engine("no-wildcard", True), "--workloads", "400", "--out-dir", tmp_path)
    assert code == 1 and report["findings"][0]["kind"] == "crash" and report["findings"][0]["found_at"] == "pinned wildcard-overlap"


@pytest.mark.parametrize("word", [*OPERATORS, "int", "float", "string", "bool", *FEATURES])
def test_every_draw_keeps_out_what_the_profile_leaves_out(word):
    """Each word alone, over 300 draws of 3 seeds, checked directly on the constraints and values (not by `features_of`)."""
    profile = parse_unsupported(word)
    for seed in range(3):
        for i in range(100):
            subscriptions, events, forms = draw_workload(seed, i, profile)
            constraints = [c for _, s in subscriptions for c in s.constraints]
            assert all(c.op != word and c.type != word for c in constraints)
            assert all(a.type != word for e in events for a in e.attributes)
            if word == "filter-text":
                assert all(forms)
            if word == "big-ints":
                assert all(abs(v) <= 2**53 for v in [c.value for c in constraints] + [a.value for e in events for a in e.attributes]
                           if type(v) is int)
            if word == "hostile-strings":
                strings = [c.value.replace("*", "", 1) if c.op == "wildcard" else c.value for c in constraints if c.type == "string"]
                strings += [a.value for e in events for a in e.attributes if a.type == "string"]
                assert all(s.isalnum() and s.isascii() for s in strings if s), strings


def test_the_wildcard_overlap_bug_fails_in_the_pinned_workloads_for_every_seed(tmp_path):
    for seed in range(5):
        code, report = conform(*engine("wildcard", True), "--seed", seed, "--workloads", "1", "--out-dir", tmp_path / str(seed))
        assert code == 1 and report["findings"][0]["found_at"] == "pinned wildcard-overlap", report


@pytest.mark.parametrize("seed", range(5))
def test_a_failure_at_workload_i_is_found_at_i_by_a_shorter_run_and_by_only(seed, tmp_path):
    """`short-prefix` is wrong only on prefixes longer than two characters, which no pinned workload holds."""
    code, report = conform(*engine("short-prefix", True), "--seed", seed, "--workloads", "1000", "--out-dir", tmp_path / "a")
    assert code == 1, report
    (finding,) = report["findings"]
    i = int(finding["found_at"].removeprefix("workload "))
    assert finding["rerun"].endswith(f"--seed {seed} --only {i}")
    for args in (["--workloads", i + 1], ["--only", i]):
        code, again = conform(*engine("short-prefix", True), "--seed", seed, *args, "--out-dir", tmp_path / "b")
        assert code == 1 and again["findings"][0]["found_at"] == f"workload {i}", (args, again)
    if i:
        assert conform(*engine("short-prefix", True), "--seed", seed, "--workloads", i, "--out-dir", tmp_path / "c")[0] == 0


@pytest.mark.parametrize("persistent", [True, False])
def test_the_engines_standard_error_is_kept_when_the_run_passes(persistent, tmp_path):
    log = tmp_path / "engine.log"
    code, report = conform(*engine("none", persistent, "--log"), "--workloads", "3", "--stderr-log", log, "--out-dir", tmp_path / "r")
    assert code == 0 and report["stderr_log"] == str(log)
    text = log.read_text()
    assert text.count("gaps_engine: answered") == report["workloads"], text
    assert "--- subsum conform: pinned wildcard-overlap (seed 0) ---" in text and "--- subsum conform: workload 2 (seed 0) ---" in text


@pytest.mark.parametrize("text, message", [
    ("not toml [", "not a TOML profile"),
    ("[other]\nx = 1\n", "a profile holds one table, [unsupported]"),
    ("[unsupported]\noperators = ['regex']\n", "field 'operators': unknown name 'regex'"),
    ("[unsupported]\ncolours = ['red']\n", "field 'colours': not one of operators, types, features"),
    ("[unsupported]\ntypes = 'bool'\n", "field 'types': a list of names"),
])
def test_a_bad_profile_file_names_the_file_and_field(text, message, tmp_path):
    profile = tmp_path / "engine.toml"
    profile.write_text(text)
    done = cli("conform", "matching", "--engine-cmd", "true", "--unsupported", profile, "--out-dir", tmp_path / "r")
    assert done.returncode == 2 and str(profile) in done.stderr and message in done.stderr, done.stderr


def test_a_profile_file_declares_the_same_as_the_list(tmp_path):
    profile = tmp_path / "engine.toml"
    profile.write_text("[unsupported]\noperators = ['wildcard']\nfeatures = ['mixed-types', 'repeated-names']\n")
    assert parse_unsupported(str(profile)) == parse_unsupported(DECLARED)
    assert parse_unsupported("lt,ge") == Profile(operators=frozenset({"<", ">="}))


def test_shrinking_ends_on_small_values():
    """A failure that any negative int constraint shows shrinks from INT64_MIN to -1, and the workload to one line each."""
    subscriptions = [(f"s{k}", Subscription(frozenset({Constraint("x", "int", "<", INT_MIN + k), Constraint("s", "string", "=", "abc")})))
                     for k in range(3)]
    workload = (subscriptions, draw_workload(0, 0, Profile())[1], [True] * 3)

    def still_fails(w) -> bool:
        return any(c.type == "int" and c.value < 0 for _, s in w[0] for c in s.constraints)

    (sid, sub), *rest = shrink_workload(workload, still_fails, 30.0)[0]
    assert rest == [] and sub.constraints == frozenset({Constraint("x", "int", "<", -1)})


# --- conform broker ---------------------------------------------------------------------------------

PLANTED_BROKER = Path(__file__).parent / "kit_planted" / "broker.py"
STRAWMAN = Path(__file__).resolve().parents[1] / "examples" / "external" / "strawman_broker.py"


def broker(*args) -> tuple[int, dict]:
    done = cli("conform", "broker", *args, "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {})


def test_a_broker_without_bool_passes_once_bool_is_declared(tmp_path):
    command = f"{sys.executable} {PLANTED_BROKER} no-bool"
    code, report = broker("--broker-cmd", command, "--schedules", 20, "--out-dir", tmp_path / "a")
    assert code == 1 and report["violations"][0]["claim"] == "crash", report
    replay = report["violations"][0]["replay"]
    assert json.loads(Path(replay).read_text())["not_checked"]["types"] == ["float"]  # the pool has no float filter
    again = cli("replay", "--broker-cmd", command, replay)
    assert again.returncode == 1 and "not checked in the run that found it: float; !=" in again.stderr + again.stdout, again
    code, report = broker("--broker-cmd", command, "--schedules", 20, "--unsupported", "bool", "--out-dir", tmp_path / "b",
                          "--junit", tmp_path / "kit.xml")
    assert code == 0 and report["schedules"] == 20, report
    skipped = [c.get("name") for c in ET.parse(tmp_path / "kit.xml").getroot().iter("testcase") if c.find("skipped") is not None]
    assert "type bool" in skipped and "operator wildcard" in skipped and "type int" not in skipped
    assert "bool" in report["not_checked"]["types"] and report["checked"]["types"] == ["int", "string"]
    assert report["headline"].startswith("checked: int, string; =, <, >, prefix / not checked: float, bool;")


def test_keep_going_saves_distinct_broker_violations_once_and_counts_the_rest(tmp_path):
    command = f"{sys.executable} {STRAWMAN} --forget-second-subscriber"
    code, report = broker("--broker-cmd", command, "--schedules", 30, "--keep-going", 3, "--out-dir", tmp_path)
    assert code == 1 and report["schedules"] == 30 and report["keep_going"] == 3, report
    kinds = [v["claim"] for v in report["violations"]]
    assert len(report["violations"]) == len(list(tmp_path.iterdir())) >= 1 and report["repeats"] >= 10, report
    assert len(kinds) + report["repeats"] <= 30
    code, first = broker("--broker-cmd", command, "--schedules", 30, "--out-dir", tmp_path / "one")
    assert code == 1 and len(first["violations"]) == 1 and first["schedules"] < 30, first


def test_a_broker_violation_at_schedule_i_is_found_again_by_only(tmp_path):
    command = f"{sys.executable} {STRAWMAN} --forget-second-subscriber"
    for seed in (0, 7):
        code, report = broker("--broker-cmd", command, "--seed", seed, "--schedules", 50, "--shrink-budget", 0, "--out-dir", tmp_path / "a")
        assert code == 1, report
        found_at = report["violations"][0]["found_at"]
        i = int(found_at.split("schedule ")[1])
        code, again = broker("--broker-cmd", command, "--seed", seed, "--only", i, "--shrink-budget", 0, "--out-dir", tmp_path / "b")
        assert code == 1 and again["schedules"] == 1 and again["violations"][0]["found_at"] == found_at, again


def test_a_brokers_standard_error_is_kept_when_the_run_passes(tmp_path):
    log = tmp_path / "broker.log"
    code, report = broker("--broker-cmd", f"{sys.executable} {PLANTED_BROKER} log", "--schedules", 3, "--stderr-log", log,
                          "--out-dir", tmp_path / "r")
    assert code == 0, report
    text = log.read_text()
    assert text.count("--- subsum conform broker: process ") == 3 and "broker.py: request 1\n" in text, text


#: The start of each kit command, its implementation a valid one.
KIT_COMMANDS = {"matching": ("conform", "matching", "--engine-cmd", "true"),
                "broker": ("conform", "broker", "--broker-cmd", f"{sys.executable} {STRAWMAN}")}


@pytest.mark.parametrize("kit, args, message", [
    ("matching", ["--unsupported", "wildcard,regex"], "unknown operator, type or feature 'regex'"),
    ("matching", ["--unsupported", "int,float,string,bool"], "leaves no type with an operator to check"),
    ("matching", ["--unsupported", "wildcard,,bool"], "an empty name in the list"),
    ("matching", ["--keep-going", "0"], "--keep-going"),
    ("matching", ["--only", "pinned-nothing"], "not a workload number or a pinned workload"),
    ("matching", ["--unsupported", "wildcard", "--only", "wildcard-overlap"], "uses what --unsupported leaves out"),
    ("matching", ["--stderr-log", "/nonexistent/folder/engine.log"], "--stderr-log /nonexistent/folder/engine.log"),
    ("matching", ["--shrink-budget", "-1"], "--shrink-budget"),
    ("broker", ["--only", "abc"], "a schedule number"),
    ("broker", ["--unsupported", "int,string,bool"], "leaves no filter of the broker schedules' pool"),
    ("broker", ["--unsupported", "nonsense"], "unknown operator, type or feature 'nonsense'"),
    ("broker", ["--keep-going", "0"], "--keep-going"),
    ("broker", ["--stderr-log", "/nonexistent/folder/broker.log"], "--stderr-log /nonexistent/folder/broker.log"),
])
def test_bad_kit_options_are_one_line_exit_2(kit, args, message, tmp_path):
    done = cli(*KIT_COMMANDS[kit], *args, "--out-dir", tmp_path / "r")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


def test_ctrl_c_ends_a_run_with_130_its_findings_reported_and_saved(tmp_path):
    def past_the_pinned(text: str) -> bool:
        found = re.match(r"conform matching: ([\d,]+) of", text)
        return found is not None and int(found.group(1).replace(",", "")) >= 40

    status, out, err = interrupt_when(["conform", "matching", *engine("wildcard", True), "--workloads", "1000000", "--keep-going", "5",
                                       "--out-dir", tmp_path / "r", "--format", "json"], tmp_path, past_the_pinned)
    assert status == 130, err
    report = json.loads(out)
    assert report["interrupted"] and report["findings"][0]["declare"] == "wildcard" and 40 <= report["workloads"] < 1_000_000
    assert Path(report["findings"][0]["replay"]).is_dir() and "Traceback" not in err


def test_only_runs_one_workload_in_one_shot_mode_too(tmp_path):
    code, report = conform(*engine("short-prefix", True), "--seed", 2, "--out-dir", tmp_path / "a")
    i = int(report["findings"][0]["found_at"].removeprefix("workload "))
    code, again = conform(*engine("short-prefix", False), "--seed", 2, "--only", i, "--out-dir", tmp_path / "b")
    assert code == 1 and (again["workloads"], again["findings"][0]["found_at"]) == (1, f"workload {i}"), again


# --- what a hostile review of the kit found (issue 55) -----------------------------------------------

def test_ctrl_c_while_a_failure_is_shrunk_keeps_it(tmp_path):
    """SIGINT once the log shows the first pinned workload's failure being shrunk (0.3 s an engine run)."""
    log = tmp_path / "engine.log"
    child = subprocess.Popen([sys.executable, "-m", "subsum", "conform", "matching", *engine("wildcard", True, "--sleep", "0.3"),
                              "--stderr-log", str(log), "--out-dir", str(tmp_path / "r"), "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, preexec_fn=interruptible)
    try:
        deadline = time.monotonic() + 60
        while "wildcard-overlap, shrinking" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    report = json.loads(out)
    (finding,) = report["findings"]
    assert finding["found_at"] == "pinned wildcard-overlap" and "Ctrl-C while it was being shrunk" in finding["message"], finding
    assert Path(finding["replay"]).is_dir() and report["interrupted"] and "Traceback" not in err


def test_the_rerun_command_carries_the_profile_and_reproduces_the_workload(tmp_path):
    code, report = conform(*engine("short-prefix", True), "--unsupported", "bool,wildcard", "--timeout", "20", "--out-dir", tmp_path / "a")
    (finding,) = report["findings"]
    assert " --unsupported bool,wildcard --timeout 20 --seed 0 --only " in finding["rerun"], finding["rerun"]
    args = shlex.split(finding["rerun"])[3:]  # after `subsum conform matching`
    code, again = conform(*args, "--out-dir", tmp_path / "b")
    assert code == 1 and again["findings"][0]["found_at"] == finding["found_at"]


def test_the_stderr_log_does_not_change_which_failures_are_alike(tmp_path):
    """A crash quotes the engine's standard error; subsum's own header lines in the log must not be quoted."""
    args = [*engine("no-wildcard", True), "--keep-going", "10", "--shrink-budget", "0", "--workloads", "10"]
    plain = conform(*args, "--out-dir", tmp_path / "a")[1]
    logged = conform(*args, "--stderr-log", tmp_path / "log", "--out-dir", tmp_path / "b")[1]
    assert len(plain["findings"]) == len(logged["findings"]) == 1, (plain["findings"], logged["findings"])
    assert "--- subsum" not in logged["findings"][0]["message"]


def test_an_extra_and_a_missed_match_are_two_failures_not_three(tmp_path):
    """Shrinking splits a failure with both an extra and a missed match into one of them; each is then a row of its
    own (the missed `any` once per type, as operator and type tell failures apart), never one row of both."""
    code, report = conform(*engine("wildcard,no-any", True), "--keep-going", "10", "--workloads", "300", "--out-dir", tmp_path)
    assert code == 1 and {f["direction"] for f in report["findings"]} == {"extra", "missed"}, report["findings"]
    assert all(f["traits"] == ["wildcard string"] if f["direction"] == "extra" else f["traits"][0].startswith("any ")
               for f in report["findings"]), report["findings"]


@pytest.mark.parametrize("declared, not_checked", [
    ("string,bool", "string, bool; prefix, suffix, contains, wildcard; hostile-strings"),
    ("int,float", "int, float; <, <=, >, >=; big-ints"),
    ("=,!=,any", "bool; =, !=, any"),
])
def test_checked_never_lists_what_no_workload_can_hold(declared, not_checked):
    assert parse_unsupported(declared).headline().split(" / not checked: ")[1] == not_checked


def test_only_one_workload_checks_only_what_it_holds(tmp_path):
    code, report = conform(*engine("none", True), "--only", "bool", "--out-dir", tmp_path)
    assert code == 0 and report["checked"] == {"types": ["bool"], "operators": ["=", "!="], "features": []}, report["checked"]


@pytest.mark.parametrize("args, message", [
    (["--only", "²"], "not a workload number or a pinned workload"),
    (["--junit", "{x}", "--stderr-log", "{x}"], "is the same file as"),
    (["--unsupported", "{p}", "--junit", "{p}"], "is the same file as"),
    (["--engine-cmd", "/no/such/engine", "--stderr-log", "{x}"], "cannot run '/no/such/engine'"),
])
def test_more_bad_kit_options_write_nothing(args, message, tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text("[unsupported]\noperators = ['wildcard']\n")
    args = [a.format(x=tmp_path / "out.txt", p=profile) for a in args]
    command = [] if "--engine-cmd" in args else ["--engine-cmd", "true"]
    done = cli("conform", "matching", *command, *args, "--out-dir", tmp_path / "r")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out.txt").exists() and profile.read_text().startswith("[unsupported]")


def test_a_broker_schedule_number_past_the_seeds_is_refused(tmp_path):
    done = cli("conform", "broker", "--broker-cmd", f"{sys.executable} {STRAWMAN}", "--only", str(2**63), "--out-dir", tmp_path / "r")
    assert done.returncode == 2 and "below 2^63" in done.stderr, done.stderr


def test_a_persistent_engines_replay_keeps_what_it_wrote_to_standard_error_for_that_workload(tmp_path):
    code, report = conform(*engine("wildcard", True, "--log"), "--out-dir", tmp_path)
    assert code == 1, report
    stderr = (Path(report["findings"][0]["replay"]) / "stderr.txt").read_text()
    assert stderr.count("gaps_engine: answered") == 1, stderr
