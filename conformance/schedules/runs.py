"""Schedules of the broker simulator: what `subsum fuzz reconfig` draws and
`subsum replay` runs again (spec/05-network.md, DEF-NET-8).

A schedule is an explicit list of operations (JSON objects): client
subscribe, unsubscribe and publish; `deliver` with the links chosen, in
order; `fire` a timer (any, now); `timeout` (the earliest timer fires, at
its time); `lose-flush`; overlay swap, break, add, crash,
leave and join; quiesce. Seeded generators draw schedules
(`draw_schedule`, `next_operation`); `execute` runs one on the simulator
with every broker checked against the model's handlers (CLM-NET-6) and
the CLM-NET checks after every operation, and returns the first
violation. Because a schedule holds every choice, it runs the same way
whatever the generator does in later versions: the fuzzer saves a
violating one as a replay file (`subsum.conformance.replays`).
"""

from __future__ import annotations

import functools
import random
from typing import Sequence

import attrs

from subsum.conformance.schedules.declared import Checks
from subsum.conformance.schedules.families import family_of
from subsum.conformance.checks.network.forwarding import FILTERS
from subsum.conformance.checks.network.checked_brokers import checked_class
from subsum.conformance.runner.violations import CannotCheck, ClaimViolation, ProcessFailure
from subsum.core.errors import SubsumError
from subsum.core.filters import format_filter, parse_filter
from subsum.core.types import Attribute, Event, Subscription, subscription_sort_key
from subsum.impl.network import PROTOCOLS as PROTOCOL_REGISTRY
from subsum.impl.network import TOPOLOGIES, Network, build, forwarding_protocols, generate, read_edgelist
from subsum.impl.network.protocols.caching import request
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT

#: The link delay range of a schedule's network, in ms, unless its replay names another (`subsum explore`'s are 0).
DELAY = (1.0, 10.0)

#: The built-in protocols the fuzzer checks: the subscription-forwarding family,
#: whose every step the model's handlers describe (seed 002). A plug-in of
#: that family is checked too (`fuzzable`).
PROTOCOLS = forwarding_protocols()


def fuzzable(protocol: str) -> None:
    """Refuse a protocol the fuzzer cannot check, naming why (exit 2): an
    unknown name, a plug-in that cannot be loaded, or one outside the
    subscription-forwarding family. (The fuzzer draws overlay churn, and
    checks each broker step against the model's handlers: that family.)"""
    if protocol not in PROTOCOLS and protocol in PROTOCOL_REGISTRY:
        raise SubsumError(f"protocol {protocol!r} is not of the subscription-forwarding family; "
                          f"the fuzzer checks {', '.join(PROTOCOLS)}, or a plug-in of that family")
    checked_class(protocol)


def runnable(protocol: str) -> None:
    """Refuse a protocol no schedule can run under, naming why (exit 2): the
    fuzzer's, and the Siena and summaries families (`families.family_of`),
    whose schedules `subsum explore` makes."""
    family_of(protocol)


class ScheduleError(CannotCheck):
    """An operation no schedule can hold (an unknown kind): the schedule is bad, not the implementation."""


@attrs.frozen
class Violation:
    """What a schedule broke: the claim (or "crash"), the message, and the
    step (the operation's index) where it happened."""

    claim: str
    message: str
    step: int

    def where(self, operations: int) -> str:
        """Where in a schedule of `operations` operations this happened, as every report says it: operations count
        from 1, and step `operations` is the quiesce that closes every run.

        >>> Violation("CLM-NET-6", "m", 2).where(4), Violation("CLM-NET-6", "m", 4).where(4)
        ('operation 3 of 4', 'the closing quiesce (after operation 4)')
        """
        return f"operation {self.step + 1} of {operations}" if self.step < operations else f"the closing quiesce (after operation {operations})"


def filter_text(f: Subscription) -> str:
    return format_filter(f) if f.constraints else ""


@functools.lru_cache(maxsize=4096)
def filter_of(text: str) -> Subscription:
    """A schedule's filter text as a filter, parsed once (filters are immutable; a schedule names a few, many times)."""
    return parse_filter(text) if text else Subscription()


# --- generating schedules --------------------------------------------------------------------

@attrs.frozen
class Pool:
    """The filters schedules subscribe to and the attribute names their events carry: all of `FILTERS` and
    x (int), s (string), b (bool) unless a declared feature set (`conform broker --unsupported`) leaves some out."""

    filters: tuple[Subscription, ...] = FILTERS
    names: frozenset[str] = frozenset({"x", "s", "b"})


POOL = Pool()
EVENT_TYPES = {"x": "int", "s": "string", "b": "bool"}


def random_event(rng: random.Random, pool: Pool = POOL) -> dict:
    """Attributes over the names the filter pool uses, each present with probability 0.8 (and in the pool's names)."""
    values = {"x": rng.choice([-1, 0, 1, 2, 3]), "s": rng.choice(["", "a", "ab", "b", "ba"]), "b": rng.choice([True, False])}
    return {name: value for name, value in values.items() if rng.random() < 0.8 and name in pool.names}


def next_operation(rng: random.Random, net: Network, churn: float, broken: Sequence[tuple[int, int]] = (), pool: Pool = POOL) -> dict:
    """One operation drawn for the current state of `net`; `broken` lists the
    broker pairs whose link broke, latest first (candidates for a re-link)."""
    clients = sorted(net.clients)
    links = net.broker_links()
    if rng.random() < churn:
        choices = ["swap", "break", "add", "crash", "leave", "join", "relink"]
        op = rng.choice(choices)
        if op == "swap" and links:
            a, b = rng.choice(links)
            return {"op": "swap", "old": [a, b], "pick": [rng.random(), rng.random()], "lose": rng.random() < 0.5,
                    "gap": rng.choice([0.0, 0.0, 3.0])}
        if op == "relink":
            root_of = {b: min(net.overlay.component(b)) for b in net.brokers}
            pairs = [[a, b] for a, b in broken if a in root_of and b in root_of and root_of[a] != root_of[b]]
            if pairs:
                return {"op": "add", "link": rng.choice(pairs)}
        if op == "break" and links:
            return {"op": "break", "link": list(rng.choice(links)), "lose": rng.random() < 0.5}
        if op == "add":
            roots = sorted({min(net.overlay.component(b)) for b in net.brokers})
            if len(roots) > 1:
                a, b = rng.sample(roots, 2)
                return {"op": "add", "link": [a, b]}
        if op in ("crash", "leave") and len(net.brokers) > 1:
            return {"op": op, "broker": rng.choice(sorted(net.brokers)), "lose": rng.random() < 0.5}
        if op == "join" and net.brokers:
            return {"op": "join", "attach": rng.choice(sorted(net.brokers)), "clients": rng.randint(0, 2)}
    roll = rng.random()
    if roll < 0.25 and clients:
        return {"op": "subscribe", "client": rng.choice(clients), "filter": filter_text(rng.choice(pool.filters))}
    if roll < 0.35:
        holding = [c for c in clients if net.client_filters[c]]
        if holding:
            c = rng.choice(holding)
            return {"op": "unsubscribe", "client": c, "filter": filter_text(rng.choice(sorted(net.client_filters[c], key=subscription_sort_key)))}
    if roll < 0.5 and clients:
        return {"op": "publish", "client": rng.choice(clients), "attributes": random_event(rng, pool)}
    if roll < 0.9 and net.transport.pending_links():
        # which link delivers next, k times: pending[choice % len(pending)] when the executor runs it
        return {"op": "deliver", "choices": [rng.randrange(1 << 16) for _ in range(rng.randint(1, 8))]}
    if roll < 0.94 and net.transport.pending_timers():
        # a timer fires now, whatever its timeout: timers[choice % len(timers)]
        return {"op": "fire", "choice": rng.randrange(1 << 16)}
    if roll < 0.96 and any(net.transport.head(link)[0] == "FLUSH" for link in net.transport.pending_links()):
        return {"op": "lose-flush", "choice": rng.randrange(1 << 16)}
    return {"op": "quiesce"}



# --- executing schedules ------------------------------------------------------------------------

class Run:
    """One schedule on one network under one protocol, checked after every
    operation; with `checked`, every broker step is also compared with the
    model's (CLM-NET-6, CLM-RCF-4, 5, 7)."""

    def __init__(self, topology: dict, seed: int, protocol: str = "strawman", defer_timeout: float = DEFER_TIMEOUT,
                 sub_timeout: float = SUB_TIMEOUT, checked: bool = True, broker_class: type | None = None,
                 delay: tuple[float, float] = DELAY) -> None:
        self.topology = topology
        self.protocol = protocol
        self.family = family_of(protocol)
        self.checks = Checks(self.family.properties(protocol))
        if broker_class is None and checked:
            broker_class = self.family.broker_class(protocol)
        self.net = build([tuple(e) for e in topology["links"]], topology["brokers"], seed=seed, protocol=protocol,
                         broker_class=broker_class, delay=delay,
                         defer_timeout=defer_timeout, sub_timeout=sub_timeout)
        self.family.prepare(self.net)
        self.broken: list[tuple[int, int]] = []  # pairs whose link broke, latest first
        for broker, count in enumerate(topology["clients"]):
            for _ in range(count):
                self.net.add_client(broker)
        self.static = True
        self.events = 0

    def fork(self, share_random: bool = False, fresh_ledger: bool = False) -> Run:
        """A run that goes on from this one's state independently (`Network.fork`)."""
        forked = Run.__new__(Run)
        forked.__dict__.update(self.__dict__)
        forked.net = self.net.fork(share_random, fresh_ledger)
        forked.broken = list(self.broken)
        return forked

    def apply(self, op: dict) -> None:
        net, kind = self.net, op["op"]
        if kind == "subscribe":
            net.subscribe(op["client"], filter_of(op["filter"]))
        elif kind == "unsubscribe":
            net.unsubscribe(op["client"], filter_of(op["filter"]))
        elif kind == "publish":
            self._publish(op)
        elif kind == "request":
            self._request(op)
        elif kind == "deliver":
            for index in op["choices"]:
                pending = net.transport.pending_links()
                if pending:
                    net.transport.deliver_from(pending[index % len(pending)])
        elif kind == "quiesce":
            net.run()
            self.checks.quiescent(net)
            self.static = True
        elif kind == "fire":
            timers = net.transport.pending_timers()
            if timers:
                net.transport.fire(timers[op["choice"] % len(timers)])
        elif kind == "timeout":
            if net.transport.pending_timers():
                net.transport.fire_next()
        elif kind == "lose-flush":
            flushes = [link for link in net.transport.pending_links() if net.transport.head(link)[0] == "FLUSH"]
            if flushes:
                net.transport.drop_head(flushes[op["choice"] % len(flushes)])
                self.static = False
        else:
            self._churn(op)
            self.static = False
        if kind != "quiesce":  # its checks ran above
            self.check_step(kind)

    def check_step(self, kind: str) -> None:
        """The checks after an operation of `kind`: the family's `Always` properties that it can change (DEF-EXP-8)."""
        self.checks.after_operation(kind, self.net)

    def _churn(self, op: dict) -> None:
        net, kind = self.net, op["op"]
        if not self.family.churn and kind in ("swap", "break", "add", "crash", "leave", "join"):
            raise ScheduleError(f"operation {kind!r}: the {self.family.name} family runs on a fixed overlay (protocol {self.protocol!r})")
        if kind == "swap":
            a, b = op["old"]
            left, right = sorted(net.overlay.side(a, b)), sorted(net.overlay.side(b, a))
            net.swap((a, b), (left[int(op["pick"][0] * len(left))], right[int(op["pick"][1] * len(right))]),
                     gap=op.get("gap", 0.0), lose_in_flight=op["lose"])
            self.broken.insert(0, (a, b))
        elif kind == "break":
            a, b = op["link"]
            net.disconnect(a, b, lose_in_flight=op["lose"])
            self.broken.insert(0, tuple(op["link"]))
        elif kind == "add":
            net.connect(*op["link"])
        elif kind in ("crash", "leave"):
            net.crash(op["broker"], graceful=kind == "leave", lose_in_flight=op["lose"])
        elif kind == "join":
            b = net.join(op["attach"])
            for _ in range(op["clients"]):
                net.add_client(b)
        else:
            raise ScheduleError(f"unknown operation {kind!r}")

    def _request(self, op: dict) -> None:
        """A client's request for the past publications its filter matches (the caching protocol, spec/09); its
        record keeps what the checks at quiescence compare it with (`requests.check_answered_requests`)."""
        if self.family.name != "caching":
            raise ScheduleError(f"operation 'request': only the caching protocol answers requests (protocol {self.protocol!r})")
        request(self.net, op["client"], filter_of(op["filter"]), note_context=True)

    def _publish(self, op: dict) -> None:
        net = self.net
        event = Event(tuple(Attribute(n, {bool: "bool", int: "int", str: "string"}[type(v)], v) for n, v in op["attributes"].items()))
        self.family.publish(net, op["client"], event, self.static)


def execute(topology: dict, seed: int, schedule: list[dict], protocol: str = "strawman", defer_timeout: float = DEFER_TIMEOUT,
            sub_timeout: float = SUB_TIMEOUT, broker_class: type | None = None, delay: tuple[float, float] = DELAY) -> Violation | None:
    """Run a schedule and a final quiesce; the first violation, or None."""
    try:
        run = Run(topology, seed, protocol, defer_timeout, sub_timeout, broker_class=broker_class, delay=delay)
    except Exception as exc:  # the brokers failed while the network was built (step 0)
        return violation_of(exc, 0)
    for step, op in enumerate(schedule + [{"op": "quiesce"}]):
        try:
            run.apply(op)
        except Exception as exc:  # a failed check, or the implementation crashing
            return violation_of(exc, step)
    return None


def violation_of(exc: Exception, step: int) -> Violation:
    """A failed check names its claim in its type (`ClaimViolation`); any
    other exception is the implementation (or a check) crashing; one that
    says the check cannot run (`CannotCheck`: a bad schedule, a command
    that cannot start) is raised again, never filed as a violation."""
    if isinstance(exc, CannotCheck):
        raise exc
    if isinstance(exc, ClaimViolation):
        return Violation(exc.claim, exc.message, step)
    if isinstance(exc, ProcessFailure):  # a process under test that hangs, dies or answers garbage
        return Violation(exc.kind, str(exc), step)
    return Violation("crash", f"{type(exc).__name__}: {exc}", step)


def make_topology(kind: str, brokers: int, seed: int, rng: random.Random, subscriptions: int) -> dict:
    if kind in TOPOLOGIES:
        links = generate(kind, brokers, seed)
    else:
        brokers, links, _ = read_edgelist(kind)
    clients = [0] * brokers
    for _ in range(max(1, subscriptions // 2)):
        clients[rng.randrange(brokers)] += 1
    return {"kind": kind if kind in TOPOLOGIES else str(kind), "brokers": brokers,
            "links": [list(e) for e in links], "clients": clients}


def initial_operations(rng: random.Random, net: Network, pool: Pool = POOL) -> list[dict]:
    """Every client subscribes to 0-2 filters of the pool, then quiesce: the
    reconfigurations that follow have routes to move."""
    ops = [{"op": "subscribe", "client": c, "filter": filter_text(f)}
           for c in sorted(net.clients) for f in rng.sample(pool.filters, min(len(pool.filters), rng.randint(0, 2)))]
    return ops + [{"op": "quiesce"}]


def draw_schedule(seed: int, *, topology: str = "random-tree", brokers: int = 6, subscriptions: int = 8,
                  churn: float = 0.1, steps: int = 60) -> tuple[dict, list[dict]]:
    """The schedule `fuzz` draws for `seed`, generated on an unchecked
    Strawman run (to run it again under other protocols)."""
    rng = random.Random(seed)
    topo = make_topology(topology, brokers, seed, rng, subscriptions)
    run = Run(topo, seed, checked=False)
    schedule = []
    for op in initial_operations(rng, run.net):
        schedule.append(op)
        run.apply(op)
    for _ in range(steps):
        op = next_operation(rng, run.net, churn, run.broken)
        schedule.append(op)
        run.apply(op)
    return topo, schedule


