"""How `subsum bench spark` measures one run, each in a child process of
its own so that its peak memory is its own:

- Spark (`spark_run`, a spawned child with a fresh JVM): `subsum match
  --engine spark --plan PLAN`'s work (`impl.spark.job.match_job`, what the
  command runs in its session), Parquet in and out. Timed from the session's start (`session_s`, apart)
  to the written output: reading and validating the inputs, the plan's
  probe of the executors, matching and writing (`seconds`).
- the compiled engine in process (`compiled_run`, a forked child), read to
  write: the same Parquet files read by pyarrow (duplicate event IDs
  refused), the subscriptions parsed and indexed, the events matched chunk
  by chunk through the kernel plan's own Arrow conversion
  (`impl/spark/arrow.py`), and the rows written as Parquet.
- the vectorized engine and DuckDB (`in_memory_run`): match only, their
  input already in memory (`measure`).

Every Parquet output is read back after the clock stops, and its rows are
hashed (`output_digest`): two runs agree when their digests are equal.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from subsum.bench.matching.measure import measure, run_in_child
from subsum.core.filters import parse_filter
from subsum.impl.matching.columnar.compiled import CompiledEngine
from subsum.impl.spark.arrow import columnar_batch, result_batches, slot_ranks
from subsum.impl.spark.job import match_job
from subsum.impl.spark.kernel import EVENTS_PER_CHUNK
from subsum.impl.spark.session import get_session, job_frame
from subsum.impl.matching.columnar.subscription_columns import SubscriptionColumns
from subsum.bench.matching.workload import Params, Workload


def process_peak_mib(pid: int | str = "self") -> float | None:
    """A process's peak resident memory (VmHWM, Linux). Not ru_maxrss: on
    Linux that carries a forked parent's high-water mark across exec."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # not Linux, or no access: report nothing rather than a guess
        return None
    return None


def _jvm_peak_mib() -> float | None:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    jvm = spark.sparkContext._jvm if spark is not None else None
    try:
        return process_peak_mib(jvm.java.lang.ProcessHandle.current().pid()) if jvm is not None else None
    except Exception:  # the gateway is gone
        return None


def output_digest(path: Path) -> tuple[int, int, str]:
    """(rows, matches, digest) of a results Parquet file or folder (columns
    event, subscriptions), its rows in order."""
    import pyarrow.dataset as ds

    digest = hashlib.sha256()
    rows = matches = 0
    for batch in ds.dataset(str(path), format="parquet").to_batches(columns=["event", "subscriptions"]):
        events = batch.column(0).to_pylist()
        lists = batch.column(1).to_pylist()
        rows += len(events)
        matches += sum(map(len, lists))
        digest.update("\n".join(f"{e}\t{' '.join(s)}" for e, s in zip(events, lists)).encode() + b"\n")
    return rows, matches, digest.hexdigest()[:16]


def _spark_child(master: str, conf: tuple[str, ...], plan: str, events_path: str, subs_path: str, out_path: str,
                 conn) -> None:
    try:
        started = time.perf_counter()
        spark = get_session(master, dict(item.split("=", 1) for item in conf))
        ready = time.perf_counter()
        with job_frame(spark, 3600):
            stats = match_job(spark, subs_path, events_path, out_path, print, plan=plan)
        wall = time.perf_counter() - started
        stats["session_seconds"] = ready - started
        conn.send({"session_s": stats["session_seconds"], "seconds": wall - stats["session_seconds"],
                   "probe_s": stats["probe_seconds"], "plan": stats["plan"], "jvm_peak_mib": _jvm_peak_mib(),
                   "driver_peak_mib": process_peak_mib(), "warm_s": stats.get("executor_warm_seconds")})
    except BaseException as exc:
        conn.send({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
    finally:
        conn.close()


def _with_output(run, *args) -> dict:
    """Run `run(*args, out, conn)` in a child, then read its output's digest."""
    out = Path(tempfile.mkdtemp(prefix="subsum-bench-spark-")) / "results.parquet"
    try:
        result = run(*args, str(out))
        if "error" not in result:
            result["rows"], result["matches"], result["digest"] = output_digest(out)
        return result
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


def spark_run(master: str, partitions: int, plan: str, events_path: Path, subs_path: Path, memory: str = "8g") -> dict:
    """`subsum match --engine spark --plan PLAN`, Parquet in and out, in a
    spawned child (a fresh interpreter for the JVM gateway)."""
    conf = (f"spark.driver.memory={memory}", f"spark.sql.shuffle.partitions={partitions}")
    return _with_output(lambda *a: run_in_child("spawn", _spark_child, a), master, conf, plan, str(events_path),
                        str(subs_path))


def _compiled_child(events_path: str, subs_path: str, out_path: str, conn) -> None:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        started = time.perf_counter()
        subs = pq.read_table(subs_path)
        pairs = [(sid, parse_filter(text)) for sid, text in zip(subs.column("id").to_pylist(), subs.column("filter").to_pylist())]
        engine = CompiledEngine(pairs)
        engine.prepare()
        ids = pa.array([sid for sid, _ in pairs], pa.string())
        rank = slot_ranks([sid for sid, _ in pairs])
        events = pq.read_table(events_path)
        if pc.count_distinct(events.column("id")).as_py() != events.num_rows:
            raise ValueError(f"{events_path}: duplicate event ids")
        events = events.append_column("ord", pa.array(np.arange(events.num_rows, dtype=np.int64)))
        schema = pa.schema([("event", pa.string()), ("subscriptions", pa.list_(pa.string()))])
        with pq.ParquetWriter(out_path, schema) as writer:
            for chunk in events.to_batches(max_chunksize=EVENTS_PER_CHUNK):  # a row group's chunk at most
                found = engine.match_columns(columnar_batch(chunk))
                for rows in result_batches(chunk.column("ord"), chunk.column("id"), found, ids, rank):
                    writer.write_batch(pa.RecordBatch.from_arrays([rows.column(1), rows.column(2)], schema=schema))
        conn.send({"seconds": time.perf_counter() - started, "driver_peak_mib": process_peak_mib()})
    except BaseException as exc:
        conn.send({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
    finally:
        conn.close()


def compiled_run(events_path: Path, subs_path: Path) -> dict:
    """The compiled engine in process, read to write (module docstring), in a forked child."""
    return _with_output(lambda *a: run_in_child("fork", _compiled_child, a), str(events_path), str(subs_path))


def in_memory_run(engine: str, subs, batch) -> dict:
    """`bench matching`'s measure: one engine, match only, its input in memory."""
    workload = Workload(Params(events=0, subscriptions=0), SubscriptionColumns.from_subscriptions(subs), batch, 0)
    return measure(workload, None, engine, 1)
