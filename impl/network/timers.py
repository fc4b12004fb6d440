"""The timers the network sets, as data (spec/05-network.md DEF-NET-2): for
a broker (`out.timer`), for what the brokers share (`out.shared_timer`) and
for the network itself (the second half of a swap with a gap). Each says
what it does and is run with the network it fires in (`run(net)`), so a
forked network shares its pending timers with the network it was forked
from (`sim.Network.fork`). Each also says what of it matters for a state's
identity (`canonical_state`, `subsum explore`'s fingerprint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from subsum.impl.network.actor import Out

if TYPE_CHECKING:
    from subsum.impl.network.host import BrokerHost


class NetworkTimer:
    """A timer the network set: `run(net)` when it fires."""

    __slots__ = ()

    def run(self, net: BrokerHost) -> None:
        raise NotImplementedError

    def canonical_state(self) -> tuple:
        raise NotImplementedError


class BrokerTimer(NetworkTimer):
    """A broker's timer: `method(*args, out)` on broker `bid`, if the broker alive then is the one that set it
    (`incarnation`: a broker that joins later may get a crashed one's id), and if it was not taken back."""

    __slots__ = ("bid", "incarnation", "method", "args", "tid")

    def __init__(self, bid: int, incarnation: int, method: str, args: tuple) -> None:
        self.bid, self.incarnation, self.method, self.args = bid, incarnation, method, args
        self.tid = 0  # the transport's id for it, once set

    def run(self, net: BrokerHost) -> None:
        key = (self.bid, self.method, self.args)
        if net.broker_timers.get(key) == self.tid:
            del net.broker_timers[key]
            if self.bid in net.brokers and net.incarnation[self.bid] == self.incarnation:
                net.notify(self.bid, self.method, *self.args)

    def canonical_state(self) -> tuple:
        return (self.bid, self.method, self.args)


class SharedTimer(NetworkTimer):
    """A timer of what the brokers share: `shared.method(*args, out)`, its out-buffer applied."""

    __slots__ = ("method", "args")

    def __init__(self, method: str, args: tuple) -> None:
        self.method, self.args = method, args

    def run(self, net: BrokerHost) -> None:
        out = Out(None, net)
        getattr(net.shared, self.method)(*self.args, out)
        net.apply(out)

    def canonical_state(self) -> tuple:
        return ("shared", self.method, self.args)


class NetworkCall(NetworkTimer):
    """The network's own timer: `net.method(*args)` (the second half of a swap with a gap).

    >>> class Net:
    ...     def ring(self, n): print("rang", n)
    >>> NetworkCall("ring", (1,)).run(Net())
    rang 1
    """

    __slots__ = ("method", "args")

    def __init__(self, method: str, args: tuple) -> None:
        self.method, self.args = method, args

    def run(self, net) -> None:
        getattr(net, self.method)(*self.args)

    def canonical_state(self) -> tuple:
        return ("network", self.method, self.args)
