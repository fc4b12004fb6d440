"""The kit's own comparison, tested both ways (issue 34): one planted engine
per way an engine's answer can be wrong, each of which `subsum conform
matching` must fail (exit 1, the failure's kind named, a replay saved), and
the same engine without the plant, which must pass. The same for `subsum
conform broker`, where a broker's answer can be wrong the same way: a
message dropped, repeated or added, a line that is no message, a crash
midway.

The engines are one small persistent process (tests/kit_planted/engine.py)
that answers with subsum's own `vectorized` engine and then applies the
plant named on its command line; the brokers wrap examples/external's
Strawman broker the same way (tests/kit_planted/broker.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLANTED = Path(__file__).parent / "kit_planted"

#: plant -> the failure kind `conform matching` must name
ENGINE_PLANTS = {
    "dropped-match": "difference",
    "extra-match": "difference",
    "repeated-id": "malformed",
    "unsorted-ids": "malformed",
    "missing-line": "malformed",
    "extra-line": "malformed",
    "other-event": "malformed",
    "crash-midway": "crash",
}

#: plant -> (the claim `conform broker` files the violation under, words of its message)
BROKER_PLANTS = {
    "dropped-message": ("CLM-NET-6", "the model sends"),
    "repeated-message": ("CLM-NET-6", "the model sends"),
    "extra-message": ("CLM-NET-6", "the model sends"),
    "not-a-message": ("malformed", "an answer line is not a message"),
    "crash-midway": ("crash", "exited with status 1 before ending its answer"),
}


def subsum(*args, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "subsum", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})


def conform_matching(plant: str, out: Path, workloads: int = 60) -> subprocess.CompletedProcess:
    return subsum("conform", "matching", "--engine-cmd", f"{sys.executable} {PLANTED / 'engine.py'} {plant}", "--persistent",
                  "--workloads", workloads, "--timeout", "20", "--out-dir", out)


def test_the_engine_without_a_plant_passes(tmp_path):
    done = conform_matching("none", tmp_path, workloads=200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not tmp_path.exists() or not list(tmp_path.iterdir())


@pytest.mark.parametrize("plant", ENGINE_PLANTS)
def test_each_planted_engine_fails_conform_matching(plant, tmp_path):
    done = conform_matching(plant, tmp_path)
    assert done.returncode == 1, f"the plant {plant} passed:\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    (replay,) = tmp_path.iterdir()
    case = json.loads((replay / "case.json").read_text())
    assert case["failure"]["kind"] == ENGINE_PLANTS[plant], (plant, case["failure"])
    assert f": {ENGINE_PLANTS[plant]}: " in done.stdout, done.stdout


def conform_broker(plant: str, out: Path, schedules: int = 30) -> subprocess.CompletedProcess:
    return subsum("conform", "broker", "--broker-cmd", f"{sys.executable} {PLANTED / 'broker.py'} {plant}", "--schedules", schedules,
                  "--timeout", "20", "--shrink-budget", "20", "--out-dir", out)


def test_the_broker_without_a_plant_passes(tmp_path):
    done = conform_broker("none", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "30 schedules" in done.stdout and "0 violations" in done.stdout, done.stdout


@pytest.mark.parametrize("plant", BROKER_PLANTS)
def test_each_planted_broker_fails_conform_broker(plant, tmp_path):
    done = conform_broker(plant, tmp_path)
    assert done.returncode == 1, f"the plant {plant} passed:\n{done.stdout}{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    (replay,) = tmp_path.glob("replay-external-seed*.json")
    violation = json.loads(replay.read_text())["violation"]
    claim, words = BROKER_PLANTS[plant]
    assert violation["claim"] == claim and words in violation["message"], (plant, violation)
