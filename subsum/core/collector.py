"""The cyclic garbage collector, paused over a bounded stretch of work, or
off over a long one that makes no cyclic garbage.

The simulator's event loop allocates a few small objects per message while
a large network stays alive. Every few hundred allocations the collector
walks its young objects, and now and then all of them, the long-lived
network included. Issue 36 measured the pause at the default 1,000-broker
burst: 0.033–0.038 of the bare heapq loop without it, 0.044–0.046 with it.
At 200 brokers, in a fresh process, it makes no measurable difference.
Reference counting frees almost everything the loop drops; only cyclic
garbage made inside the block waits for the collector, which runs again as
soon as the block ends."""

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


@contextmanager
def acyclic() -> Iterator[None]:
    """For a long block that makes no cyclic garbage, because it breaks the cycles of what it drops itself
    (`subsum explore`, which releases each state it drops, `Network.release`): the collector off until the block
    ends, however it ends (what an earlier block left is collected then: nothing is set aside for good).

    Issue 53 measured strawman 3/2/1/1 and 4/2/1/1 (40 s): a sweep of the young objects every 256 expansions, the
    earlier way, found 67 and 102 objects in all, every one on its first sweep (left from before the search), and
    cost a fifth of the time (6,300 against 7,600 states/s at 4/2/1/1, the same peak memory, 440 MB). Sweeping at
    each doubling cost as much: the last sweep walks every state kept. A search that did leave cycles would hold
    its garbage until the block ends; tests/test_fork.py checks that one leaves none (and that one planted to keep
    its networks' cycles is caught).

    >>> import gc
    >>> with acyclic():
    ...     gc.isenabled()
    False
    """
    with paused():
        yield
