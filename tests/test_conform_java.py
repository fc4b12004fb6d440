"""The worked example of the README's "Your own engine" (issue 55):
examples/java/SubsumMatcher.java, a small matching engine in Java, built
here with javac (present wherever subsum's Spark runs: Java 17+), checked
by `subsum conform matching` in both modes with its two gaps declared, and
caught on both when they are not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_conform import cli

JAVA = Path(__file__).resolve().parents[1] / "examples" / "java"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    javac = shutil.which("javac")
    assert javac is not None, "javac is needed for the Java example (a JDK 17+, as subsum's Spark needs)"
    out = tmp_path_factory.mktemp("java-classes")
    done = subprocess.run([javac, "-d", str(out), *map(str, sorted(JAVA.glob("*.java")))], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def matcher(classes: Path, persistent: bool) -> list[str]:
    return ["--engine-cmd", f"java -cp {classes} SubsumMatcher" + (" --serve" if persistent else ""), *(["--persistent"] if persistent else [])]


@pytest.mark.parametrize("persistent, workloads", [(True, 500), (False, 3)])
def test_the_java_engine_agrees_with_its_gaps_declared(classes, persistent, workloads, tmp_path):
    done = cli("conform", "matching", *matcher(classes, persistent), "--unsupported", "wildcard,filter-text",
               "--workloads", workloads, "--out-dir", tmp_path, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["generated"] == workloads and report["not_checked"]["operators"] == ["wildcard"]
    assert report["not_checked"]["features"] == ["filter-text"]


def test_the_java_engines_gaps_are_two_distinct_failures_when_not_declared(classes, tmp_path):
    done = cli("conform", "matching", *matcher(classes, True), "--workloads", 5, "--keep-going", 5, "--shrink-budget", 20,
               "--out-dir", tmp_path, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [f["kind"] for f in findings] == ["crash", "crash"], findings
    assert "declare --unsupported wildcard" in findings[0]["message"] and "declare --unsupported filter-text" in findings[1]["message"]
    assert "filter-text" in findings[1]["traits"]
