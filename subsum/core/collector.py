"""The cyclic garbage collector, paused over a bounded stretch of work, or
kept to young objects over a long one.

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
from typing import Callable, Iterator


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
def young_only() -> Iterator[Callable[[], None]]:
    """Over a long search that keeps what it made (`subsum explore`'s states), let the collector scan only what is
    new: the block calls the function it is given now and then (`sweep`), which collects the objects made since the
    last sweep and sets the survivors aside (`gc.freeze`), so that no later pass walks them again. Issue 53 measured
    strawman 3/2/1/1: 5.2-5.7 s with the collector as it is, 2.8 s with a sweep every 256 expansions, 2.9-3.0 s with
    the collector off (and 2.5 times the memory: the cycles are never freed).

    What was set aside and later dropped is not walked again either, so the caller must free what it drops
    itself: the search breaks each dropped state's cycles (`Network.release`), and reference counting frees it at
    once. (Before it did, a minute-long breadth-first search ran out of 24 GB; with it, timed 3/3/1/1 held 1.2 GB
    after 40 s, as much as with a full pass at every doubling, which cost a fifth of the time, and up to 25 s a
    pass at half a million states; and the states a cut search leaves unexpanded are released too, or a bench of
    one search after another ran out of memory.) The block starts with a full pass, so that garbage an earlier one
    left is not set aside for good; the objects set aside are handed back to the collector when it ends, however it
    ends.

    >>> import gc
    >>> with young_only() as sweep:
    ...     sweep()
    ...     gc.get_freeze_count() > 0
    True
    >>> gc.get_freeze_count()
    0
    """
    def sweep() -> None:
        gc.collect(1)
        gc.freeze()

    gc.collect()  # nothing an earlier block left is set aside for good
    try:
        yield sweep
    finally:
        gc.unfreeze()
