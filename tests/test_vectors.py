"""Portable test vectors (spec/11-plugins.md DEF-PLUG-5): written
deterministically from the model, and subsum's own implementation passes
them; planted bugs in an engine, a broker and a cache each fail some."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.kit import vector_cases, vectors
from subsum.impl.caching import policies
from subsum.impl.network import StrawmanBroker

ROOT = Path(__file__).resolve().parents[1]


def cli(*args) -> subprocess.CompletedProcess:
    """`subsum ARGS` in this process (click's runner), as a CompletedProcess: the commands below read and write files,
    which a process of their own would not change (issue 51: its start-up cost a second a test). An exception
    that escapes is shown as its traceback on standard error, as a process would print it."""
    result = CliRunner().invoke(main, [str(a) for a in args], prog_name="subsum")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, stderr)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("vectors")
    vector_cases.write_vectors(path)
    return path


def test_every_kind_has_cases_of_every_outcome(folder):
    counts = vectors.count_cases(folder)
    assert set(counts) == set(vector_cases.KINDS) and min(counts.values()) >= 80, counts
    cases = {kind: vectors.load_vectors(folder, kind) for kind in vector_cases.KINDS}
    assert any(c["expected"].get("error") for c in cases["filters"]) and any("normal_form" in c["expected"] for c in cases["filters"])
    assert {c["expected"]["covers"] for c in cases["covering"]} == {True, False}
    assert any(set(c["expected"]["candidates"]) > set(c["expected"]["exact"]) for c in cases["summaries"])  # false positives
    assert {c["input"]["message"]["kind"] for c in cases["strawman"]} == {"SUB", "UNSUB", "REMOVE-LINK", "ADD-LINK", "EVENT"}
    assert {c["input"]["policy"] for c in cases["caches"]} == {"fifo", "regdeg", "lfu", "lru"}
    for kind, listed in cases.items():
        assert all(re.fullmatch(r"CLM-[A-Z]+-\d+", c["claim"]) and c["id"].startswith(kind) for c in listed)


def test_vectors_are_the_same_bytes_in_another_process(folder, tmp_path):
    """Another process, another string-hash seed: the same files."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run([sys.executable, "-m", "subsum", "conform", "vectors", "write", "--out-dir", tmp_path], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    for kind in vector_cases.KINDS:
        assert (tmp_path / f"{kind}.json").read_bytes() == (folder / f"{kind}.json").read_bytes(), kind


def test_our_implementation_passes_the_vectors(folder):
    assert list(vectors.check_vectors(folder)) == []
    result = cli("conform", "vectors", "check", folder)
    assert result.returncode == 0 and "subsum passes all" in result.stdout, result.stdout + result.stderr


def test_the_old_spelling_still_works_for_one_release(folder):
    result = cli("vectors", "--check", folder)
    assert result.returncode == 0 and "subsum passes all" in result.stdout, result.stdout + result.stderr
    assert "`subsum vectors --check DIR` is deprecated" in result.stderr and "subsum conform vectors check DIR" in result.stderr


def test_the_spec_states_the_vectors_version():
    assert f"Spec version: {vector_cases.SPEC_VERSION}." in (ROOT / "spec" / "README.md").read_text()


def test_a_planted_engine_bug_fails_the_vectors(folder):
    sys.path.insert(0, str(ROOT / "examples" / "plugins"))
    try:
        wrong = list(vectors.check_vectors(folder, engines=("myplugins.engines:SloppyWildcardEngine",)))
    finally:
        sys.path.remove(str(ROOT / "examples" / "plugins"))
    assert wrong and all("sloppy" in line.lower() or "Sloppy" in line for line in wrong), wrong[:3]


def test_a_planted_broker_bug_fails_the_vectors(folder, monkeypatch):
    original = StrawmanBroker.sub_received

    def no_second_subscriber_rule(self, n, f, out):
        if f in self.table and len(self.table[f]) == 1 and n not in self.table[f] and n in self.neighbors:
            self.insert_entry(n, f, out)  # the SUB to the first subscriber is forgotten
            return
        original(self, n, f, out)

    monkeypatch.setattr(StrawmanBroker, "sub_received", no_second_subscriber_rule)
    wrong = list(vectors.check_vectors(folder, engines=("brute",)))
    assert wrong and all(line.startswith("strawman-") for line in wrong), wrong[:3]


def test_a_planted_cache_bug_fails_the_vectors(folder, monkeypatch):
    monkeypatch.setattr(policies.LRU, "hit", lambda self, messages, now: setattr(self, "now", now))  # hits forgotten
    wrong = list(vectors.check_vectors(folder, engines=("brute",)))
    assert wrong and all(line.startswith("caches-") for line in wrong), wrong[:3]


def test_a_wrong_expected_value_is_reported_and_exits_1(folder, tmp_path):
    for kind in vector_cases.KINDS:
        (tmp_path / f"{kind}.json").write_bytes((folder / f"{kind}.json").read_bytes())
    doc = json.loads((tmp_path / "caches.json").read_text())
    doc["cases"][0]["expected"]["order"].reverse()
    doc["cases"][0]["expected"]["order"].append("m99")
    (tmp_path / "caches.json").write_text(json.dumps(doc))
    result = cli("conform", "vectors", "check", tmp_path)
    assert result.returncode == 1 and "caches-0000" in result.stdout, result.stdout + result.stderr
    doc["spec_version"] = 99
    (tmp_path / "caches.json").write_text(json.dumps(doc))
    result = cli("conform", "vectors", "check", tmp_path)
    assert result.returncode == 2 and "spec version 99" in result.stderr


def test_one_wrong_matching_case_is_one_case_with_its_difference(folder, tmp_path):
    """Issue 51: a wrong expected matching line was counted once per engine ("6 of 929") and shown without a diff."""
    for kind in vector_cases.KINDS:
        (tmp_path / f"{kind}.json").write_bytes((folder / f"{kind}.json").read_bytes())
    doc = json.loads((tmp_path / "matching.json").read_text())
    case = next(c for c in doc["cases"] if any(r["subscriptions"] for r in c["expected"]["results"]))
    result = next(r for r in case["expected"]["results"] if r["subscriptions"])
    dropped = result["subscriptions"].pop(0)
    (tmp_path / "matching.json").write_text(json.dumps(doc))
    done = CliRunner().invoke(main, ["conform", "vectors", "check", str(tmp_path), "--format", "json"])
    assert done.exit_code == 1, done.output
    report = json.loads(done.stdout)
    assert report["wrong_cases"] == 1 and len(report["wrong"]) == 1, report["wrong"]
    (line,) = report["wrong"]
    assert line.startswith(f"{case['id']}: engines ") and f"event {result['event']}: extra {dropped}" in line
    assert f"subsum gets 1 of {report['cases']} cases wrong" in done.stderr


@pytest.mark.parametrize("kind, damage, message", [
    ("filters", lambda d: d.pop("cases"), "field 'cases': expected a list of cases"),
    ("filters", lambda d: d["cases"].__setitem__(0, "x"), "cases[0]: expected"),
    ("matching", lambda d: d["cases"][0]["input"].__setitem__("subscriptions", "abc"), "case matching-0000: cannot be run"),
    ("covering", lambda d: d["cases"][0]["input"].__setitem__("general", 5), "case covering-0000: cannot be run"),
    ("strawman", lambda d: d["cases"][0]["input"]["message"].__setitem__("kind", "BOGUS"), "case strawman-0000: cannot be run"),
    ("caches", lambda d: d["cases"][0]["input"].__setitem__("capacity", -5), "case caches-0000: cannot be run"),
])
def test_malformed_vectors_are_bad_input(folder, tmp_path, kind, damage, message):
    for name in vector_cases.KINDS:
        (tmp_path / f"{name}.json").write_bytes((folder / f"{name}.json").read_bytes())
    doc = json.loads((tmp_path / f"{kind}.json").read_text())
    damage(doc)
    (tmp_path / f"{kind}.json").write_text(json.dumps(doc))
    result = cli("conform", "vectors", "check", tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_vectors_are_written_whole_or_not_at_all(tmp_path):
    (tmp_path / "caches.json").mkdir()
    result = cli("conform", "vectors", "write", "--out-dir", tmp_path)
    assert result.returncode == 2 and "caches.json: is a directory" in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["caches.json"]  # no partial output
