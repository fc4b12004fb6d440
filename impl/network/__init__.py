"""The broker network (seeds 002, and the protocols to come; spec/05-network.md,
spec/06-reconfiguration.md): a deterministic discrete-event simulator that
hosts broker protocols.

- `overlay`: the broker forest, churn and LSTree repair;
- `transport`: FIFO links, timers, the out-of-band channel, the event loop;
- `accounting`: counters, deliveries, crossings and the trace;
- `protocol`: the broker base class, dispatch by message kind, the registry;
- `forwarding`: subscription forwarding with Strawman reconfiguration;
- `protocols`: timed and notified deferred unsubscriptions, informed link activation;
- `summary_plan`, `summaries`: summary-based routing (seed 000 §4.3);
- `baselines`: the thesis's baselines, broadcast subscriptions and flooded events;
- `siena`, `covering`: Siena's covering forwarding, the baseline of seed 000 ch. 5 (spec/08);
- `caching`, `cache_workload`: broker caches with request/response (seeds 003, 004; spec/09) and their workload;
- `client_server`: the client-server request policies over the broker tree (seed 003 §4; spec/10);
- `sim`: the `Network` that ties them together;
- `topology`: topology generators and edge-list files;
- `trace`: the trace file.

It never imports `subsum.model`; `subsum.conformance.network` checks it
against the model's ideal routing state.
"""

from subsum.impl.network import baselines, protocols, summaries  # noqa: F401  (register their protocols)
from subsum.impl.network.siena import SienaBroker  # registers siena, siena-nocover
from subsum.impl.network.caching import CachingBroker  # registers caching
from subsum.impl.network import client_server  # noqa: F401  (registers client-server)
from subsum.impl.network.forwarding import StrawmanBroker
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import PROTOCOLS, Broker, broker_class_for, handles, register
from subsum.impl.network.sim import Network, build
from subsum.impl.network.topology import TOPOLOGIES, TopologyError, generate, read_edgelist
from subsum.impl.network.transport import CLIENT_BASE



def is_forwarding(cls: type[Broker]) -> bool:
    """Whether brokers of `cls` are of the subscription-forwarding family
    (seed 002): Strawman and its successors, whose steps the model
    describes. Siena's covering steps (spec/08, DEF-SR-6) are not the
    model's plain handlers, so the Siena protocols are not of the family;
    nor is the caching protocol, which adds requests and caches to Strawman's."""
    return issubclass(cls, StrawmanBroker) and not issubclass(cls, (SienaBroker, CachingBroker))


def forwarding_protocols() -> tuple[str, ...]:
    """The registered protocols of the subscription-forwarding family (`is_forwarding`)."""
    return tuple(name for name, cls in PROTOCOLS.items() if is_forwarding(cls))


__all__ = ["CachingBroker", "CLIENT_BASE", "PROTOCOLS", "Broker", "Network", "NetworkError", "SienaBroker", "StrawmanBroker", "TOPOLOGIES",
           "TopologyError", "broker_class_for", "build", "forwarding_protocols", "generate", "handles", "is_forwarding", "read_edgelist",
           "register"]
