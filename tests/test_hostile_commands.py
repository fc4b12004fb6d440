"""Issue 51's acceptance: every case of the hostile corpus of the newer
commands (tests/hostile/commands.py: explore, fuzz reconfig, conform, fidelity,
replay, trace-check, simulate, bench) passes. The cases run in-process
(click's runner), in two worker processes that each have a memory limit; each
case has a time limit of its own (bad input is refused before any work). A
worker that dies fails the case it was running."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_hostile import cases_of, load_script, run_script

COMMANDS = Path(__file__).parent / "hostile" / "commands.py"
#: Worker processes (pytest-xdist runs them side by side): about 15 s each when every case passes.
SHARDS = 2


def load_commands():
    return load_script(COMMANDS, "hostile_commands")


def shard_ids(shard: int) -> list[str]:
    return [case.id for case in load_commands().chosen_cases(list(cases_of(COMMANDS, "hostile_commands")), ["--shard", f"{shard}/{SHARDS}"])]


def run_shard(shard: int) -> tuple[list[dict], list[str]]:
    """(the verdict of every case of the shard, the case whose worker died running it)."""
    return run_script(COMMANDS, ("--shard", f"{shard}/{SHARDS}"), limit_memory=True, timeout=600)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_hostile_command_case_is_refused_clearly_and_at_once(shard):
    verdicts, died = run_shard(shard)
    failed = [f"{v['id']}: {'; '.join(v['problems'])}" for v in verdicts if not v["ok"]]
    assert not died, died
    assert not failed, f"{len(failed)} of {len(verdicts)} cases failed:\n" + "\n".join(failed[:60])
    assert sorted(v["id"] for v in verdicts) == sorted(shard_ids(shard))  # every case of the shard ran, once


def test_the_corpus_is_large_and_attacks_every_command_family():
    commands = load_commands()
    cases = cases_of(COMMANDS, "hostile_commands")
    assert len(cases) >= 150
    bad = collections.Counter(case.family for case in cases if case.exit == 2)
    assert {family: bad[family] for family in commands.FAMILIES if bad[family] < 5} == {}
    assert {case.family for case in cases} == set(commands.FAMILIES)
    for bench in commands.BENCHES:  # every benchmark's options, never a run
        assert sum(case.argv[:2] == ("bench", bench) for case in cases) >= 3, bench
        assert all("--out-dir" in case.argv for case in cases if case.argv[:2] == ("bench", bench))
    shards = [shard_ids(shard) for shard in range(SHARDS)]
    assert sorted(i for ids in shards for i in ids) == sorted(case.id for case in cases)


def test_the_script_lists_every_case():
    printed = subprocess.run([sys.executable, str(COMMANDS), "list"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert printed == [case.id for case in cases_of(COMMANDS, "hostile_commands")]
