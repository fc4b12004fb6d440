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
def young_only(full_after: int = 1024) -> Iterator[Callable[[], None]]:
    """Over a long search that keeps what it made (`subsum explore`'s states), let the collector scan only what is
    new: the block calls the function it is given now and then (`sweep`), which collects the objects made since the
    last sweep and sets the survivors aside (`gc.freeze`), so that no later pass walks them again. The discarded
    states' reference cycles (a network and its transport's bound methods) are still collected, at the next sweep.
    Issue 53 measured strawman 3/2/1/1: 5.2-5.7 s with the collector as it is, 2.8 s with a sweep every 256
    expansions, 2.9-3.0 s with the collector off (and 2.5 times the memory: the cycles are never freed).

    What was set aside and later dropped is freed only by a full pass, which walks everything alive. The search
    breaks its dropped states' cycles itself (`Network.release`), so reference counting frees them at once; for
    anything it misses, sweep number `full_after` (a quarter of a million expansions) makes a full pass, and then each sweep whose number has grown
    fourfold since the last: a few passes in a long search, the garbage waiting within a constant factor of what is
    alive. (Before `release`, a minute-long breadth-first search ran out of 24 GB; with it, and no full pass at
    all, timed 3/3/1/1 held 1.2 GB after 40 s; full passes at every doubling cost a fifth of that search.) The
    sweeps are counted, not the objects set aside: `gc.get_freeze_count` walks them all. The objects set aside are
    handed back to the collector when the block ends, however it ends.

    >>> import gc
    >>> with young_only() as sweep:
    ...     sweep()
    ...     gc.get_freeze_count() > 0
    True
    >>> gc.get_freeze_count()
    0
    """
    sweeps, next_full = 0, full_after

    def sweep() -> None:
        nonlocal sweeps, next_full
        sweeps += 1
        if sweeps == next_full:
            gc.unfreeze()
            gc.collect()
            next_full = 4 * sweeps
        else:
            gc.collect(1)
        gc.freeze()

    try:
        yield sweep
    finally:
        gc.unfreeze()
