"""The Spark session factory.

`local[*]` by default, with the UI off, errors-only logging, and few shuffle
partitions (a laptop has a handful of cores, not 200 reducers). A cluster is
named by `master` or the `SPARK_MASTER` environment variable; every
`--conf key=value` is passed through unchanged, and wins over the defaults.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from subsum.core.errors import EngineError, SubsumError
from subsum.impl.spark import class_archive

DEFAULT_MASTER = "local[*]"
MIN_JAVA = 17


class SparkUnavailable(SubsumError, RuntimeError):
    """Spark cannot start here: no Java 17+, no pyspark, or a bad setting.
    The message says what is missing and how to get it."""


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


@functools.cache
def java_version_text(java: str) -> str:
    """What `java -version` prints ("" when it cannot run)."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stderr + done.stdout


def java_version(java: str) -> int | None:
    """The major version `java -version` reports (8 for "1.8.0_x"), or None."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', java_version_text(java))
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def check_java() -> None:
    """Raise SparkUnavailable unless a Java 17+ runtime is on JAVA_HOME or PATH."""
    java = java_executable()
    if java is None:
        raise SparkUnavailable(
            "no Java runtime found; subsum's Spark pipeline (PySpark) needs Java 17 or newer. "
            "Install one (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set JAVA_HOME.")
    version = java_version(java)
    if version is None:
        raise SparkUnavailable(f"could not read the Java version from '{java} -version'; PySpark needs Java 17 or newer")
    if version < MIN_JAVA:
        raise SparkUnavailable(f"Java {version} found at {java}, but PySpark needs Java {MIN_JAVA} or newer; "
                               "install a newer JDK/JRE or point JAVA_HOME at one")


def parse_conf(items: Iterable[str]) -> dict[str, str]:
    """`--conf key=value` strings as a dict; raise SubsumError (a usage error) naming a bad one."""
    conf: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SubsumError(f"--conf {item!r}: expected key=value, e.g. spark.executor.memory=4g")
        conf[key.strip()] = value
    return conf


#: The master URLs Spark accepts (SparkContext's rule: yarn, or spark://, k8s://, local...).
MASTER_URL = re.compile(r"yarn|local|local\[(\d+|\*)(,\s*\d+)?\]|local-cluster\[\d+,\s*\d+,\s*\d+\]"
                        r"|spark://[^\s/]+(,[^\s/]+)*|k8s://\S+")


def resolve_master(master: str | None) -> str:
    """The master to use, checked here: a bad URL would make the JVM print a
    stack trace on its way out, before any error of ours."""
    chosen = master if master is not None else os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
    if not MASTER_URL.fullmatch(chosen):
        where = "--master" if master is not None else "$SPARK_MASTER"
        raise SparkUnavailable(f"{where} {chosen!r} is not a Spark master URL; expected local, local[N], local[*], "
                               "spark://HOST:PORT, yarn or k8s://URL")
    return chosen


def local_cores(master: str) -> int | None:
    """The cores a local master uses (local, local[4], local[*]), or None for a cluster."""
    if master == "local":
        return 1
    found = re.fullmatch(r"local\[(\d+|\*)(?:,\s*\d+)?\]", master)
    if not found:
        return None
    return os.cpu_count() or 1 if found.group(1) == "*" else int(found.group(1))


#: JVM options for a short run on a local master: the C1 compiler only (C2's warm-up
#: costs seconds on two cores and pays back only on long runs) and the serial collector.
QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def default_conf(master: str, progress: bool = False, quick_start: bool = False) -> dict[str, str]:
    """subsum's defaults; a user's --conf overrides any of them. `quick_start`
    (small inputs on a local master): JVM options that cut the start-up cost."""
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        "spark.sql.session.timeZone": "UTC",
    }
    cores = local_cores(master)
    if cores is not None:
        # Two shuffle partitions per core; adaptive execution coalesces further.
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * cores))
        conf["spark.default.parallelism"] = str(max(2, 2 * cores))
    # The driver (this process's JVM, whatever the master) logs errors only.
    log4j = resources.files("subsum.impl.spark").joinpath("log4j2.properties")
    conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log4j}"
    if quick_start and cores is not None:
        conf["spark.driver.extraJavaOptions"] += " " + QUICK_START_JAVA_OPTIONS
    return conf


#: File splits asked for per unit of Spark's default parallelism (a cluster's cores; on
#: subsum's local master, twice the cores): several, so that an executor that finishes
#: early takes another split (a Parquet file splits only between row groups, unevenly).
SPLITS_PER_SLOT = 4
#: Spark's estimate of the cost of opening a file, in bytes: the floor of a split's size.
OPEN_COST_BYTES = 1 << 20


def spread_file_splits(spark) -> None:
    """Ask Spark for `SPLITS_PER_SLOT` file splits per unit of its default
    parallelism (`spark.sql.files.minPartitionNum`), with `OPEN_COST_BYTES`
    as the smallest split (`spark.sql.files.openCostInBytes`); a setting the
    user made is left as it is. `match_job` calls it just before it reads
    the events, when a cluster's executors have usually registered their
    cores (before they have, Spark counts 2: 8 splits). With Spark's
    defaults a 14 MB Parquet file of 8 row groups made two tasks of 5 and 3
    groups on a two-core cluster: one executor matched 65% of the events."""
    for key, value in (("spark.sql.files.minPartitionNum", SPLITS_PER_SLOT * spark.sparkContext.defaultParallelism),
                       ("spark.sql.files.openCostInBytes", OPEN_COST_BYTES)):
        if spark.conf.get(key, None) is None and not spark.sparkContext.getConf().contains(key):
            spark.conf.set(key, str(value))


def on_loopback(master: str) -> bool:
    """Whether the driver must bind to loopback: a local master, or a standalone
    master on 127.0.0.1 or localhost (its workers can only reach this host there)."""
    return local_cores(master) is not None or re.fullmatch(r"spark://(127\.0\.0\.1|localhost):\d+", master) is not None


def name_worker_python(settings: Mapping[str, str]) -> None:
    """`spark.pyspark.python`, the executors' Python, as PYSPARK_PYTHON: spark-submit
    does this for a Python driver it starts; PySpark started from a Python
    process reads only the variable, so the setting alone would be ignored."""
    if settings.get("spark.pyspark.python"):
        os.environ["PYSPARK_PYTHON"] = settings["spark.pyspark.python"]


def get_session(master: str | None = None, conf: Mapping[str, str] | None = None, app_name: str = "subsum",
                progress: bool = False, quick_start: bool = False):
    """The SparkSession for this process: started on first use, reused after.

    `master`: a Spark master URL; default $SPARK_MASTER, else local[*].
    `conf`: Spark settings passed through (they win over subsum's defaults).
    `quick_start`: the inputs are small (see `default_conf`).
    A session already running is reused; its master and settings stay as
    they were (Spark fixes them at start)."""
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        raise SparkUnavailable("pyspark is not installed; pip install 'pyspark>=4.0'") from None
    submitted = master is None and "PYSPARK_GATEWAY_PORT" in os.environ  # under spark-submit: its --master rules
    master = resolve_master(master)  # checked even when a session runs already
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_java()
    settings = default_conf(master, progress, quick_start) if not submitted else {}
    settings.update(conf or {})
    name_worker_python(settings)
    if local_cores(master) is not None:
        # No job of subsum's runs Python workers; a caller's own might (tests): this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if on_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if not submitted and "spark.driver.extraJavaOptions" not in (conf or {}):
        java = java_executable() or "java"
        options, missing = class_archive.driver_options(java, java_version_text(java), settings)
        settings["spark.driver.extraJavaOptions"] += " " + options
        if missing is not None and SparkContext._gateway is None:  # this call starts the JVM
            class_archive.want(missing, settings)
    builder = SparkSession.builder.appName(app_name)
    if not submitted:
        builder = builder.master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # py4j and the JVM raise many kinds
        raise SparkUnavailable(f"Spark did not start (master {master}): {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    session.sparkContext.setLogLevel("ERROR")
    return session


def describe_failure(exc: BaseException) -> str:
    """One line for a failed Spark call: the stage when the message names one,
    the root cause (the innermost Java exception, its class and message) and
    Spark's error class. The JVM's own report is pages of stack trace."""
    text = str(exc)
    java = getattr(exc, "java_exception", None)
    causes: list[str] = []
    try:
        while java is not None and len(causes) < 20:
            causes.append(f"{java.getClass().getName()}: {java.getMessage()}")
            nxt = java.getCause()
            java = nxt if nxt is not None and not nxt.equals(java) else None
    except Exception:  # the JVM has gone: keep what we have
        pass
    if not causes:  # no Java side to ask (or it is gone): the Python exception
        causes.append(f"{type(exc).__name__}: {text.strip().splitlines()[0]}" if text.strip() else type(exc).__name__)
    first = causes[0].strip().splitlines()[0]
    root = causes[-1].strip().splitlines()[0]
    stage = re.search(r"in stage (\d+(?:\.\d+)?)", text + " ".join(causes))
    error_class = re.search(r"\[([A-Z_]+(?:\.[A-Z_]+)*)\]", first)
    parts = [f"stage {stage.group(1)}" if stage else None, root,
             f"({error_class.group(1)})" if error_class and error_class.group(0) not in root else None]
    return " ".join(p for p in parts if p)


class NoExecutors(EngineError):
    """The cluster gave no executor within the time allowed (exit 3)."""


class ResourceWatch:
    """Cancels the session's jobs when a job has waited `timeout` seconds
    with no executor to run on: an under-sized cluster (a worker smaller than
    spark.executor.memory, or no worker at all) would otherwise wait forever,
    and errors-only logging hides Spark's "Initial job has not accepted any
    resources". A local master runs tasks in the driver and is not watched.
    `fired` holds the message once the watch has cancelled the jobs."""

    def __init__(self, spark, timeout: float, poll: float = 0.5):
        self.spark, self.timeout, self.poll = spark, timeout, poll
        self.fired: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="subsum-resource-watch", daemon=True)

    def __enter__(self) -> "ResourceWatch":
        if local_cores(self.spark.sparkContext.master) is None:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _executors(self) -> int:
        return self.spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # less the driver

    def _watch(self) -> None:
        waited = 0.0
        sc = self.spark.sparkContext
        while not self._stop.wait(self.poll):
            try:
                starved = bool(sc.statusTracker().getActiveJobsIds()) and self._executors() == 0
            except Exception:  # the JVM is going away: nothing left to watch
                return
            waited = waited + self.poll if starved else 0.0
            if waited >= self.timeout:
                conf = sc.getConf()
                memory = conf.get("spark.executor.memory", "1g")
                cores = conf.get("spark.executor.cores", "all of a worker's")
                self.fired = (f"no executor started within {self.timeout:g} s: the cluster at {sc.master} has no worker "
                              f"that can hold one executor of spark.executor.memory={memory} and "
                              f"spark.executor.cores={cores}. Ask for less (e.g. --conf spark.executor.memory=512m "
                              "--conf spark.executor.cores=1), check that a worker is registered (the master's web UI "
                              "lists them), or allow longer with --spark-timeout SECONDS")
                sc.cancelAllJobs()
                return


#: Inputs up to this size (together) start the JVM for a short run (`QUICK_START_JAVA_OPTIONS`).
QUICK_START_BYTES = 32 * 2**20


def input_bytes(path: str) -> float:
    """The size of a local input (a file, or a folder such as a Parquet
    dataset); infinite for a URI or a path that is not there."""
    p = Path(path)
    if "://" in path or not p.exists():
        return float("inf")
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def session_for(master: str | None, conf_items: Iterable[str], inputs: Iterable[str] = (), progress: bool = False):
    """The session a command's work runs in (`get_session`), its settings
    given as KEY=VALUE items; when all its `inputs` are local and small the
    JVM is tuned for a short run (`QUICK_START_BYTES`)."""
    inputs = [str(p) for p in inputs]
    small = bool(inputs) and sum(input_bytes(p) for p in inputs) <= QUICK_START_BYTES
    return get_session(master, parse_conf(conf_items), progress=progress, quick_start=small)


@contextlib.contextmanager
def job_frame(spark, timeout: float) -> Iterator[None]:
    """The frame of a command's Spark work. A job starved of executors for
    `timeout` seconds is cancelled and reported as such (`ResourceWatch`,
    `NoExecutors`). The frames the work cached are dropped at the end: Spark
    finds a cached frame by its plan, and a plan names the file, not its
    content, so a later read of the same path in the same session (a second
    command in one process) would get the old content."""
    try:
        with ResourceWatch(spark, timeout) as watch:
            try:
                yield
            except Exception:
                if watch.fired:
                    raise NoExecutors(watch.fired) from None
                raise
    finally:
        spark.catalog.clearCache()
