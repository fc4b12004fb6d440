"""Conformance of Siena's covering forwarding (subsum.impl.network.protocols.siena,
subsum.impl.network.protocols.covering) with the model: claim CLM-SR-8,
spec/08-summary-routing.md (DEF-SR-6).

- `covering_is_sound`, `covering_is_exact_on_single_constraints`,
  `covering_examples`: the impl's `filter_covers` against the model's exact
  `covers_subscription` (z3).
- `siena_delivers_exactly_with_fewer_subs`: one workload on a random tree,
  run under covering and plain forwarding (protocols "siena" and
  "siena-nocover"), each operation to quiescence; every publication is
  checked against the ideal delivery, the tables against the ideal ones,
  and the SUB counts against each other.
- `SienaUnderChurn`, `PlainSienaUnderChurn`: CLM-NET-2's churn machine
  with Siena brokers, its table check replaced by `check_siena_tables`.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance import strategies as gen
from subsum.conformance.checks.network.forwarding import MACHINE_FILTERS, StrawmanUnderChurn, model_state, publish_and_check
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.runner.violations import listed, require
from subsum.core.filters import parse_filter
from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE, Constraint, Subscription, subscription_sort_key
from subsum.impl.network import CLIENT_BASE, Network, build
from subsum.impl.network.protocols.covering import DOMAIN, filter_covers
from subsum.impl.network.protocols.siena import PlainSienaBroker, SienaBroker
from subsum.model import network as ref
from subsum.model.covering import covers_subscription

FLOAT_MAX = DOMAIN["float"][1]

#: Filters over the names of `gen.summary_event_for` that cover one another
#: in chains (the empty filter covers them all), so covering has work to do.
COVERING_POOL = tuple(parse_filter(t) for t in (
    "x > 0", "x > 2", "x >= 3", "x = 4", "x != 1", "x > 0 and x < 3", "y > 0.5", "y >= 1.0 and y < 1.5",
    's prefix "a"', 's prefix "ab"', 's = "abb"', 's wildcard "a*b"', 's contains "b"', "b = true", "b != false and x > 2",
)) + (Subscription(),)

SMALL_VALUES = {"int": st.integers(-4, 4), "float": st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
                "string": st.text(alphabet="ab", max_size=3), "bool": st.booleans()}
#: Values at the ends of each domain and around zero and one, drawn often so
#: that two constraints meet at a shared or adjacent bound.
BOUNDARY_VALUES = {"int": st.sampled_from([INT_MIN, INT_MIN + 1, -1, 0, 1, 2, INT_MAX - 1, INT_MAX]),
                   "float": st.sampled_from([-FLOAT_MAX, -1.0, -5e-324, 0.0, 5e-324, 1.0, math.nextafter(1.0, 2.0), FLOAT_MAX]),
                   "string": st.sampled_from(["", "a", "b", "ab", "ba", "aab"]), "bool": st.booleans()}


# --- the covering function against the model --------------------------------------------------

@st.composite
def constraint_on(draw, name: str, type_: str, around=None, ops=None) -> Constraint:
    """A constraint on the key (name, type_): small values, boundary values,
    and either values at and around `around` (another constraint's value)
    or, without one, any value of the type."""
    op = draw(st.sampled_from(ops or OPS_BY_TYPE[type_]))
    if op == "any":
        return Constraint(name, type_, "any")
    text = SMALL_VALUES["string"]
    if op == "wildcard":
        return Constraint(name, type_, op, f"{draw(text)}*{draw(text)}")
    choices = [SMALL_VALUES[type_], BOUNDARY_VALUES[type_]]
    if around is not None:
        choices.append(gen.near(type_, around))
        if type_ == "string":
            choices.append(st.builds(lambda cut: around.replace("*", "")[:cut], st.integers(0, 3)))
    else:
        choices.append(gen.values(type_))
    return Constraint(name, type_, op, draw(st.one_of(choices)))


KEYS = (("x", "int"), ("y", "float"), ("s", "string"), ("b", "bool"))


def variant_of(g: Constraint) -> st.SearchStrategy:
    """g itself, g's value under another operator, or a constraint around g's value."""
    same_value = st.sampled_from([op for op in OPS_BY_TYPE[g.type] if op not in ("any", "wildcard")]).map(
        lambda op: Constraint(g.name, g.type, op, g.value))
    options = [st.just(g), constraint_on(g.name, g.type, g.value)]
    return st.one_of((options + [same_value]) if g.op not in ("any", "wildcard") else options)


@st.composite
def covering_pairs(draw) -> tuple[Subscription, Subscription]:
    """(general, specific). Half the time specific holds a variant of most of
    general's constraints (plus extra constraints), so that the impl often
    finds a cover; otherwise two independent subscriptions."""
    general = draw(gen.summary_subscriptions())
    if draw(st.booleans()):
        return general, draw(gen.summary_subscriptions())
    specific = [draw(variant_of(g)) for g in sorted(general.constraints, key=repr) if draw(st.integers(0, 5))]
    specific += draw(st.lists(st.sampled_from(KEYS).flatmap(lambda key: constraint_on(*key)), max_size=2))
    return general, Subscription(frozenset(specific))


@property_check(covering_pairs(), scale=5)  # operator and bound pairs are many; z3 decides small filters fast
def covering_is_sound(pair):
    """CLM-SR-8: whenever the impl says general (or one of its constraints
    alone) covers specific, the model agrees (DEF-COV-3)."""
    general, specific = pair
    for g in [general] + [Subscription({c}) for c in sorted(general.constraints, key=repr)]:
        if filter_covers(g, specific):
            require(covers_subscription(g, specific), "CLM-SR-8",
                    lambda: f"filter_covers({g}, {specific}) but the model finds an event matching only the second")


@st.composite
def single_constraint_pairs(draw) -> tuple[Subscription, Subscription]:
    """Two one-constraint filters on one key; the specific's operator is not `!=`."""
    name, type_ = draw(st.sampled_from(KEYS))
    general = draw(constraint_on(name, type_))
    specific = draw(constraint_on(name, type_, general.value, ops=[op for op in OPS_BY_TYPE[type_] if op != "!="]))
    return Subscription({general}), Subscription({specific})


@property_check(single_constraint_pairs(), scale=5)
def covering_is_exact_on_single_constraints(pair):
    """CLM-SR-8: on one constraint each, one key, a specific operator other
    than `!=`, the impl's covering is the model's."""
    general, specific = pair
    require(filter_covers(general, specific) == covers_subscription(general, specific), "CLM-SR-8",
            lambda: f"filter_covers({general}, {specific}) is {filter_covers(general, specific)}, the model says otherwise")


#: (general, specific, covers): the simple cases, as filters ("" is the empty filter).
COVERING_EXAMPLES = (
    ("x > 5", "x > 7", True), ("x > 7", "x > 5", False), ("x > 1", "x >= 2", True), ("x >= 2", "x > 1", True),
    ("x >= 2.0", "x > 1.0", False), ("x > 1.0", "x >= 2.0", True), ("x != 3", "x > 3", True), ("x != 3", "x >= 3", False),
    ("x > 0 and x < 10", "x > 2 and x < 5 and s = \"a\"", True), ("x != 20", "x > 2 and x < 10", True),
    ('s prefix "A"', 's prefix "AB"', True), ('s prefix "AB"', 's prefix "A"', False), ('s suffix "E"', 's = "OTE"', True),
    ('s contains "T"', 's wildcard "OT*E"', True), ('s wildcard "N*SE"', 's wildcard "NY*SE"', True), ('s wildcard "N*E"', 's prefix "N"', False),
    ('s != "B"', 's prefix "A"', True), ("b = true", "b != false", True), ("", "x = 1", True), ("x = 1", "", False),
    ("y > 1", "x > 5", False), ("x > 5", "x > 9223372036854775807", True),
)


def covering_examples() -> str:
    """CLM-SR-8: the simple cases: `x > 5` covers `x > 7`, `s prefix "A"` covers
    `s prefix "AB"`, strictness on ints and floats, and so on; the model agrees on each."""
    for general, specific, expected in COVERING_EXAMPLES:
        g, s = (parse_filter(text) if text else Subscription() for text in (general, specific))
        require(filter_covers(g, s) == expected, "CLM-SR-8", lambda: f"filter_covers({general!r}, {specific!r}) should be {expected}")
        require(covers_subscription(g, s) == expected, "CLM-SR-8", lambda: f"the model says {general!r} covers {specific!r} is {not expected}")
    return f"{len(COVERING_EXAMPLES)} cases"


# --- forwarding on the simulator ---------------------------------------------------------------

@functools.lru_cache(maxsize=1 << 16)
def model_covers(general: Subscription, specific: Subscription) -> bool:
    """The model's covering (z3), remembered per pair for the whole process:
    it is a pure function, z3 takes ~0.1 s a pair, and the workloads draw
    most filters from one pool (COVERING_POOL)."""
    return covers_subscription(general, specific)


def check_siena_tables(net: Network, covers: Callable[[Subscription, Subscription], bool] = model_covers) -> None:
    """CLM-SR-8 at quiescence. Covering off: every table is the ideal one
    (DEF-NET-3). On: each client's entries are the ideal ones, and for each
    broker u and neighbor v, u holds from v only filters subscribed on v's
    side, and every filter subscribed there is covered (the model's
    covering) by one u holds from v."""
    graph, access, filters = model_state(net)
    ideal = ref.ideal_tables(graph, access, filters)
    for u, broker in net.brokers.items():
        assert isinstance(broker, SienaBroker)
        got = broker.entries()
        if not broker.covering:
            require(got == ideal[u], "CLM-SR-8",
                    lambda: f"broker {u} (covering off): table differs from the ideal one by {listed(got ^ ideal[u], 3)}")
            continue
        require({e for e in got if e[0] >= CLIENT_BASE} == {e for e in ideal[u] if e[0] >= CLIENT_BASE}, "CLM-SR-8",
                lambda: f"broker {u}: client entries differ")
        for v in sorted(graph.neighbors(u)):
            held = sorted((f for m, f in got if m == v), key=subscription_sort_key)
            beyond = ref.filters_at(ref.side_of(graph, u, v), access, filters)
            require(set(held) <= beyond, "CLM-SR-8", lambda: f"broker {u} holds from {v} filters nobody on {v}'s side subscribes")
            for f in sorted(beyond, key=subscription_sort_key):
                require(any(covers(g, f) for g in held), "CLM-SR-8",
                        lambda: f"broker {u} holds nothing from {v} that covers {f}, subscribed on {v}'s side")


@st.composite
def siena_workloads(draw):
    """A random tree, clients, a pool of filters (some of COVERING_POOL, some
    random) and 4-30 operations: subscribe, unsubscribe (a held filter) and
    publish (an event planted from each pool filter)."""
    n = draw(st.integers(1, 8))
    edges = [(draw(st.integers(0, i - 1)), i) for i in range(1, n)]
    access = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=8))
    pool = draw(st.lists(st.sampled_from(COVERING_POOL), min_size=1, max_size=6, unique=True))
    pool += draw(st.lists(gen.summary_subscriptions(), max_size=3))
    client = st.integers(0, len(access) - 1)
    operation = st.one_of(
        st.tuples(st.just("subscribe"), client, st.sampled_from(pool)),
        st.tuples(st.just("unsubscribe"), client, st.integers(0, 5)),
        st.tuples(st.just("publish"), st.tuples(*(gen.planted_event(f) for f in pool))),
    )
    operations = [draw(operation) for _ in range(draw(st.integers(4, 30)))]
    return n, edges, access, operations, draw(st.integers(0, 2**16))


def run_workload(protocol: str, workload, covers: Callable[[Subscription, Subscription], bool] = model_covers) -> list[int]:
    """Run the workload, each operation to quiescence: a publish operation's
    events are published by every client in turn, each publication checked
    (DEF-NET-4, via `publish_and_check`), and the tables are checked after
    every operation. Returns the SUBs sent so far after each operation."""
    n, edges, access, operations, seed = workload
    net = build(edges, n, seed=seed, protocol=protocol)
    clients = [net.add_client(b) for b in access]
    subs_sent = []
    for kind, *args in operations:
        if kind == "publish":
            for event in args[0]:
                for publisher in clients:
                    publish_and_check(net, publisher, event, static=True)
        else:
            client, held = clients[args[0]], sorted(net.client_filters[clients[args[0]]], key=subscription_sort_key)
            if kind == "subscribe":
                net.subscribe(client, args[1])
            elif held:
                net.unsubscribe(client, held[args[1] % len(held)])
        net.run()
        check_siena_tables(net, covers)
        subs_sent.append(net.ledger.sent["SUB"])
    assert not net.ledger.violations, dict(net.ledger.violations)
    return subs_sent


@property_check(siena_workloads())
def siena_delivers_exactly_with_fewer_subs(workload):
    """CLM-SR-8: covering on and off deliver exactly the ideal set and keep
    their tables; after every operation covering has sent at most as many
    SUBs as plain forwarding."""
    covering, plain = run_workload("siena", workload), run_workload("siena-nocover", workload)
    for step, (on, off) in enumerate(zip(covering, plain)):
        require(on <= off, "CLM-SR-8", lambda: f"after operation {step} covering has sent {on} SUBs, plain forwarding {off}")


class SienaUnderChurn(StrawmanUnderChurn):
    """CLM-NET-2's churn (swaps, breaks, adds, crashes, joins, deliveries in
    any order) with Siena brokers; at quiescence `check_siena_tables`, and
    publications in quiescent static states reach exactly the ideal set."""

    broker_class = SienaBroker

    @initialize(n=st.integers(2, 7), seed=st.integers(0, 2**16), data=st.data())
    def start(self, n, seed, data):
        """CLM-NET-2's random tree and clients, each client then subscribed to
        0-3 filters of the pool and run to quiescence, so that covering and
        withdrawals happen from the first rule on."""
        StrawmanUnderChurn.start(self, n=n, seed=seed, data=data)
        for c in self._clients():
            for f in data.draw(st.lists(st.sampled_from(MACHINE_FILTERS), max_size=3, unique=True)):
                self.net.subscribe(c, f)
        self.net.run()
        self.covers = model_covers

    @rule()
    def quiesce(self):
        self.net.run()
        check_siena_tables(self.net, self.covers)
        self.static = True

    def teardown(self):
        if hasattr(self, "net"):
            self.net.run()
            check_siena_tables(self.net, self.covers)


class PlainSienaUnderChurn(SienaUnderChurn):
    """The same with covering off."""

    broker_class = PlainSienaBroker


def run_siena_machine(machine: type) -> None:
    run_state_machine_as_test(pinned(machine), settings=settings(stateful_step_count=40))
