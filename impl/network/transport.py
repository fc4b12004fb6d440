"""The transport (DEF-NET-2, spec/05-network.md): FIFO links, timers, an
out-of-band channel, and the one event loop.

- Every directed broker link (src, dst) is a FIFO queue. A message sent at
  time t arrives at max(t + delay, the previous arrival on that link), the
  delay drawn from a seeded generator. Closing a link drops what is in
  flight on it (counted in `Ledger.dropped`).
- An out-of-band channel (src, dst, "oob") is a FIFO queue of its own with
  the same delays, for messages that do not travel over the tree (REDS
  sends ACTIVATE over UDP). It needs no link; a message to a node that is
  gone when it is sent is dropped.
- A message to a client is not queued. An EVENT is delivered (counted in
  `Ledger.deliveries`, and traced); for any other kind `to_client(src,
  client, kind, payload)` decides what it means (the network counts a
  violation).
- Timers run a callback at a simulated time. One heap orders the links and
  the timers: it holds one entry per non-empty link, keyed by the (arrival,
  sequence number) of its head message, and one per live timer. `run` pops
  the earliest and hands a link's head message to `deliver(src, dst, kind,
  payload)`, or runs the timer. A link's later messages wait in its queue, not
  in the heap: there is never an entry for a message that was dropped or
  already delivered, nor for a timer that was cancelled or has fired (those
  take their entry out of the heap).
- A test's scheduler may instead pick the order (`ChosenOrder`):
  `deliver_from(link)`, `fire(timer)` (any timer, now), `fire_next()` (the
  earliest, at its time), `drop_head(link)`.

Sending: `send_many` sends any message to any targets; its two commonest
cases are written apart, `send` (one message over a tree link) and `route`
(a routed publication, the simulator's hottest loop). The FIFO rule is
`_enqueue`, which `route` writes out in its loop. The event loop is one
loop (`run`).
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from typing import Any, Callable

from subsum.core import collector
from subsum.impl.network.accounting import Ledger

CLIENT_BASE = 1_000_000  # node ids from here up are clients; below, brokers

Link = tuple  # (src, dst) or (src, dst, "oob")
Handler = Callable[[int, int, str, object], None]
#: What a timer runs: a callable, or anything the `run_timer` the transport was given knows how to run
Timer = Any


class ChosenOrder:
    """What a test's scheduler may do instead of `Transport.run` (DEF-NET-2: the head of a link the test chooses):
    see what is pending, deliver or lose a link's head, fire any timer; and the heap kept true meanwhile."""

    now: float
    ledger: Ledger
    links: dict[Link, deque]
    _heap: list
    _timers: dict[int, tuple[float, Timer]]
    deliver: Handler
    run_timer: Callable[[Timer], None]

    def pending_timers(self) -> list[int]:
        """The live timers' ids, in firing order."""
        if not self._timers:
            return []
        return sorted(self._timers, key=lambda tid: (self._timers[tid][0], tid))

    def timer(self, timer: int) -> tuple[float, Timer]:
        """A live timer's (time, callback)."""
        return self._timers[timer]

    def fire(self, timer: int) -> None:
        """Fire one timer now, whatever its time (a test's scheduler: any timeout)."""
        t, callback = self._timers.pop(timer)
        self._unschedule((t, timer, None))
        self.run_timer(callback)

    def fire_next(self) -> None:
        """Fire the earliest live timer, the clock moving on to its time (a
        scheduler that keeps timer order: `subsum explore`'s timeout)."""
        timer = self.pending_timers()[0]
        self.now = max(self.now, self._timers[timer][0])
        self.fire(timer)

    def pending_links(self) -> list[Link]:
        """The links with messages in flight, sorted."""
        return sorted(link for link, queue in self.links.items() if queue)

    def deliver_from(self, link: Link) -> None:
        """Deliver the head message of one link now, whatever its time."""
        kind, payload = self.take_head(link)
        self.deliver(link[0], link[1], kind, payload)

    def take_head(self, link: Link) -> tuple[str, object]:
        """Take the head message of one link out of it now, whatever its time, the clock moving on to its arrival
        if that is later; returns (kind, payload), for the caller to hand on (`deliver_from`, or a checker that
        knows what the receiver's handler will do: `subsum explore`'s memo)."""
        t, _, kind, payload = self._take_head(link)
        self.now = max(self.now, t)
        return kind, payload

    def _take_head(self, link: Link) -> tuple:
        """Take a link's head message out of its queue, whatever its time, the heap following (a scheduler's pick)."""
        queue = self.links[link]
        head = queue.popleft()
        self._unschedule((head[0], head[1], link))
        if queue:
            heapq.heappush(self._heap, (queue[0][0], queue[0][1], link))
        return head

    def head(self, link: Link) -> tuple[str, object]:
        """The head message of a link, (kind, payload)."""
        _, _, kind, payload = self.links[link][0]
        return kind, payload

    def drop_head(self, link: Link) -> tuple[str, object]:
        """Lose the head message of a link (a test's scheduler: a lost FLUSH); returns (kind, payload)."""
        _, _, kind, payload = self._take_head(link)
        self.ledger.dropped[kind] += 1
        return kind, payload

    def quiescent(self) -> bool:
        return not self._timers and not any(self.links.values())

    def _unschedule(self, entry: tuple) -> None:
        """Take one entry out of the heap (a closed link, a link whose head a scheduler took, a timer cancelled or
        fired out of order): O(heap), and rare next to the loop's pops."""
        heap = self._heap
        heap.remove(entry)
        heapq.heapify(heap)


class Transport(ChosenOrder):
    """Links, timers and the scheduler of one simulation."""

    def __init__(self, seed: int, delay: tuple[float, float], ledger: Ledger, deliver: Handler, to_client: Handler,
                 alive: Callable[[int], bool], run_timer: Callable[[Timer], None] = lambda callback: callback()) -> None:
        self.now = 0.0
        self.delay = delay
        self._low, self._span = delay[0], delay[1] - delay[0]
        self._random = random.Random(seed).random  # link delays
        self.ledger = ledger
        self.deliver = deliver  # looked up at each run(): a test may wrap it
        self.to_client = to_client
        self.alive = alive
        self.run_timer = run_timer  # how a timer's callback is run (the network runs its own timers with itself)
        self.links: dict[Link, deque] = {}  # link -> FIFO of (arrival, seq, kind, payload)
        #: (arrival, seq, link) of each non-empty link's head message; (time, timer id, None) of each live timer
        self._heap: list[tuple[float, int, Link | None]] = []
        self._seq = 0
        self._timers: dict[int, tuple[float, Timer]] = {}  # live timer id -> (time, callback)

    def fork(self, ledger: Ledger, deliver: Handler, to_client: Handler, alive: Callable[[int], bool],
             run_timer: Callable[[Timer], None], share_random: bool = False) -> Transport:
        """A copy for a forked network (`sim.Network.fork`), whose later sends, deliveries and timers leave this one
        as it is: the queues, the heap and the timer table copied (the messages and the timers themselves are
        values, shared). `share_random`: the copy draws its link delays from this one's generator, not a copy of
        it (for a caller to whom the delays do not matter; a copy of its state costs more than the rest)."""
        forked = Transport.__new__(Transport)
        forked.now, forked.delay, forked._seq = self.now, self.delay, self._seq
        forked._low, forked._span = self._low, self._span
        if share_random:
            forked._random = self._random
        else:
            rng = random.Random()
            rng.setstate(self._random.__self__.getstate())  # type: ignore[attr-defined]
            forked._random = rng.random
        forked.ledger, forked.deliver, forked.to_client, forked.alive, forked.run_timer = ledger, deliver, to_client, alive, run_timer
        forked.links = {link: deque(queue) for link, queue in self.links.items()}
        forked._heap = list(self._heap)
        forked._timers = dict(self._timers)
        return forked

    # --- links ---------------------------------------------------------------------------
    def open(self, a: int, b: int) -> None:
        """Open both directions of the link (a, b), dropping leftovers of an earlier link between them."""
        for direction in ((a, b), (b, a)):
            self.close(direction)
            self.links[direction] = deque()

    def close(self, link: Link) -> None:
        """Close one direction (or channel); what was in flight on it is dropped."""
        queue = self.links.pop(link, None)
        if queue:
            self._unschedule((queue[0][0], queue[0][1], link))
            dropped = self.ledger.dropped
            for _, _, kind, _ in queue:
                dropped[kind] += 1

    # --- sending -------------------------------------------------------------------------
    def route(self, src: int, targets, publication) -> None:
        """A publication (a `messages.Publication`) from broker src to each target over the tree: into the link
        (src, dst) for a broker, delivered at once to a client (counted and traced, DEF-NET-4). What `send_many`
        does for an EVENT, written apart because it is the simulator's hottest path (`actor.Out.route_event`)."""
        links, heap, rnd = self.links, self._heap, self._random
        low, span = self._low, self._span
        now, seq, copies = self.now, self._seq, None
        for dst in targets:
            if dst >= CLIENT_BASE:  # as `delivered` does, once per client
                if copies is None:
                    copies, trace = self.ledger.deliveries[publication.eid], self.ledger.trace
                copies[dst] = copies.get(dst, 0) + 1
                if trace is not None:
                    trace.append({"time": now, "kind": "deliver", "client": dst, "broker": src, "event": publication.eid})
                continue
            link = (src, dst)
            queue = links[link]
            t = now + (low + span * rnd())  # as `_enqueue`, written out: the simulator's hottest loop
            seq += 1
            if queue:  # the link is in the heap already, by its head
                if queue[-1][0] > t:
                    t = queue[-1][0]  # FIFO: never overtake the previous message on this link
                queue.append((t, seq, "EVENT", publication))
            else:
                queue.append((t, seq, "EVENT", publication))
                heapq.heappush(heap, (t, seq, link))
        sent = seq - self._seq
        self._seq = seq
        if sent:
            self.ledger.sent["EVENT"] += sent
            if self.ledger.record_crossings:
                self.ledger.crossings[publication.eid].extend((src, dst) for dst in targets if dst < CLIENT_BASE)

    def delivered(self, src: int, client: int, publication) -> None:
        """Broker src hands a publication to its client: a delivery (DEF-NET-4), counted and traced."""
        copies = self.ledger.deliveries[publication.eid]
        copies[client] = copies.get(client, 0) + 1
        if self.ledger.trace is not None:
            self.ledger.trace.append({"time": self.now, "kind": "deliver", "client": client, "broker": src, "event": publication.eid})

    def send_many(self, src: int, targets, kind: str, payload, channel: str | None = None) -> None:
        """Send one message to each target: a broker's into the link (src,
        dst), or with `channel` into the out-of-band queue (src, dst,
        channel); a client gets an EVENT at once (a delivery, counted and
        traced) and any other kind through `to_client`."""
        sent = 0
        for dst in targets:
            if dst >= CLIENT_BASE:
                if kind == "EVENT":  # its payload a `messages.Publication`
                    self.delivered(src, dst, payload)
                else:
                    self.to_client(src, dst, kind, payload)
                continue
            sent += 1
            if channel is None:
                link: Link = (src, dst)
                queue = self.links[link]
            elif self.alive(dst):
                link = (src, dst, channel)
                queue = self.links.setdefault(link, deque())
            else:
                self.ledger.dropped[kind] += 1
                continue
            self._enqueue(link, queue, kind, payload)
        if sent:
            self.ledger.sent[kind] += sent
            if kind == "EVENT" and self.ledger.record_crossings:
                self.ledger.crossings[payload.eid].extend((src, dst) for dst in targets if dst < CLIENT_BASE)

    def send(self, src: int, dst: int, kind: str, payload) -> None:
        """One message over the tree link (src, dst): `send_many`'s commonest case (`actor.Out.send`)."""
        if dst >= CLIENT_BASE or kind == "EVENT":
            self.send_many(src, (dst,), kind, payload)
            return
        link = (src, dst)
        self._enqueue(link, self.links[link], kind, payload)
        self.ledger.sent[kind] += 1

    def _enqueue(self, link: Link, queue: deque, kind: str, payload) -> None:
        """Put a message on a link (DEF-NET-2): it arrives at max(now + a drawn delay, the previous arrival on the
        link), and the link joins the heap if it was empty. `route` does the same, written out in its loop."""
        t = self.now + (self._low + self._span * self._random())
        self._seq = seq = self._seq + 1
        if queue:  # the link is in the heap already, by its head
            if queue[-1][0] > t:
                t = queue[-1][0]  # FIFO: never overtake the previous message on this link
            queue.append((t, seq, kind, payload))
        else:
            queue.append((t, seq, kind, payload))
            heapq.heappush(self._heap, (t, seq, link))

    # --- timers --------------------------------------------------------------------------
    def at(self, t: float, callback: Timer) -> int:
        """Run `callback` at simulated time t; returns the timer's id."""
        self._seq += 1
        self._timers[self._seq] = (t, callback)
        heapq.heappush(self._heap, (t, self._seq, None))
        return self._seq

    def cancel(self, timer: int) -> None:
        """Cancel a timer (nothing if it already fired or was cancelled)."""
        entry = self._timers.pop(timer, None)
        if entry is not None:
            self._unschedule((entry[0], timer, None))

    # --- the event loop ------------------------------------------------------------------
    def run(self, max_steps: int | None = None) -> int:
        """Deliver messages and fire timers in (time, sequence) order until
        nothing is left or `max_steps` were taken; returns the steps taken.
        The cyclic garbage collector is paused meanwhile (subsum.core.collector:
        with a large network alive, its passes cost a fifth of the loop's time)."""
        with collector.paused():
            return self._loop(max_steps)

    def step(self) -> bool:
        """Deliver the earliest message or fire the earliest timer; False when nothing is left."""
        return self.run(1) == 1

    def _loop(self, max_steps: int | None) -> int:
        heap, links, pop, replace = self._heap, self.links, heapq.heappop, heapq.heapreplace
        timers, deliver, run_timer = self._timers, self.deliver, self.run_timer
        limit = -1 if max_steps is None else max_steps
        steps = 0
        while heap and steps != limit:
            t, seq, link = heap[0]
            if t > self.now:
                self.now = t
            if link is None:
                pop(heap)
                run_timer(timers.pop(seq)[1])
            else:
                queue = links[link]
                _, _, kind, payload = queue.popleft()
                if queue:  # the link stays in the heap, by its next message
                    head = queue[0]
                    replace(heap, (head[0], head[1], link))
                else:
                    pop(heap)
                deliver(link[0], link[1], kind, payload)
            steps += 1
        return steps
