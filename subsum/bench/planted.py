"""Planted handler bugs, each a broker subclass that plugs in like a user's
protocol (`--protocol subsum.bench.planted:NAME`, spec/11-plugins.md): the
cases `subsum bench explore` gives `subsum explore` and `subsum fuzz
reconfig` alike. Each breaks one rule of the seeds' protocols, and only on
an order of messages the other rules leave open."""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network import CLIENT_BASE, CachingBroker, StrawmanBroker
from subsum.impl.network.actor import Out
from subsum.impl.caching import make_cache
from subsum.impl.network.protocols.caching import CacheRequest
from subsum.impl.network.protocols.informed import InformedBroker


class ForgetfulStrawman(StrawmanBroker):
    """Strawman that forgets DEF-NET-6's last rule: when one broker
    neighbor alone still subscribes f, it is not sent the UNSUB, so it
    keeps routing f's events here (CLM-NET-6)."""

    __slots__ = ()

    def process_unsub_from(self, n: int, f: Subscription, out: Out) -> None:
        if not self.drop_entry(n, f, out):
            for m in self.neighbors:
                if m != n and m < CLIENT_BASE:
                    out.send(m, "UNSUB", f)


class HastyInformed(InformedBroker):
    """Informed link activation whose subscription timer sends a held-back
    filter to n when anyone subscribes it, n itself included, rather than
    only when another neighbor does (CLM-RCF-7)."""

    __slots__ = ()

    def sub_timer_expired(self, rid: int, out: Out) -> None:
        n, tagged = self.tagged.pop(rid)
        if n not in self.neighbors:
            return
        for f in tagged:
            if self.table.get(f):
                out.send(n, "SUB", f)


class RelayingCache(CachingBroker):
    """The caching protocol whose broker answers a request from its cache only for its own clients: a request relayed
    from a neighbor broker is passed on, never answered here, so a publication held only at a remote broker is
    never recovered (CLM-CACHE-9). Not in `PLANTED`: the fuzzer does not run the caching protocol; `subsum explore
    --protocol subsum.bench.planted:RelayingCache --requests 1` finds it (spec/12 DEF-EXP-10)."""

    __slots__ = ()

    def request_received(self, x: int, request: CacheRequest, out: Out) -> None:
        if x < CLIENT_BASE:
            held, self.cache = self.cache, make_cache("lru", None)  # nothing held, for this request
            try:
                super().request_received(x, request, out)
            finally:
                self.cache = held
            return
        super().request_received(x, request, out)


#: The planted bugs `subsum bench explore` runs: name -> (the protocol it plugs into, what it breaks).
PLANTED = {
    "ForgetfulStrawman": ("strawman", "CLM-NET-6"),
    "HastyInformed": ("informed", "CLM-RCF-7"),
}


def plugin(name: str) -> str:
    """The `--protocol` value of a planted bug."""
    return f"{__name__}:{name}"
