"""The driver JVM's class archive (spec/07 DEF-PIPE-5, impl/spark/class_archive.py):
where it lives, what names it, when it is built, and that nothing half-written
or stale is ever mapped. The full cycle with real JVMs (a command, the
background builder, a later session mapping the archive) is the thorough
test at the end; its speed is benchmarks/spark_session.py's."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.impl.spark import class_archive as ca

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"
JAVA = "/usr/bin/java"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(ca.ENV, str(tmp_path / "jvm"))
    return tmp_path / "jvm"


def test_the_folder_is_the_setting_and_off_turns_archives_off(folder, monkeypatch):
    assert ca.archive_folder() == folder and folder.is_dir()
    monkeypatch.setenv(ca.ENV, "off")
    assert ca.archive_folder() is None
    assert ca.driver_options(JAVA, "17", {}) == (ca.LOGGING_OPTIONS, None)


def test_the_default_folder_is_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(ca.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ca.archive_folder() == tmp_path / "subsum" / "jvm"


def test_the_key_follows_the_runtime_and_the_classpath_only():
    base = ca.archive_key(JAVA, "openjdk 17.0.15", {})
    assert ca.archive_key(JAVA, "openjdk 17.0.16", {}) != base
    assert ca.archive_key("/opt/other/java", "openjdk 17.0.15", {}) != base
    for setting in ca.CLASSPATH_SETTINGS:
        assert ca.archive_key(JAVA, "openjdk 17.0.15", {setting: "x.jar"}) != base, setting
    assert ca.archive_key(JAVA, "openjdk 17.0.15", {"spark.executor.memory": "4g", "spark.ui.enabled": "false"}) == base


def test_a_missing_archive_is_wanted_and_a_whole_one_is_mapped(folder):
    options, missing = ca.driver_options(JAVA, "17", {})
    assert options == ca.LOGGING_OPTIONS and missing is not None and missing.parent == folder
    assert "ArchiveClasses" not in options  # a user's run never writes an archive
    missing.with_name(missing.stem + ".123.part").write_bytes(b"half")  # a builder at work: not mapped
    assert ca.driver_options(JAVA, "17", {}) == (ca.LOGGING_OPTIONS, missing)
    missing.write_bytes(b"whole")
    options, missing_now = ca.driver_options(JAVA, "17", {})
    assert missing_now is None and options.endswith(f"-XX:SharedArchiveFile={missing}")


def test_jvm_warnings_go_to_stderr_not_to_the_results_on_stdout():
    # UseLargePages on a machine without large pages: a JVM warning, printed on stdout by default
    for options, on_stdout in (([], True), (ca.LOGGING_OPTIONS.split(), False)):
        done = subprocess.run(["java", "-XX:+UseLargePages", *options, "-version"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        if "UseLargePages disabled" not in done.stdout + done.stderr:
            pytest.fail("this machine has large pages: the warning this test needs does not happen")
        assert ("UseLargePages disabled" in done.stdout) is on_stdout


def test_one_builder_at_a_time_and_a_stale_lock_is_taken_over(tmp_path):
    lock = tmp_path / "spark-k.lock"
    assert ca.take_lock(lock)
    assert not ca.take_lock(lock)
    old = time.time() - ca.STALE_SECONDS - 5
    os.utime(lock, (old, old))
    assert ca.take_lock(lock)


def test_the_sweep_drops_dead_parts_and_old_archives(tmp_path):
    now = time.time()
    young, dead = tmp_path / "spark-a.1.part", tmp_path / "spark-a.2.part"
    young.write_bytes(b"")
    dead.write_bytes(b"")
    os.utime(dead, (now - ca.STALE_SECONDS - 5,) * 2)
    archives = [tmp_path / f"spark-{k}.jsa" for k in range(ca.KEEP_ARCHIVES + 2)]
    for age, archive in enumerate(archives):
        archive.write_bytes(b"")
        os.utime(archive, (now - age,) * 2)
    ca.sweep(tmp_path)
    assert young.exists() and not dead.exists()
    assert [a.exists() for a in archives] == [True] * ca.KEEP_ARCHIVES + [False, False]


def test_a_builder_starts_once_and_not_after_a_recent_failure(tmp_path, monkeypatch):
    started: list[list[str]] = []
    monkeypatch.setattr(ca.subprocess, "Popen", lambda argv, **kw: started.append(argv))
    archive = tmp_path / "spark-k.jsa"
    ca.start_builder(archive, {"spark.jars": "x.jar"})
    assert len(started) == 1 and started[0][-2:] == [str(archive), json.dumps({"spark.jars": "x.jar"})]
    ca.start_builder(archive, {})  # its lock is held
    assert len(started) == 1
    archive.with_suffix(".lock").unlink()
    archive.with_suffix(".failed").write_text("exit 3\n")
    ca.start_builder(archive, {})
    assert len(started) == 1
    old = time.time() - ca.RETRY_SECONDS - 5
    os.utime(archive.with_suffix(".failed"), (old, old))
    ca.start_builder(archive, {})
    assert len(started) == 2
    archive.with_suffix(".lock").unlink()
    archive.write_bytes(b"whole")
    ca.start_builder(archive, {})
    assert len(started) == 2


@pytest.mark.parametrize(("args", "code", "builds"), [
    (["claims", "--format", "json"], 0, 1),
    (["match", "--subscriptions", str(EX / "subscriptions.jsonl"), "--events", "/nonexistent.jsonl"], 2, 0),
])
def test_only_a_command_that_ended_well_builds_the_archive(args, code, builds, tmp_path, monkeypatch):
    calls: list[tuple] = []
    monkeypatch.setattr(ca, "start_builder", lambda *a: calls.append(a))
    ca.want(tmp_path / "spark-k.jsa", {"spark.jars": "x.jar", "spark.ui.enabled": "false"})
    result = CliRunner().invoke(main, args)
    assert result.exit_code == code, result.output
    assert len(calls) == builds
    assert not calls or calls[0] == (tmp_path / "spark-k.jsa", {"spark.jars": "x.jar"})
    ca._wanted.clear()


@pytest.mark.thorough
def test_a_command_builds_the_archive_in_the_background_and_the_next_session_maps_it(tmp_path):
    folder = tmp_path / "jvm"
    env = {**os.environ, ca.ENV: str(folder)}
    subsum = str(Path(sys.executable).parent / "subsum")
    args = [subsum, "match", "--engine", "spark", "--subscriptions", str(EX / "subscriptions.jsonl"),
            "--events", str(EX / "events.jsonl")]
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + 400
    while not list(folder.glob("spark-*.jsa")) and time.monotonic() < deadline:
        time.sleep(2)
    archives = list(folder.glob("spark-*.jsa"))
    assert len(archives) == 1 and not list(folder.glob("*.part")) and not list(folder.glob("*.failed"))
    probe = ("import sys; from subsum.impl.spark.session import get_session; "
             "from subsum.impl.spark.class_archive import mapped_archive; "
             "print(mapped_archive(get_session('local[1]', dict(a.split('=', 1) for a in sys.argv[1:]))))")
    mapped = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=600)
    assert mapped.stdout.strip().splitlines()[-1] == str(archives[0]), mapped.stderr
    other = subprocess.run([sys.executable, "-c", probe, "spark.driver.extraClassPath=/nonexistent.jar"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert other.stdout.strip().splitlines()[-1] == "None", other.stderr  # another classpath: not this archive
    second = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0 and second.stdout == first.stdout, second.stderr
