"""The timers the network sets for its brokers and for what they share
(spec/05-network.md DEF-NET-2): each is what the transport calls when it
fires, and says what it does (`describe`) and what of it matters for a
state's identity (`canonical_state`, `subsum explore`'s fingerprint), without
the objects it reaches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from subsum.impl.network.actor import Out

if TYPE_CHECKING:
    from subsum.impl.network.host import BrokerHost


class BrokerTimer:
    """A broker's timer as the transport holds it: `method(*args, out)` on broker `bid`, if the broker alive then is
    the one that set it (`incarnation`: a broker that joins later may get a crashed one's id)."""

    __slots__ = ("net", "bid", "incarnation", "method", "args", "tid")

    def __init__(self, net: BrokerHost, bid: int, incarnation: int, method: str, args: tuple) -> None:
        self.net, self.bid, self.incarnation, self.method, self.args = net, bid, incarnation, method, args
        self.tid = 0  # the transport's id for it, once set

    def __call__(self) -> None:
        net, key = self.net, (self.bid, self.method, self.args)
        if net.broker_timers.get(key) == self.tid:
            del net.broker_timers[key]
            if self.bid in net.brokers and net.incarnation[self.bid] == self.incarnation:
                net.notify(self.bid, self.method, *self.args)

    def describe(self) -> tuple:
        """(the broker's id, the method's name, the arguments): what the timer does."""
        return (self.bid, self.method, self.args)

    def canonical_state(self) -> tuple:
        return (self.bid, self.method, self.args)


class SharedTimer:
    """A timer of what the brokers share (`out.shared_timer`): `shared.method(*args, out)`, its out-buffer applied."""

    __slots__ = ("net", "method", "args")

    def __init__(self, net: BrokerHost, method: str, args: tuple) -> None:
        self.net, self.method, self.args = net, method, args

    def __call__(self) -> None:
        out = Out(None, self.net)
        getattr(self.net.shared, self.method)(*self.args, out)
        self.net.apply(out)

    def describe(self) -> tuple:
        return (None, self.method, self.args)

    def canonical_state(self) -> tuple:
        return ("shared", self.method, self.args)
