"""The cyclic garbage collector, paused over a bounded stretch of work.

The simulator's event loop and the fuzzer's schedules allocate many small
objects and keep a large network alive. Every few hundred allocations the
collector walks its young objects, and now and then all of them, including
the long-lived network: issue 36 measured that as a quarter of the loop's
time. Reference counting frees almost everything these loops drop; only
cyclic garbage (a finished schedule's network) waits for the collector,
which runs again as soon as the block ends.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused() -> Iterator[None]:
    """Pause the cyclic collector for the block, then put back the caller's
    setting, whether the block returns or raises.

    >>> import gc
    >>> with paused():
    ...     gc.isenabled()
    False
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
