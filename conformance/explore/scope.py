"""A scope of `subsum explore` (spec/12-exploration.md DEF-EXP-1): the
protocol, the brokers and their links, and the client operations that may
happen: S subscriptions (each may later be unsubscribed), E publications,
K link swaps and, under the caching protocol, R requests.

One client hangs off each broker. Subscription i is made by the client of
broker i mod N, to the filter `FILTERS[(i div N) mod 3]`: the first N
subscriptions share one filter, so that the second- and last-subscriber
rules run. Every publication is `{"x": 1}`, which each of those filters
matches, from the client of the last broker. Request k is made by the
client of subscription k mod S, for that subscription's filter, while it
holds it (DEF-EXP-10).
"""

from __future__ import annotations

import attrs
import networkx as nx

from subsum.conformance.schedules.families import family_of
from subsum.core.errors import SubsumError
from subsum.impl.network import CLIENT_BASE, TOPOLOGIES, generate
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT

#: The filters of a scope's subscriptions, in the order they are handed out (see the module's docstring).
FILTERS = ("x > 0", "x = 1", "x < 2")
#: What every publication carries.
EVENT = {"x": 1}
#: The links deliver at once: the clock moves only when a timer fires (DEF-EXP-2).
DELAY = (0.0, 0.0)
#: The seed of a scope's network (no draw depends on it: the delays are 0).
SEED = 0


@attrs.frozen
class Scope:
    """What one exploration covers (DEF-EXP-1)."""

    protocol: str
    brokers: int
    subscriptions: int
    events: int = 0
    swaps: int = 0
    topology: str = "path"
    unsubscribe: bool = True
    defer_timeout: float = DEFER_TIMEOUT
    sub_timeout: float = SUB_TIMEOUT
    #: How many times along one path a timer may fire while messages are in flight (None: any number; DEF-EXP-2).
    #: Unless given, the family's: unbounded for forwarding and Siena, whose timers never re-arm themselves;
    #: 1 for summaries, whose round timer re-arms every period while a round is unfinished.
    overruns: int | None = attrs.field(default=attrs.Factory(lambda self: family_of(self.protocol).overruns, takes_self=True))
    #: Requests R (the caching protocol, DEF-EXP-10): request k by subscription (k mod S)'s client, for its filter
    requests: int = 0

    def __attrs_post_init__(self) -> None:
        family = family_of(self.protocol)
        if self.swaps and not family.churn:
            raise SubsumError(f"--swaps {self.swaps}: the {family.name} family runs on a fixed overlay (protocol {self.protocol!r})")
        if self.topology not in TOPOLOGIES:
            raise SubsumError(f"topology {self.topology!r} is not one of {', '.join(TOPOLOGIES)}")
        if not 1 <= self.brokers <= 8:
            raise SubsumError(f"--brokers {self.brokers}: a scope has 1 to 8 brokers (exhaustive search grows exponentially)")
        if not 0 <= self.subscriptions <= len(FILTERS) * self.brokers:
            raise SubsumError(f"--subscriptions {self.subscriptions}: {self.brokers} brokers hold 0 to "
                              f"{len(FILTERS) * self.brokers} distinct (client, filter) pairs")
        if self.overruns is not None and self.overruns < 0:
            raise SubsumError(f"--overruns {self.overruns}: must be >= 0")
        if self.events < 0 or self.swaps < 0 or self.requests < 0:
            raise SubsumError("--events, --swaps and --requests must be >= 0")
        if self.requests and family.name != "caching":
            raise SubsumError(f"--requests {self.requests}: only the caching protocol answers requests (protocol {self.protocol!r})")
        if self.requests and not self.subscriptions:
            raise SubsumError(f"--requests {self.requests}: a request is made by a subscription's client, and there is none")
        if self.swaps and self.brokers < 3:
            raise SubsumError(f"--swaps {self.swaps}: a swap needs 3 brokers or more (the new link must differ from the old)")

    def network(self) -> dict:
        """The topology as a schedule replay holds it: brokers, links, one client per broker."""
        links = generate(self.topology, self.brokers, SEED)
        return {"kind": self.topology, "brokers": self.brokers, "links": [list(e) for e in links], "clients": [1] * self.brokers}

    def subscription(self, i: int) -> tuple[int, str]:
        """Subscription i: (its client, its filter's text)."""
        return CLIENT_BASE + i % self.brokers, FILTERS[(i // self.brokers) % len(FILTERS)]

    def publisher(self) -> int:
        return CLIENT_BASE + self.brokers - 1

    def symmetries(self) -> list[dict[int, int]]:
        """The broker permutations other than the identity that map the scope
        onto itself (spec/12, "Symmetry"): automorphisms of the tree that carry
        each broker's subscriptions (their filters) to the same at its image,
        and fix the publisher when the scope publishes."""
        graph = nx.Graph()
        graph.add_nodes_from(range(self.brokers))
        graph.add_edges_from(tuple(e) for e in self.network()["links"])
        held = {b: sorted(self.subscription(i)[1] for i in range(self.subscriptions) if i % self.brokers == b) for b in range(self.brokers)}
        found = []
        for mapping in nx.algorithms.isomorphism.GraphMatcher(graph, graph).isomorphisms_iter():
            if all(mapping[b] == b for b in mapping):
                continue
            if all(held[b] == held[mapping[b]] for b in mapping) and (not self.events or mapping[self.brokers - 1] == self.brokers - 1):
                found.append(dict(mapping))
        return found

    def describe(self) -> dict:
        """The scope as the JSON report names it."""
        return {"brokers": self.brokers, "subscriptions": self.subscriptions, "events": self.events, "swaps": self.swaps,
                "requests": self.requests,
                "topology": self.topology, "unsubscribe": self.unsubscribe, "defer_timeout": self.defer_timeout,
                "sub_timeout": self.sub_timeout, "overruns": self.overruns, "symmetries": len(self.symmetries())}
