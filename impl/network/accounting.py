"""What the simulator counts and records (spec/05-network.md, DEF-NET-2,
DEF-NET-9): messages sent, handled and dropped by kind, deliveries of each
published event per client, the broker links each event crossed, the
timers brokers started, and the optional trace.

The transport and the network write here; checks and benchmarks read.
"""

from __future__ import annotations

from collections import Counter


class Ledger:
    """Counters and records of one simulation."""

    def __init__(self, trace: bool = False, record_crossings: bool = True) -> None:
        self.sent: Counter = Counter()  # messages sent, by kind
        self.handled: Counter = Counter()  # messages delivered to a broker and handled, by kind
        self.dropped: Counter = Counter()  # messages lost in flight (a broken link, a gone receiver), by kind
        self.violations: Counter = Counter()  # never expected: a control message addressed to a client
        self.deliveries: dict[int, Counter] = {}  # event id -> client -> copies received
        self.record_crossings = record_crossings  # off in throughput runs: the lists cost memory
        self.crossings: dict[int, list[tuple[int, int]]] = {}  # event id -> broker links crossed, in order
        self.overlay_hops: Counter = Counter()  # by kind: overlay links an out-of-band message would cross
        self.payload_bytes: Counter = Counter()  # by kind: measured bytes of the messages a protocol sizes
        self.timers_started: Counter = Counter()  # broker -> deferred-unsubscription timers it started
        self.trace: list[dict] | None = [] if trace else None

    def published(self, eid: int) -> None:
        """A new event: nobody has it yet and it crossed no link."""
        self.deliveries[eid] = Counter()
        self.crossings[eid] = []

    def record(self, now: float, kind: str, **fields) -> None:
        """Append a trace record (DEF-NET-9), if tracing."""
        if self.trace is not None:
            self.trace.append({"time": now, "kind": kind, **fields})
