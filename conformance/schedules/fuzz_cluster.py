"""`subsum fuzz reconfig --master URL`: a fuzzing campaign spread over a
Spark cluster's executors (spec/05-network.md DEF-NET-8, "Fuzzing on a
cluster").

Schedule i depends on nothing but the run's drawing and i (`run_schedule`),
so the schedule indices are split into slices, each slice is run by a task
on an executor, and every task sends back, per schedule, the operations it
ran and its violation if any. The driver then keeps the violations in
schedule order, as a local run would find them (`keep_found`, up to
`max_violations`), and shrinks and saves them itself. Given the same
seeds, the violating schedules are the local run's: the executors run the
same code on the same draws.

The executors must import subsum (as for the kernel plan:
`impl.spark.kernel.executors_can_run_kernel`). A cluster run has no time
budget: `--schedules` says how many schedules run.
"""

from __future__ import annotations

import functools
import time
from typing import Iterable, Iterator

from subsum.conformance.schedules.fuzz import Drawing, FuzzResult, keep_found, run_schedule


def run_slice(drawing: Drawing, indices: Iterable[int]) -> Iterator[tuple]:
    """On an executor: (i, operations, violating schedule as found or None) for each schedule index."""
    for i in indices:
        outcome = run_schedule(drawing, i)
        yield i, outcome.operations, outcome.found


def slices_for(spark, schedules: int) -> int:
    """Tasks for a campaign: four per core the cluster offers (so that a slow
    slice does not hold the others up), at most one per schedule."""
    return max(1, min(schedules, 4 * spark.sparkContext.defaultParallelism))


def fuzz_on_cluster(spark, drawing: Drawing, schedules: int, max_violations: int, distinct: bool = False) -> FuzzResult:
    """Run schedules 0 .. schedules - 1 on the cluster; the result holds what
    a local run of the same schedules would have found (unshrunk, unsaved)."""
    result = FuzzResult()
    started = time.perf_counter()
    rows = (spark.sparkContext.parallelize(range(schedules), slices_for(spark, schedules))
            .mapPartitions(functools.partial(run_slice, drawing)).collect())
    for _i, operations, found in sorted(rows, key=lambda row: row[0]):
        if len(result.found) >= max_violations:
            break  # a local run stops here
        result.schedules += 1
        result.operations += operations
        if found is not None:
            keep_found(result, found, distinct)
    result.seconds = time.perf_counter() - started
    result.first_violation_seconds = result.seconds if result.found else None
    return result
