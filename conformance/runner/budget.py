"""Time budgets: every check runs under a limit, and the gate never hangs.

A check that runs past its budget (a state machine shrinking for many
minutes, a solver that does not return) is cut and reported as `timeout`
with the time it ran and the last failing example seen, if any.

Two mechanisms, one inside the other:

- `time_limit(seconds)`: SIGALRM raises `CheckTimeout` in the main thread
  at the deadline, and again every second after it until the block ends.
  It is a `BaseException`, so a check's own `except Exception` does not
  swallow it, and Hypothesis, which catches `Exception` to shrink, passes
  it on; where Hypothesis does catch everything (replaying its final
  failures for the report) the next alarm gets it out. The limit's `fired`
  flag says whether the deadline passed, however the block then ended.
  Python runs the handler between bytecodes, so a long call into C (z3, a
  Spark job) delays it until the call returns.
- `Watchdog`: a thread that, should the check still run `grace` seconds
  after the deadline (stuck in C), calls `on_expiry` (which writes the
  reports so far) and ends the process with exit status 3.

`last_failure` keeps the most recent failing example of the running check
(`conformance.checks.matching.properties.run_property` records each failing call), so a
check cut while Hypothesis shrinks still shows a counterexample.

>>> import time
>>> try:
...     with time_limit(0.05) as limit:
...         while True:
...             time.sleep(0.01)
... except CheckTimeout as exc:
...     exc.seconds, limit.fired
(0.05, True)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator


class CheckTimeout(BaseException):
    """A check ran past its budget of `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past its budget of {seconds:g} s")
        self.seconds = seconds


class Limit:
    """What `time_limit` yields: `fired` turns True when the deadline passes."""

    def __init__(self) -> None:
        self.fired = False


@contextmanager
def time_limit(seconds: float | None, shrink_grace: float = 0.0) -> Iterator[Limit]:
    """Raise `CheckTimeout` in this (main) thread once `seconds` have passed,
    and every second after. None, or a call from another thread (no signals
    there), sets no limit. Limits nest: inside an earlier deadline the inner
    one is moot and left unset; inside a later one, the outer timer and
    handler are put back, less the time spent, when the block ends.

    `shrink_grace`: when the deadline passes with a failing example already
    in hand (`last_failure`), Hypothesis is shrinking it: the block gets
    that many seconds more (the shrink bound, which Hypothesis itself keeps,
    conformance/runner/profiles.py) to report it as a failure, not a timeout."""
    limit = Limit()
    graced = False
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    if (seconds is None or threading.current_thread() is not threading.main_thread()
            or (outer_left and outer_left <= seconds)):
        yield limit
        return

    def expire(_signum, _frame):
        nonlocal graced
        if shrink_grace > 0 and not graced and last_failure.text is not None:
            graced = True
            signal.setitimer(signal.ITIMER_REAL, shrink_grace, 1.0)
            return
        limit.fired = True
        raise CheckTimeout(seconds + (shrink_grace if graced else 0.0))

    entered = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield limit
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - entered), 1e-3), outer_interval)


class Watchdog:
    """Ends the process if a check outlives its deadline by `grace` seconds."""

    def __init__(self, seconds: float, grace: float, on_expiry: Callable[[], None]) -> None:
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(seconds + grace, on_expiry), daemon=True)

    def _watch(self, limit: float, on_expiry: Callable[[], None]) -> None:
        if self._done.wait(limit):
            return
        try:
            on_expiry()
        finally:
            sys.stderr.flush()
            os._exit(3)

    def __enter__(self) -> "Watchdog":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()


class LastFailure:
    """The most recent failing example of the check that runs now, and the
    claim it violated when it names one."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.claim: str | None = None

    def clear(self) -> None:
        self.text = self.claim = None

    def record(self, text: str, claim: str | None = None) -> None:
        self.text = text
        self.claim = claim or self.claim


last_failure = LastFailure()
