"""The broker network (seeds 000, 002, 003, 004; spec/05-network.md,
spec/06-reconfiguration.md): a deterministic discrete-event simulator that
hosts broker protocols.

The simulator:

- `overlay`: the broker forest, churn and LSTree repair;
- `transport`: FIFO links, timers, the out-of-band channel, the event loop;
- `accounting`: counters, deliveries, crossings and the trace;
- `protocol`: the broker base class, dispatch by message kind, the registry;
- `messages`: the records brokers send one another;
- `sim`: the `Network` that ties them together;
- `topology`: topology generators and edge-list files;
- `trace`: the trace file.

On top of it, `protocols/` (one module per protocol family, registered by
name) and `workloads/` (the seeded runs `subsum simulate` and the
benchmarks use, with their reports).

It never imports `subsum.model`; `subsum.conformance.checks.network.forwarding` checks it
against the model's ideal routing state.
"""

from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import PROTOCOLS, Broker, broker_class_for, handles, register
from subsum.impl.network.protocols import CachingBroker, SienaBroker, StrawmanBroker, SummaryBroker, forwarding_protocols, is_forwarding
from subsum.impl.network.sim import Network, build
from subsum.impl.network.topology import TOPOLOGIES, TopologyError, generate, read_edgelist
from subsum.impl.network.transport import CLIENT_BASE

__all__ = ["CachingBroker", "CLIENT_BASE", "PROTOCOLS", "Broker", "Network", "NetworkError", "SienaBroker", "StrawmanBroker",
           "SummaryBroker", "TOPOLOGIES", "TopologyError", "broker_class_for", "build", "forwarding_protocols", "generate",
           "handles", "is_forwarding", "read_edgelist", "register"]
