"""The builder of the driver JVM's class archive (spec/07 DEF-PIPE-5;
`class_archive.py` names archives and decides when to build one).

    python -m subsum.impl.spark.archive_builder ARCHIVE SETTINGS_JSON

runs a session on local[2] whose JVM writes ARCHIVE as it exits, after a job
of each kind subsum runs (SQL with a shuffle, JSON and Parquet read and
written, an Arrow batch through a Python worker). The JVM writes a private
part; it is renamed to ARCHIVE when the JVM has exited with status 0, and a
failure leaves `ARCHIVE.failed` (with the reason) instead, which holds off
the next try for a day. `build_now` runs the builder and waits for it (the
benchmarks); a command that ended well starts it in the background
(`class_archive.start_builder`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping

from subsum.impl.spark import class_archive
from subsum.impl.spark.session import default_conf, get_session, java_executable, java_version_text


def main(archive_path: str, settings: Mapping[str, str]) -> int:
    """The builder: a session whose JVM writes `archive_path` at exit, after
    jobs of the kinds subsum runs (SQL with a shuffle, JSON and Parquet, an
    Arrow batch through Python); then the JVM's exit, and the rename."""
    archive = Path(archive_path)
    part = archive.with_name(f"{archive.stem}.{os.getpid()}.part")
    os.nice(10)  # in the background of the user's next commands
    try:
        class_archive.sweep(archive.parent)
        status = run_builder_session(part, settings)
        if status == 0 and part.is_file() and part.stat().st_size > 0:
            os.replace(part, archive)
            archive.with_suffix(".failed").unlink(missing_ok=True)
            return 0
        archive.with_suffix(".failed").write_text(f"the builder's JVM exited with status {status}\n")
        return 3
    except Exception as exc:
        archive.with_suffix(".failed").write_text(f"{type(exc).__name__}: {exc}\n")
        raise
    finally:
        part.unlink(missing_ok=True)
        archive.with_suffix(".lock").unlink(missing_ok=True)


def run_builder_session(part: Path, settings: Mapping[str, str]) -> int:
    from pyspark import SparkContext

    master = "local[2]"
    options = default_conf(master)["spark.driver.extraJavaOptions"]
    conf = {**settings, "spark.driver.extraJavaOptions": f"{options} {class_archive.LOGGING_OPTIONS} -XX:ArchiveClassesAtExit={part}"}
    spark = get_session(master, conf, app_name="subsum-class-archive")
    with tempfile.TemporaryDirectory(prefix="subsum-jvm-") as scratch:
        frame = spark.range(1000).selectExpr("id % 7 AS k", "CAST(id AS STRING) AS s")
        frame.groupBy("k").count().collect()
        frame.write.parquet(f"{scratch}/p")
        frame.write.json(f"{scratch}/j")
        spark.read.json(f"{scratch}/j").join(spark.read.parquet(f"{scratch}/p"), "k").count()
        frame.mapInArrow(lambda batches: batches, frame.schema).count()
    jvm = getattr(SparkContext._gateway, "proc", None)
    spark.sparkContext.stop()
    if jvm is None or jvm.stdin is None:  # not a JVM this process started
        return -1
    jvm.stdin.close()  # PySpark's gateway exits when its stdin closes, and writes the archive
    try:
        return jvm.wait(timeout=class_archive.BUILD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        jvm.kill()
        return -1


def build_now(settings: Mapping[str, str] | None = None) -> Path | None:
    """The archive for `settings` (classpath settings), built now in a child
    process when missing (or waited for, when a builder is at work); None
    when archives are off or the build failed."""
    java = java_executable() or "java"
    archive = class_archive.archive_path(java, java_version_text(java), settings or {})
    if archive is None or archive.is_file():
        return archive
    deadline = time.monotonic() + class_archive.BUILD_TIMEOUT_SECONDS
    while not class_archive.take_lock(archive.with_suffix(".lock")):
        if archive.is_file() or time.monotonic() > deadline:
            return archive if archive.is_file() else None
        time.sleep(1)
    subprocess.run([sys.executable, *class_archive.BUILDER, str(archive), json.dumps(class_archive.classpath_settings(settings or {}))],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=class_archive.BUILD_TIMEOUT_SECONDS + 60)
    return archive if archive.is_file() else None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], json.loads(sys.argv[2])))
