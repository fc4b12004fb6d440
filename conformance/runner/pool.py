"""`subsum verify --jobs N`: the checks of a run spread over N worker
processes, each its own interpreter (its own SIGALRM budget, watchdog and,
for the pipeline's checks, Spark session).

The parent hands out one check at a time to whichever worker is free and
puts the results back in registry order, so a parallel run reports exactly
what a serial one does, only sooner. The checks that run Spark jobs
(`SPARK_FAMILIES`) all go to one worker, the first, which takes them before
any other: one JVM warms up once and runs them back to back. Spread over
two workers on this 2-core machine, the same 11 checks took 308 s of check
time and 2 min 38 s of wall time; in one worker, 135 s and 2 min 16 s (two
JVMs compile the same code twice and fight for the same cores). The workers talk JSON lines:

- parent -> worker: first the run's settings, then one check index per line;
- worker -> parent: `{"start": i}`, then `{"result": i, ...CheckResult}`; or,
  when a check ignores its alarm, `{"stuck": i, "hard": seconds, ...}` and
  the worker ends with exit status 3, as a serial run would.

conformance/runner/worker.py is the worker's side. A worker that dies otherwise (a crash in C, out of memory) fails the check
it was running, with its exit status and the end of its standard error; a
fresh worker takes its place.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from typing import IO, Callable

from subsum.conformance.claims import Check, CheckResult, Claim
from subsum.core.errors import EngineError

#: Claim families whose checks run Spark jobs (seconds to tens of seconds each): all
#: run by the Spark worker, first, so that the run does not end on one of them alone.
SPARK_FAMILIES = ("CLM-TRACE-", "CLM-PIPE-")


def units(claims: list[Claim]) -> list[tuple[Claim, Check]]:
    """Every check of the run, in registry order."""
    return [(claim, check) for claim in claims for check in claim.checks]


def shared_runs(units: list[tuple[Claim, Check]]) -> list[int]:
    """For each (claim, check), the index of the first unit running the same check: the same function, kind, budget
    and census floors. Such a check is run once; a run is deterministic under `ci`, and under `thorough` each claim
    still has every example the run drew."""
    seen: dict[tuple, int] = {}
    first = []
    for i, (_, check) in enumerate(units):
        key = (check.kind, check.name, check.budget, check.run, tuple(sorted(check.floors.items())))
        first.append(seen.setdefault(key, i))
    return first


def runs(claims: list[Claim]) -> list[tuple[Claim, Check]]:
    """The checks a run runs, in registry order: each shared check once, for the first claim that lists it."""
    every = units(claims)
    return [every[i] for i in sorted(set(shared_runs(every)))]


def runs_spark(claim: Claim) -> bool:
    return claim.id.startswith(SPARK_FAMILIES)


def next_check(pending: list[int], work: list[tuple[Claim, Check]], spark_worker: bool) -> int | None:
    """The check a free worker takes from `pending` (registry order), or None when none is
    for it: the Spark worker takes the Spark checks first, then any; the others, never a Spark check.

    >>> from subsum.conformance.claims import Check, Claim
    >>> work = [(Claim(i, "", "", (), (), ()), Check("example", i, lambda: None)) for i in ("CLM-EX-1", "CLM-TRACE-1")]
    >>> next_check([0, 1], work, spark_worker=True), next_check([0, 1], work, spark_worker=False), next_check([1], work, False)
    (1, 0, None)
    """
    spark = [i for i in pending if runs_spark(work[i][0])]
    rest = [i for i in pending if not runs_spark(work[i][0])]
    mine = spark + rest if spark_worker else rest
    return mine[0] if mine else None


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Worker:
    """One worker process and the thread that reads its lines into the parent's queue."""

    def __init__(self, settings: dict, inbox: "queue.Queue[tuple[Worker, dict | None]]", spark: bool) -> None:
        self.spark = spark  # the worker that runs every Spark check
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, "-m", "subsum.conformance.runner.worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)
        self.running: int | None = None
        self.send(settings)
        threading.Thread(target=self._read, args=(inbox,), daemon=True).start()

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _read(self, inbox: "queue.Queue[tuple[Worker, dict | None]]") -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            inbox.put((self, json.loads(line)))
        inbox.put((self, None))  # the worker has ended

    def death(self) -> str:
        """Why the worker ended: its exit status and the end of its standard error."""
        code = self.process.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-1500:].decode("utf-8", "replace").strip()
        return f"the worker process running it ended with exit status {code}" + (f": {tail}" if tail else "")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.stderr.close()


def run_parallel(settings: dict, work: list[tuple[Claim, Check]], jobs: int, progress: Callable[[int, Claim, Check], None],
                 stuck: Callable[[list[CheckResult], Claim, Check, float], None]) -> list[CheckResult]:
    """Run `work` on `jobs` workers; the results in registry order. `settings`
    are `verify.select`'s arguments plus the profile and budget scale. When a
    check ignores its alarm, `stuck(results so far, claim, check, budget)` is
    called and this process ends with exit status 3, like a serial run."""
    inbox: queue.Queue[tuple[Worker, dict | None]] = queue.Queue()
    settings = {**settings, "checks": [[claim.id, check.name] for claim, check in work]}
    pending = list(range(len(work)))
    results: dict[int, CheckResult] = {}
    workers = [Worker(settings, inbox, spark=n == 0) for n in range(max(1, min(jobs, len(work))))]
    handed = 0

    def hand_out(worker: Worker) -> None:
        nonlocal handed
        chosen = next_check(pending, work, worker.spark)
        if chosen is not None:
            pending.remove(chosen)
            worker.running = chosen
            handed += 1
            progress(handed, *work[worker.running])
            worker.send({"check": worker.running})
        else:
            worker.running = None
            worker.process.stdin.close()  # type: ignore[union-attr]

    try:
        for worker in workers:
            hand_out(worker)
        while len(results) < len(work):
            worker, message = inbox.get()
            if message is None:  # the worker ended
                if worker.running is not None and worker.running not in results:
                    claim, check = work[worker.running]
                    results[worker.running] = CheckResult(claim.id, check.kind, check.name, "fail", 0.0, worker.death())
                    workers.remove(worker)
                    worker.stop()
                    replacement = Worker(settings, inbox, spark=worker.spark)
                    workers.append(replacement)
                    hand_out(replacement)
                continue
            if "error" in message:
                raise EngineError(f"subsum verify --jobs: {message['error']}")
            if "result" in message:
                index = message.pop("result")
                results[index] = CheckResult(**message)
                hand_out(worker)
            elif "stuck" in message:
                index, hard = message.pop("stuck"), message.pop("hard")
                results[index] = CheckResult(**message)
                claim, check = work[index]
                stuck([results[i] for i in sorted(results)], claim, check, hard)
                for other in workers:
                    other.stop()
                sys.stderr.flush()
                os._exit(3)
    finally:
        for worker in workers:
            worker.stop()
    return [results[i] for i in range(len(work))]
