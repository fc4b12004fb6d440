"""The kernel plan (spec/07-pipeline.md DEF-PIPE-4): the compiled engine's
kernel run where the events are, instead of the counting plan's SQL.

1. The driver indexes the subscriptions once (`CompiledEngine`, DEF-MATCH-7)
   and broadcasts the prepared engine: its arrays, pickled.
2. Each task receives the events of its partition as Arrow batches
   (`mapInArrow`), gathers them into chunks of `EVENTS_PER_CHUNK` events,
   turns a chunk into a `ColumnarBatch` (`arrow.columnar_batch`), matches
   it with `match_columns`, and yields DEF-PIPE-2's rows (`arrow.result_batches`).
   No Python object is made per event.

The executors must import subsum (and numba): `executors_can_run_kernel`
asks them once, with a one-row job, and `choose_plan` turns `--plan auto`
into `kernel` or `sql` by its answer.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import sys
import time
from typing import Iterator

import attrs
import numpy as np
import pyarrow as pa

from subsum.core.errors import SubsumError
from subsum.impl.matching.columnar.compiled import CompiledEngine, MatchPlan, warm
from subsum.impl.spark import PLANS
from subsum.impl.spark.arrow import columnar_batch, result_batches, slot_ranks
from subsum.impl.spark.session import describe_failure, local_cores

#: Events a task matches at once: Spark's Arrow batches (10,000 rows) are gathered up to this.
EVENTS_PER_CHUNK = 1 << 17
RESULT_DDL = "ord bigint, event string, subscriptions array<string>"
PROBE_DDL = "version string, numba string, warm_seconds double"
#: How a packed environment reaches the executors (PySpark's "Python Package Management").
SHIP_ARCHIVE = "--conf spark.archives=ENV.tar.gz#env --conf spark.pyspark.python=./env/bin/python"


def subsum_version() -> str:
    """The installed subsum's version (its package metadata), as the driver and each executor see it."""
    try:
        return importlib.metadata.version("subsum")
    except importlib.metadata.PackageNotFoundError:  # run from a tree that was never installed
        return "not installed"


class KernelUnavailable(SubsumError):
    """`--plan kernel` on executors that cannot run subsum's kernel (exit 2)."""


@attrs.frozen
class Shipped:
    """What the broadcast carries: the prepared engine, the subscriptions'
    IDs by slot (an Arrow array) and their sort ranks (`arrow.slot_ranks`)."""

    engine: CompiledEngine
    ids: pa.Array
    rank: np.ndarray


def shipped_engine(pairs: list, threads: int = 1) -> Shipped:
    """The subscriptions (id, Subscription) indexed once, for the executors:
    each task matches on `threads` threads (a task holds spark.task.cpus cores)."""
    engine = CompiledEngine(pairs)
    engine.prepare()
    engine.plan = MatchPlan(threads=threads)
    ids = [sid for sid, _ in pairs]
    return Shipped(engine, pa.array(ids, pa.string()), slot_ranks(ids))


def _chunks(batches: Iterator[pa.RecordBatch], size: int) -> Iterator[pa.RecordBatch]:
    """The batches gathered into batches of about `size` rows (the last may be smaller)."""
    held: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        held.append(batch)
        rows += batch.num_rows
        if rows >= size:
            yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]
            held, rows = [], 0
    if rows:
        yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]


def match_partition(shipped, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Step 2 on one partition: `shipped` is the broadcast of a `Shipped`;
    `batches` hold the columns ord, id and attributes (DEF-PIPE-1)."""
    payload: Shipped = shipped.value
    for chunk in _chunks(batches, EVENTS_PER_CHUNK):
        pairs = payload.engine.match_columns(columnar_batch(chunk))
        yield from result_batches(chunk.column("ord"), chunk.column("id"), pairs, payload.ids, payload.rank)


def kernel_match(spark, pairs: list, events):
    """DEF-PIPE-4: the frame (ord, event, subscriptions) of `match.match`,
    computed by the compiled kernel on the executors. `pairs`: the
    subscriptions as (id, Subscription); `events`: DEF-PIPE-1's frame."""
    threads = int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))
    shipped = spark.sparkContext.broadcast(shipped_engine(pairs, threads))
    return events.select("ord", "id", "attributes").mapInArrow(functools.partial(match_partition, shipped), RESULT_DDL)


def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Run on an executor: import the kernel, compile or load it from numba's
    cache (`compiled.warm`), and say which versions it found and how long
    the first call took."""
    for _ in batches:
        pass
    import numba

    started = time.perf_counter()
    warm()
    yield pa.RecordBatch.from_pydict({"version": [subsum_version()], "numba": [numba.__version__],
                                      "warm_seconds": [time.perf_counter() - started]})


@attrs.frozen
class Probe:
    """What `executors_can_run_kernel` found: `problem` is None when the
    executors can run the kernel."""

    problem: str | None
    warm_seconds: float | None = None
    seconds: float = 0.0


def executors_can_run_kernel(spark) -> Probe:
    """Ask the executors, with a job of one row, whether they import this
    version of subsum and run its kernel (`probe`)."""
    started = time.perf_counter()
    try:
        rows = spark.range(1, numPartitions=1).mapInArrow(probe, PROBE_DDL).collect()
    except Exception as exc:  # py4j and the JVM raise many kinds
        python = getattr(spark.sparkContext, "pythonExec", None) or "python3"
        cause = re.sub(r"^stage \d+(\.\d+)? ", "", describe_failure(exc))  # the probe is one stage: its number says nothing
        return Probe(f"a one-row probe job failed (the executors' Python: {python}, set by PYSPARK_PYTHON or "
                     f"spark.pyspark.python): {cause}", seconds=time.perf_counter() - started)
    took = time.perf_counter() - started
    if rows[0]["version"] != subsum_version():
        return Probe(f"the executors import subsum {rows[0]['version']}, the driver runs {subsum_version()}", seconds=took)
    return Probe(None, rows[0]["warm_seconds"], took)


def this_python(spark) -> Probe | None:
    """On a local master whose Python workers run this very interpreter, the
    answer without a probe job: they import what this process imports."""
    python = getattr(spark.sparkContext, "pythonExec", None)
    if local_cores(spark.sparkContext.master) is None or not python or not os.path.exists(python):
        return None
    # abspath, not realpath: a venv's python links to its base interpreter, which does not see the venv's packages
    return Probe(None) if os.path.abspath(python) == os.path.abspath(sys.executable) else None


def choose_plan(spark, plan: str) -> tuple[str, Probe | None]:
    """The plan to run for `--plan` (sql, kernel or auto) and the probe's
    answer (None for sql). Raise KernelUnavailable for `kernel` on
    executors that cannot run it."""
    if plan not in PLANS:
        raise SubsumError(f"--plan {plan!r}: expected one of {', '.join(PLANS)}")
    if plan == "sql":
        return "sql", None
    found = this_python(spark) or executors_can_run_kernel(spark)
    if found.problem is None:
        return "kernel", found
    found = attrs.evolve(found, problem=f"the executors cannot run subsum's kernel: {found.problem}")
    if plan == "kernel":
        raise KernelUnavailable(
            f"--plan kernel: {found.problem}. Use --plan sql, "
            "which needs no Python on the executors, or ship subsum to them: install it in the workers' Python, or "
            f"pass a packed environment ({SHIP_ARCHIVE}; README, 'Running on a Spark cluster')")
    return "sql", found
