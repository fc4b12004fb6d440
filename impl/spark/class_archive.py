"""The driver JVM's class archive (spec/07 DEF-PIPE-5): Spark's classes,
parsed and verified once, mapped into every later JVM.

Most of a Spark session's start is the JVM loading and verifying some
15,000 classes from 250 jars. Java's class-data sharing (AppCDS, JDK 13+)
keeps them in an archive file that every later JVM maps
(`-XX:SharedArchiveFile`). On this project's 2-core machine that takes the
session's start from about 8.7 s to 5 s, and the first job's from 4.3 s to
2.3 s (benchmarks/README.md).

- The archive lives in `$SUBSUM_JVM_ARCHIVE` (a folder), else
  `$XDG_CACHE_HOME/subsum/jvm`, else `~/.cache/subsum/jvm`;
  `SUBSUM_JVM_ARCHIVE=off` turns it off. It takes about 180 MB.
- It is named by a hash of what the JVM checks it against (`archive_key`):
  the Java runtime, PySpark's jars and the classpath settings. A new Java or
  PySpark names a new file; the newest three are kept.
- A command that ended well (exit 0 or 1) and found no archive starts a
  builder in the background (`start_builder`) and returns at once. The
  builder is its own process and session: a small job of each kind, then
  its JVM writes the archive as it exits (`-XX:ArchiveClassesAtExit`, 15-20
  s), under a private name, renamed when whole. A user's run never writes
  one: a JVM stopped by Ctrl-C while writing can hang.
- One builder at a time (a lock file; one older than an hour is taken over).
- JVM warnings go to stderr (by default they go to stdout, which holds
  `subsum match`'s results), and the archive's own log is off.

Example: `driver_options("/usr/bin/java", "openjdk 17.0.15", {})` is
("-Xlog:... -XX:SharedArchiveFile=~/.cache/subsum/jvm/spark-1f0c....jsa", None)
once the archive exists, ("-Xlog:...", Path(".../spark-1f0c....jsa")) before.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Mapping

ENV = "SUBSUM_JVM_ARCHIVE"
#: The JVM's warnings on stderr, and the archive's own messages (a class it skips) off.
LOGGING_OPTIONS = "-Xlog:disable -Xlog:all=warning,cds*=off:stderr"
#: Settings that change the driver's classpath, hence the archive's validity.
CLASSPATH_SETTINGS = ("spark.jars", "spark.jars.packages", "spark.jars.repositories", "spark.jars.excludes",
                      "spark.driver.extraClassPath", "spark.driver.userClassPathFirst")
#: A part or lock older than this was left by a builder that died: removed.
STALE_SECONDS = 3600
#: Archives kept per folder (other versions of Java or PySpark), newest first.
KEEP_ARCHIVES = 3
BUILD_TIMEOUT_SECONDS = 600
#: After a failed build (`.failed` beside the archive), the next try waits this long.
RETRY_SECONDS = 86400

#: The builder's process (`archive_builder.py`): ARCHIVE SETTINGS_JSON follow.
BUILDER = ("-m", "subsum.impl.spark.archive_builder")

_wanted: list[tuple[Path, dict[str, str]]] = []  # the archive this process's session lacked (one JVM per process)


def archive_folder() -> Path | None:
    """Where archives live, or None when they are off or the folder cannot be made."""
    chosen = os.environ.get(ENV, "")
    if chosen.strip().lower() == "off":
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(chosen) if chosen else Path(cache) / "subsum" / "jvm"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def archive_key(java: str, java_version: str, settings: Mapping[str, str]) -> str:
    """A hash of what decides whether the JVM can use an archive: the runtime
    (its path and `-version` text), PySpark's jars (names, sizes, times) and
    the settings that add to the classpath."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted((e.name, e.stat().st_size, int(e.stat().st_mtime)) for e in os.scandir(jars)) if jars.is_dir() else []
    text = repr((os.path.realpath(java), java_version, pyspark.__version__, str(jars), listing, classpath_settings(settings)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def classpath_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """The settings among `settings` that change the driver's classpath (CLASSPATH_SETTINGS)."""
    return {k: settings[k] for k in sorted(CLASSPATH_SETTINGS) if k in settings}


def archive_path(java: str, java_version: str, settings: Mapping[str, str]) -> Path | None:
    """The archive for this runtime and these settings (there or not); None when archives are off."""
    folder = archive_folder()
    return None if folder is None else folder / f"spark-{archive_key(java, java_version, settings)}.jsa"


def driver_options(java: str, java_version: str, settings: Mapping[str, str]) -> tuple[str, Path | None]:
    """The driver JVM's options (map the archive when there is one) and the
    archive wanted but missing (None when it exists or archives are off)."""
    archive = archive_path(java, java_version, settings)
    if archive is None:
        return LOGGING_OPTIONS, None
    if archive.is_file():
        return f"{LOGGING_OPTIONS} -XX:SharedArchiveFile={archive}", None
    return LOGGING_OPTIONS, archive


def want(archive: Path, settings: Mapping[str, str]) -> None:
    """This process's session started without `archive` (see `finish`)."""
    _wanted[:] = [(archive, classpath_settings(settings))]


def finish() -> None:
    """The command ended well: build the archive its session lacked, in the background."""
    for archive, settings in _wanted:
        start_builder(archive, settings)
    _wanted.clear()


def start_builder(archive: Path, settings: Mapping[str, str]) -> None:
    """Start `build` in a detached process (its own session: a Ctrl-C at the
    terminal does not reach it), unless another builder holds the lock."""
    failed = archive.with_suffix(".failed")
    if archive.exists() or (failed.exists() and time.time() - failed.stat().st_mtime < RETRY_SECONDS):
        return
    if not take_lock(archive.with_suffix(".lock")):
        return
    subprocess.Popen([sys.executable, *BUILDER, str(archive), json.dumps(dict(settings))], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)


def take_lock(lock: Path) -> bool:
    """Create `lock` (the builder's); False when a live builder holds it. A
    lock older than STALE_SECONDS is taken over."""
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime < STALE_SECONDS:
                    return False
                lock.unlink()
            except OSError:
                return False
            continue
        except OSError:
            return False
        os.close(fd)
        return True
    return False


def sweep(folder: Path) -> None:
    """Drop parts left by builders that died, and all but the newest archives."""
    now = time.time()
    for part in folder.glob("spark-*.part"):
        try:
            if now - part.stat().st_mtime > STALE_SECONDS:
                part.unlink()
        except OSError:
            pass
    archives = sorted(folder.glob("spark-*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[KEEP_ARCHIVES:]:
        old.unlink(missing_ok=True)


def mapped_archive(spark) -> str | None:
    """The archive the session's JVM was started with, when class sharing is
    on in it (the JVM turns sharing off when it cannot map an archive)."""
    jvm = spark.sparkContext._jvm
    management = jvm.java.lang.management.ManagementFactory
    args = list(management.getRuntimeMXBean().getInputArguments())
    named = [a.split("=", 1)[1] for a in args if a.startswith("-XX:SharedArchiveFile=")]
    bean_class = jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    sharing = management.getPlatformMXBean(bean_class).getVMOption("UseSharedSpaces").getValue() == "true"
    return named[-1] if named and sharing else None
