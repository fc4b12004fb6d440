"""`subsum explore --jobs N`: the breadth-first search split across N forked
processes that share one set of fingerprints, as TLC's workers do
(spec/12-exploration.md DEF-EXP-11).

The search runs alone until a layer holds `SPLIT` states a worker, then
forks N workers; worker w takes every Nth state of that layer. A state a
worker reaches is its own to expand when it is the first to add the state's
fingerprint to the table all of them share (`SharedSeen`: memory they map in
common, each insert under a lock). No state crosses a process: a worker
expands only states it made or inherited at the fork, and the path to each
is in its own memory. The workers go layer by layer and wait for each other
at each layer's end, so a violation found is at the least depth, as with one
job; the states and the verdict are one job's too.

Sleep sets are off under --jobs: the moves asleep at a fingerprint would
have to cross processes. The states are the same with them off (DEF-EXP-6);
only the transitions made differ.
"""

from __future__ import annotations

import mmap
import multiprocessing
import signal
from collections import Counter
from multiprocessing.connection import Connection, wait
from threading import BrokenBarrierError

from subsum.conformance.schedules import declared
from subsum.conformance.explore.searches import BreadthFirst, Found, Node, Visit
from subsum.core.errors import EngineError

#: States a worker a layer must hold before the search forks (fewer: the layers are still cheap to search alone).
SPLIT = 32
#: Stop codes in the control block: go on, a bound cut the search, a violation was found, Ctrl-C.
GO, CUT_STATES, CUT_BUDGET, FOUND, INTERRUPT = range(5)
_CUTS = {CUT_STATES: "max-states", CUT_BUDGET: "budget", INTERRUPT: "interrupt"}
#: Seconds a worker waits at a layer's end for the others before it takes the search for broken.
BARRIER_TIMEOUT = 3600.0


class SharedSeen:
    """A set of 64-bit fingerprints in memory that forked processes share: open addressing with linear probing,
    each insert under one lock, and a count of the fingerprints held. A fingerprint is stored as itself modulo
    2^64, with 0 (the empty slot) stored as 1: two states whose fingerprints differ only so are taken as one, which
    adds 2^-64 to the chance of a collision (DEF-EXP-3)."""

    def __init__(self, capacity: int) -> None:
        size = 1 << max(10, (2 * capacity - 1).bit_length())
        self.mask = size - 1
        self.buffer = mmap.mmap(-1, 8 * (size + 1))  # anonymous and shared: the forked workers see one table
        self.slots = memoryview(self.buffer).cast("Q")
        self.lock = multiprocessing.get_context("fork").Lock()

    @property
    def count(self) -> int:
        return self.slots[self.mask + 1]

    def add(self, key: int) -> bool:
        """Add `key`; whether it was new."""
        key &= 0xFFFF_FFFF_FFFF_FFFF
        key = key or 1
        slots, mask = self.slots, self.mask
        i = (key ^ (key >> 29)) & mask
        with self.lock:
            while True:
                held = slots[i]
                if held == key:
                    return False
                if held == 0:
                    if slots[mask + 1] >= mask:
                        raise MemoryError("the shared fingerprint table is full")
                    slots[i] = key
                    slots[mask + 1] += 1
                    return True
                i = (i + 1) & mask

    def __contains__(self, key: int) -> bool:
        key &= 0xFFFF_FFFF_FFFF_FFFF
        key = key or 1
        slots, mask = self.slots, self.mask
        i = (key ^ (key >> 29)) & mask
        while True:  # read without the lock: a fingerprint being added may be missed, and is then made again
            held = slots[i]
            if held == key:
                return True
            if held == 0:
                return False
            i = (i + 1) & mask


#: Each worker's cells in the control block: its next layer's size (two cells: by the layer's depth, even or odd, since a
#: worker past a layer's end writes the next before a slower one has read this one), its transitions, states it has
#: left, its depth.
NEXT, _NEXT_ODD, TRANSITIONS, QUEUE, DEPTH = range(5)
FIELDS = 5
#: The cells before the workers': the stop code, and the decision at a layer's end (by parity).
HEAD = 3


class Control:
    """What the workers share besides the table: why the search stops (a stop code), the decision at each layer's
    end, each worker's `FIELDS` (for the layers' ends and the progress line), and the barrier at each layer's end."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.cells = multiprocessing.get_context("fork").RawArray("q", HEAD + FIELDS * jobs)
        self.barrier = multiprocessing.get_context("fork").Barrier(jobs, action=self.decide)

    def decide(self) -> None:
        """At a layer's end, once every worker is there (the barrier's action, run by one of them): whether the search
        stops, written where every worker reads it after the barrier. One decision for all: a stop code set later (a
        bound met in the next layer, Ctrl-C) is the next layer's to read. By the layer's parity, as NEXT is."""
        parity = self.cells[HEAD + DEPTH] % 2
        self.cells[1 + parity] = int(self.cells[0] != GO or self.total(NEXT + parity) == 0)

    def stops(self, depth: int) -> bool:
        """The decision at the end of the layer at `depth` (`decide`)."""
        return bool(self.cells[1 + depth % 2])

    def stop(self, code: int) -> None:
        if self.cells[0] == GO:
            self.cells[0] = code

    @property
    def code(self) -> int:
        return self.cells[0]

    def put(self, worker: int, field: int, value: int) -> None:
        self.cells[HEAD + FIELDS * worker + field] = value

    def total(self, field: int) -> int:
        return sum(self.cells[HEAD + FIELDS * w + field] for w in range(self.jobs))

    def most(self, field: int) -> int:
        return max(self.cells[HEAD + FIELDS * w + field] for w in range(self.jobs))


class ParallelSearch(BreadthFirst):
    """The breadth-first search with its fingerprints in a `SharedSeen` and, past the fork, N workers (DEF-EXP-11).
    Sleep sets are off (see the module)."""

    jobs: int = 2
    table: SharedSeen
    control: Control

    @classmethod
    def across(cls, jobs: int, scope, result, started: float, max_states: int, budget: float, progress) -> ParallelSearch:
        """The search of `scope` on `jobs` processes, sleep sets off."""
        search = cls(scope, result, started, max_states, budget, progress, False)
        search.jobs = jobs
        search.table = SharedSeen(max_states)
        search.control = Control(jobs)
        return search

    def states_seen(self) -> int:
        return self.table.count  # every worker's

    def seen_already(self, node: Node, move, made: list, key: int) -> bool:
        if key not in self.table:
            return False
        return super().seen_already(node, move, made, key)  # sleep sets off: nothing asleep there

    def reach(self, child: Node, next_layer: list[Node], parts=None) -> None:
        """A new fingerprint is this process's to expand; a known one is dropped (no sleep sets to wake)."""
        assert child.state is not None
        if parts is None:
            key = self.model.fingerprint(child.state, self.records)
        else:
            key = parts.digest()
            child.state.parts = parts
        if not self.table.add(key):
            child.state.run.net.release()
            return
        child.visit = self.seen[key] = Visit(frozenset(), waiting=child)
        self.result.states = self.table.count
        if self.quiescent is not None and child.state.quiescent():
            self.quiescent.add(key)
        next_layer.append(child)

    def run(self, memo: bool) -> None:
        """Alone until a layer is large enough to share, then across the workers (`fork`)."""
        result = self.result
        root = self.start(memo)
        self.table.add(next(iter(self.seen)))
        frontier: list[Node] = [root]
        while frontier and not result.found:
            if len(frontier) >= SPLIT * self.jobs:
                self.fork(frontier)
                return
            result.depth = frontier[0].depth
            next_layer = self.layer(frontier, 0)
            if next_layer is None:
                result.cut_by = _CUTS.get(self.control.code)
                return
            frontier = next_layer
        result.complete = not frontier and not result.found

    def layer(self, frontier: list[Node], worker: int) -> list[Node] | None:
        """Expand one layer's nodes (this worker's); its next layer, or None when the search stops (`control.code`
        says why; `result.queue` counts what was left)."""
        result, control = self.result, self.control
        next_layer: list[Node] = []
        for i, node in enumerate(frontier):
            cut = self.bound()
            if cut:
                control.stop(CUT_STATES if cut == "max-states" else CUT_BUDGET)
            if control.code != GO:
                result.queue = len(frontier) - i + len(next_layer)
                return None
            self.expand(node, next_layer)
            if result.found:
                control.stop(FOUND)
                result.queue = 0
                return None
            if i % 64 == 0:
                control.put(worker, TRANSITIONS, result.transitions)
                control.put(worker, QUEUE, len(frontier) - i + len(next_layer))
            self.tick(i)
        control.put(worker, TRANSITIONS, result.transitions)
        return next_layer

    def fork(self, frontier: list[Node]) -> None:
        """Fork the workers, each with its share of `frontier`; wait for them, telling `progress`, and merge their
        results into this process's (`gather`)."""
        context = multiprocessing.get_context("fork")
        pipes, workers = [], []
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the workers start with Ctrl-C ignored: it is the parent's
        try:
            for w in range(self.jobs):
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=self.work, args=(w, frontier[w::self.jobs], send), daemon=True)
                process.start()
                send.close()
                pipes.append(receive)
                workers.append(process)
        finally:
            signal.signal(signal.SIGINT, interrupt)
        for node in frontier:  # the workers have their copies
            if node.state is not None:
                node.state = None
        self.gather(pipes, workers)

    def work(self, worker: int, frontier: list[Node], pipe) -> None:
        """A worker: the layers from the fork's on, its share of each, waiting for the others at each one's end;
        then its results down `pipe`."""
        result, control = self.result, self.control
        self.progress = None  # the parent tells it, from the control block
        result.transitions = 0  # what this worker makes from here on: the parent adds it to its own
        declared.current_tally().clear()
        memo = result.local_steps
        if memo is not None:
            memo.hits = memo.misses = memo.bypassed = 0
            memo.distinct_at_fork = len(memo.steps)
        depth = frontier[0].depth if frontier else 0
        while True:
            result.depth = depth
            control.put(worker, DEPTH, depth)
            next_layer = self.layer(frontier, worker)
            control.put(worker, NEXT + depth % 2, len(next_layer or ()))
            try:
                control.barrier.wait(BARRIER_TIMEOUT)
            except BrokenBarrierError:  # the parent gave the search up (another worker failed)
                return
            if control.stops(depth) or next_layer is None:  # None: this layer stopped, so the decision is to stop
                if next_layer is not None and control.code != GO:
                    result.queue = len(next_layer)
                break
            frontier, depth = next_layer, depth + 1
        pipe.send({"found": [(f.violation, f.schedule, f.moves) for f in result.found], "depth": result.depth,
                   "transitions": result.transitions, "queue": result.queue, "complete": control.code == GO,
                   "memo": (memo.hits, memo.misses, memo.bypassed, len(memo.steps) - memo.distinct_at_fork) if memo else None,
                   "tally": dict(declared.current_tally())})
        pipe.close()

    def gather(self, pipes: list[Connection], workers: list) -> None:
        """Wait for every worker's results (telling `progress` meanwhile); Ctrl-C stops them at their next state."""
        replies: dict[int, dict] = {}
        forked_transitions = self.result.transitions
        while len(replies) < len(pipes):
            try:
                for ready in wait([p for i, p in enumerate(pipes) if i not in replies], timeout=0.25):
                    index = next(i for i, p in enumerate(pipes) if p is ready)
                    try:
                        replies[index] = pipes[index].recv()
                    except EOFError:
                        self.failed(index, workers)
                for index, process in enumerate(workers):  # a worker's pipe ends only when every later fork has ended too
                    if index not in replies and process.exitcode is not None and not pipes[index].poll():
                        self.failed(index, workers)
                self.result.states = self.table.count
                self.result.transitions = forked_transitions + self.control.total(TRANSITIONS)
                self.result.queue = self.control.total(QUEUE)
                self.result.depth = self.control.most(DEPTH)
                self.tick(0)
            except KeyboardInterrupt:
                self.control.stop(INTERRUPT)
        for process in workers:
            process.join()
        self.merge([replies[i] for i in range(len(pipes))], forked_transitions)

    def failed(self, index: int, workers: list) -> None:
        """Worker `index` ended without its results: stop the others and fail (exit 3)."""
        self.control.barrier.abort()
        self.control.stop(INTERRUPT)
        for process in workers:
            process.join(5)
            if process.exitcode is None:
                process.kill()
        raise WorkerFailed(f"explore worker {index} ended without its results (exit code {workers[index].exitcode})")

    def merge(self, replies: list[dict], forked_transitions: int) -> None:
        result = self.result
        result.states = self.table.count
        result.transitions = forked_transitions + sum(r["transitions"] for r in replies)
        result.depth = max(r["depth"] for r in replies)
        result.queue = sum(r["queue"] for r in replies)
        found = [f for r in replies for f in r["found"]]
        result.found = [Found(*found[0])] if found else []
        code = self.control.code
        result.complete = code == GO
        result.cut_by = _CUTS.get(code)
        memo = result.local_steps
        if memo is not None:
            for r in replies:
                hits, misses, bypassed, _ = r["memo"]
                memo.hits, memo.misses, memo.bypassed = memo.hits + hits, memo.misses + misses, memo.bypassed + bypassed
            memo.elsewhere = sum(r["memo"][3] for r in replies)
        for r in replies:
            declared.current_tally().update(Counter(r["tally"]))
        if code == INTERRUPT:
            raise KeyboardInterrupt


class WorkerFailed(EngineError):
    """A worker of `--jobs` ended without its results (it crashed, or was killed): exit 3."""
