"""Issue 51: a finding is never lost. Ctrl-C ends `subsum explore` and
`subsum fuzz` with exit 130, a partial report and every violation found so
far saved; an output folder is checked before the work; a replay that
cannot be written after a finding is printed in full, with exit 1."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.replays import writing
from subsum.core.errors import InputError

SUBSUM = str(Path(sys.executable).parent / "subsum")
PLANTED = "subsum.bench.planted:ForgetfulStrawman"


def interruptible() -> None:
    """A child's Ctrl-C at its default, whatever this process has: under `make` started in the background
    (CI, nohup) SIGINT is ignored, children inherit that, and a SIGINT sent to them would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(args: list[str], folder: Path, ready) -> tuple[int, str, str]:
    """Run `subsum ARGS` in `folder`, send it SIGINT once a progress line satisfies `ready`, and return
    (exit status, stdout, stderr). Progress lines come every 0.2 s ($SUBSUM_PROGRESS_SECONDS)."""
    env = {**os.environ, "SUBSUM_PROGRESS_SECONDS": "0.2", "COLUMNS": "200", "NO_COLOR": "1"}
    child = subprocess.Popen([SUBSUM, *args], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             preexec_fn=interruptible)
    seen = []
    try:
        for text in child.stderr:
            seen.append(text)
            if ready(text):
                break
        child.send_signal(signal.SIGINT)
        out, rest = child.communicate(timeout=120)
    finally:
        child.kill()
    return child.returncode, out, "".join(seen) + rest


def at_depth_3_or_more(text: str) -> bool:
    """A progress line of a search at depth 3 or deeper (the first line, 0.2 s in, may be past depth 3 already)."""
    found = re.match(r"exploring: depth (\d+):", text)
    return found is not None and int(found.group(1)) >= 3


def test_ctrl_c_ends_explore_with_130_and_says_how_much_was_left(tmp_path):
    status, out, err = interrupt_when(["explore", "--brokers", "4", "--subscriptions", "3", "--events", "1", "--swaps", "1",
                                       "--budget", "300", "--format", "json"], tmp_path, at_depth_3_or_more)
    assert status == 130, err
    report = json.loads(out)  # the partial report, whole, on standard output
    assert report["cut_by"] == "interrupt" and not report["complete"]
    assert report["states"] > 1 and report["queue"] > 0 and report["depth"] >= 3
    assert "interrupted (Ctrl-C) at depth" in err and "Traceback" not in err


def test_ctrl_c_ends_fuzz_with_130_and_saves_what_it_found(tmp_path):
    def found_one(text: str) -> bool:
        return text.startswith("fuzzing:") and not text.rstrip().endswith(" 0 violations") and "violations (" in text

    status, out, err = interrupt_when(["fuzz", "reconfig", "--protocol", PLANTED, "--budget", "300", "--max-violations", "100000",
                                       "--shrink-budget", "5", "--out-dir", "found", "--format", "json"], tmp_path, found_one)
    assert status == 130, err
    report = json.loads(out)
    assert report["interrupted"] and report["schedules"] >= 1 and report["violations"], report
    for violation in report["violations"]:  # each saved, whole (as found: Ctrl-C skips shrinking)
        assert violation["saved"]
        replay = json.loads((tmp_path / violation["replay"]).read_text())
        assert replay["violation"]["claim"] == violation["claim"] and "shrunk_from" not in replay
    assert sorted(p.name for p in (tmp_path / "found").iterdir()) == sorted(Path(v["replay"]).name for v in report["violations"])
    assert "interrupted (Ctrl-C) after" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["fuzz", "reconfig", "--protocol", PLANTED, "--schedules", "3"],
                                     ["explore", "--protocol", PLANTED],
                                     ["conform", "broker", "--broker-cmd", "true", "--schedules", "1"]])
@pytest.mark.parametrize("folder", ["/proc/nope", "{file}/under-a-file", "/proc/self/fdinfo/x"])
def test_an_output_folder_that_cannot_be_made_is_refused_before_any_work(tmp_path, command, folder):
    (tmp_path / "file").write_text("a file, not a folder\n")
    result = CliRunner().invoke(main, [*command, "--out-dir", folder.format(file=tmp_path / "file")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --out-dir ") and "cannot" in result.output
    assert "schedules" not in result.output and "states" not in result.output  # nothing ran


def cannot_write(path, lines):
    raise InputError(str(path), None, None, "cannot write: no space left on device")


def test_a_fuzz_finding_whose_replay_cannot_be_written_is_printed_in_full(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(writing, "write_lines_atomically", cannot_write)  # the folder fails after the check, mid-run
    result = CliRunner().invoke(main, ["fuzz", "reconfig", "--protocol", PLANTED, "--schedules", "2", "--shrink-budget", "0",
                                       "--out-dir", "r", "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert [v["saved"] for v in report["violations"]] == [False, False]
    printed = result.stderr
    for violation in report["violations"]:
        assert f"cannot write its replay {violation['replay']}: cannot write: no space left on device" in printed
    documents = printed.split("\nerror: ")
    replay = json.loads(documents[0].split("\n", 1)[1])  # the first replay, whole, under its error line
    assert replay["format"] == "subsum-replay" and replay["violation"]["claim"] == report["violations"][0]["claim"]
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_an_explore_finding_whose_replay_cannot_be_written_is_printed_in_full(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(writing, "write_lines_atomically", cannot_write)
    result = CliRunner().invoke(main, ["explore", "--protocol", PLANTED, "--out-dir", "r"])
    assert result.exit_code == 1, result.output
    assert "replay: NOT SAVED to r/explore-" in result.stdout
    head, _, document = result.stderr.partition("\n")
    assert head.startswith("error: found a violation but cannot write its replay r/explore-")
    replay = json.loads(document[:document.rindex("}") + 1])
    assert replay["format"] == "subsum-replay" and replay["schedule"]


def test_a_conform_matching_failure_whose_replay_cannot_be_written_is_printed_in_full(tmp_path, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(writing, "_umask", disk_full)  # fails inside the write, after the scratch folder was made
    result = CliRunner().invoke(main, ["conform", "matching", "--engine-cmd", "echo hello", "--workloads", "1", "--out-dir", "r"])
    assert result.exit_code == 1, result.output
    head, _, document = result.stderr.partition("\n")
    assert head.startswith("error: found a failure (malformed: ") and "cannot write its replay r/matching-" in head
    replay = json.loads(document)
    assert replay["case"]["failure"]["kind"] == "malformed" and set(replay["files"]) >= {"subscriptions.jsonl", "events.jsonl"}
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
