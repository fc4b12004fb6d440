"""One table of exit codes, enforced by the CLI's one handler (subsum/cli/__init__.py):
0 success, 1 a check found a violation, 2 bad input or usage, 3 an internal or
engine failure. An expected failure prints one `error:` line and no traceback;
an unexpected one prints one line and a hint, and `--debug` shows the traceback."""

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import subsum.cli.match as match_cli
from subsum.cli import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATION, engine_failure, main
from subsum.core.errors import CheckFailed, EngineError, InputError

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"
MATCH = ["match", "--subscriptions", str(EX / "subscriptions.jsonl"), "--events", str(EX / "events.jsonl")]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def planted(monkeypatch, exc: BaseException) -> None:
    def fail(*_args, **_kwargs):
        raise exc

    monkeypatch.setattr(match_cli, "match_files", fail)


def test_the_table():
    assert (EXIT_OK, EXIT_VIOLATION, EXIT_INPUT, EXIT_INTERNAL) == (0, 1, 2, 3)
    assert (CheckFailed.exit_code, InputError.exit_code, EngineError.exit_code) == (1, 2, 3)


def test_0_success():
    result = run(*MATCH)
    assert result.exit_code == 0 and result.stderr == ""


def test_1_a_check_found_a_violation(monkeypatch):
    planted(monkeypatch, CheckFailed("2 violations"))
    result = run(*MATCH)
    assert result.exit_code == 1 and result.stderr == "2 violations\n"


@pytest.mark.parametrize("argv, message", [
    (["match", "--subscriptions", "nowhere.jsonl", "--events", str(EX / "events.jsonl")],
     "error: nowhere.jsonl: cannot read: No such file or directory"),
    (["simulate", "forwarding", "--topology", "nowhere"],
     "error: --topology 'nowhere' is neither random-tree, path, star, balanced nor an existing file"),
    (["replay", str(EX / "events.jsonl")], "error: "),
    (["match", "--engine", "nope"], "error: Invalid value for '--engine'"),  # click's usage error, on one line
    ([*MATCH, "--output", "/nonexistent/out.jsonl"], "error: --output /nonexistent/out.jsonl: cannot write: the folder /nonexistent does not exist"),
    ([*MATCH, "--json", "/nonexistent/stats.json"], "error: --json /nonexistent/stats.json: cannot write"),
    (["fuzz", "reconfig", "--schedules", "1", "--out-dir", str(EX / "events.jsonl" / "replays")], "is not a folder"),
    (["simulate", "flooding", "--topology", str(ROOT / "README.md")], "README.md:"),  # file:line: of the first line that is not an edge
    (["fuzz", "reconfig", "--budget", "nan"], "'nan' is not a finite number"),  # click's FloatRange lets nan through
    (["simulate", "siena", "--gap", "inf"], "'inf' is not a finite number"),
    ([*MATCH, "--output", str(EX / "events.jsonl")], "is the same file as --events"),  # an input is never overwritten
    (["summary", "build", "--subscriptions", str(EX / "subscriptions.jsonl"), "--brokers", str(2**32)], "4294967295"),
])
def test_2_bad_input_or_usage(argv, message):
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_outputs_are_checked_before_the_work_starts(monkeypatch):
    planted(monkeypatch, AssertionError("the work ran"))
    result = run(*MATCH, "--output", "/nonexistent/out.jsonl")
    assert result.exit_code == 2 and "the work ran" not in result.output


def test_emoji_codes_in_a_message_stay_as_written(tmp_path):
    topology = tmp_path / "a:x:b.edgelist"
    topology.write_text("root:x:0\n")
    result = run("simulate", "caching", "--topology", topology)
    assert result.exit_code == 2 and "got 'root:x:0'" in result.stderr


def test_3_an_internal_failure_is_one_line_and_a_hint(monkeypatch):
    planted(monkeypatch, RuntimeError("boom\nsecond line"))
    result = run(*MATCH)
    assert result.exit_code == 3
    assert result.stderr.splitlines() == ["error: internal error: RuntimeError: boom",
                                          "rerun with `subsum --debug ...` to see the traceback"]


def test_3_debug_shows_the_traceback(monkeypatch):
    planted(monkeypatch, RuntimeError("boom"))
    result = CliRunner().invoke(main, ["--debug", *MATCH])
    assert isinstance(result.exception, RuntimeError)  # not caught: the traceback goes to the terminal


def test_3_an_engine_failure(monkeypatch):
    planted(monkeypatch, EngineError("the Spark job died"))
    result = run(*MATCH)
    assert result.exit_code == 3 and result.stderr == "error: the Spark job died\n"

    class Py4JJavaError(Exception):  # what a failed Spark job raises, from py4j
        __module__ = "py4j.protocol"

    assert engine_failure(Py4JJavaError()) and not engine_failure(RuntimeError())
    planted(monkeypatch, Py4JJavaError("An error occurred while calling o42.collect"))
    result = run(*MATCH)
    assert result.exit_code == 3
    assert result.stderr.startswith("error: the Spark engine failed: Py4JJavaError: An error occurred")


def test_a_real_process_prints_no_traceback(tmp_path):
    """Outside CliRunner: the installed entry point's real stderr and status."""
    done = subprocess.run([sys.executable, "-m", "subsum", "match", "--subscriptions", str(tmp_path / "no.jsonl"),
                           "--events", str(EX / "events.jsonl")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {tmp_path / 'no.jsonl'}: cannot read: No such file or directory"]
