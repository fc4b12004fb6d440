"""The broker protocols the simulator hosts (spec/05, 06, 08, 09, 10), each a
`Broker` subclass registered by name when its module is imported:

- `forwarding`: subscription forwarding with Strawman reconfiguration ("strawman");
- `deferred`, `informed`: the optimized successors ("timed", "notified", "informed");
- `summaries`: summary-based routing ("summaries");
- `siena` (with `covering`): Siena's covering forwarding ("siena", "siena-nocover");
- `baselines`: the thesis's baselines ("broadcast", "flooding");
- `caching`: broker caches with request/response ("caching");
- `client_server`: the client-server request policies ("client-server").
"""

from subsum.impl.network.protocol import PROTOCOLS, Broker
from subsum.impl.network.protocols import baselines, client_server, deferred, informed  # noqa: F401  (register their protocols)
from subsum.impl.network.protocols.caching import CachingBroker
from subsum.impl.network.protocols.forwarding import StrawmanBroker
from subsum.impl.network.protocols.siena import SienaBroker
from subsum.impl.network.protocols.summaries.broker import SummaryBroker


def is_forwarding(cls: type[Broker]) -> bool:
    """Whether brokers of `cls` are of the subscription-forwarding family
    (seed 002): Strawman and its successors, whose steps the model
    describes. Siena's covering steps (spec/08, DEF-SR-6) are not the
    model's plain handlers, so the Siena protocols are not of the family;
    nor is the caching protocol, which adds requests and caches to Strawman's:
    each class names its family (`Broker.family`)."""
    return getattr(cls, "family", None) == "forwarding"


def forwarding_protocols() -> tuple[str, ...]:
    """The registered protocols of the subscription-forwarding family (`is_forwarding`)."""
    return tuple(name for name, cls in PROTOCOLS.items() if is_forwarding(cls))


__all__ = ["CachingBroker", "SienaBroker", "StrawmanBroker", "SummaryBroker", "forwarding_protocols", "is_forwarding"]
