"""Issue 51: long runs say they are alive. In a log (standard error not a
terminal) a run prints a plain progress line every LOG_EVERY seconds; with
--quiet nothing; a JSON report on standard output stays clean."""

import io
import json
import time

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.cli.common import console
from subsum.cli.common import progress as prog


@pytest.fixture
def log(monkeypatch):
    """Standard error as a log file, with a quick pulse."""
    from rich.console import Console

    screen = io.StringIO()
    monkeypatch.setattr(prog, "err", Console(file=screen, force_terminal=False, width=200))
    monkeypatch.setattr(console, "err", prog.err)
    monkeypatch.setattr(prog, "LOG_EVERY", 0.05)
    prog._quiet.set(False)
    return screen


def test_a_ticker_prints_a_line_per_pulse_in_a_log(log):
    with prog.progress("exploring", 10.0) as ticker:
        for i in range(6):
            ticker.update(i, f"{i} states")
            time.sleep(0.03)
    lines = log.getvalue().splitlines()
    assert 1 <= len(lines) <= 6 and all(line.startswith("exploring: ") and " states (" in line for line in lines), lines


def test_a_heartbeat_says_what_a_long_step_is_doing(log):
    with prog.heartbeat("compiling the kernels", after=0.05):
        time.sleep(0.4)
    lines = log.getvalue().splitlines()
    assert lines[0] == "compiling the kernels ..." and len(lines) >= 2, lines
    assert all(line.startswith("compiling the kernels: still at it (") for line in lines[1:]), lines


def test_a_short_step_says_nothing_and_quiet_says_nothing(log):
    with prog.heartbeat("compiling the kernels", after=5.0):
        pass
    prog._quiet.set(True)
    with prog.heartbeat("compiling the kernels", after=0.0):
        time.sleep(0.2)
    with prog.progress("exploring", 1.0) as ticker:
        ticker.update(1, "x")
    prog._quiet.set(False)
    assert log.getvalue() == ""


def test_explore_in_a_log_prints_progress_on_stderr_and_clean_json_on_stdout(monkeypatch):
    monkeypatch.setattr(prog, "LOG_EVERY", 0.0001)
    result = CliRunner().invoke(main, ["explore", "--subscriptions", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["complete"]
    assert any(line.startswith("exploring: depth ") and "to visit" in line for line in result.stderr.splitlines()), result.stderr
    quiet = CliRunner().invoke(main, ["explore", "--subscriptions", "1", "--format", "json", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
