"""The simulators' Python entry points against their commands and spec/05-network.md DEF-NET-10:
`routing.simulate()` and `caching.run_caching()` with no arguments run what `subsum simulate` runs
with no options, and the routing workload draws what DEF-NET-10 says."""

import inspect
import random
import string
from collections import Counter

import click

from subsum.cli import main
from subsum.impl.network.workloads import caching, routing


def _cli_defaults(command: str) -> dict:
    ctx = click.Context(main)
    params = main.get_command(ctx, "simulate").get_command(ctx, command).params
    return {p.name: p.default for p in params}


def _api_defaults(function) -> dict:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()}


def test_simulate_with_no_arguments_is_the_command_with_no_options():
    cli, api = _cli_defaults("forwarding"), _api_defaults(routing.simulate)
    assert api["kind"] == cli["topology"] == "random-tree"
    for name in ("brokers", "subscriptions", "events", "swaps", "gap", "seed", "protocol", "defer_timeout", "sub_timeout"):
        assert api[name] == cli[name], name
    assert (api["trace"], api["forest"], api["options"]) == (False, False, None)  # no --trace, no --forest
    assert api["delay"] == (1.0, 10.0)  # DEF-NET-10: link delays in [1, 10] ms
    assert (api["brokers"], api["subscriptions"], api["events"], api["gap"], api["seed"]) == (20, 100, 100, 5.0, 0)  # DEF-NET-10


def test_a_call_without_gap_runs_with_the_documented_gap():
    # The signature above is what a caller reads; this is what a call does (mutmut's trampolines hide a changed
    # default from inspect.signature, so a mutant of the default is caught here). A gap of 6 ms is told apart.
    def trace(**gap):
        return routing.simulate(brokers=6, subscriptions=12, events=12, swaps=3, seed=4, trace=True, **gap).net.ledger.trace

    assert trace() == trace(gap=5.0)
    assert trace(gap=6.0) != trace(gap=5.0)


def test_run_caching_with_no_arguments_is_the_command_with_no_options_but_its_publication_count():
    cli, api = _cli_defaults("caching"), _api_defaults(caching.run_caching)
    pairs = {"brokers": "brokers", "placement": "placement", "policy": "cache_policy", "alpha": "zipf", "stay": "stay",
             "leaf_reading": "leaf_reading", "single_reading": "single_reading", "topology": "topology", "seed": "seed"}
    for name, option in pairs.items():
        assert api[name] == cli[option], name
    # The function's default run is ten times the command's (1,000 publications, not 100); its capacity is the
    # command's rule (--capacity unset: default_capacity) applied to that count, and topics are derived.
    assert (api["messages"], cli["events"]) == (1000, 100)
    assert api["capacity"] == caching.default_capacity(api["messages"]) == 50 and api["topics"] is None and cli["capacity"] is None


def test_the_routing_workload_draws_what_def_net_10_says():
    rng = random.Random(7)
    filters = [routing.random_filter(rng) for _ in range(4000)]
    shapes = Counter()
    for f in filters:
        (c,) = f.constraints
        shapes[(c.name, c.type, c.op)] += 1
        if c.name == "x":
            assert 0 <= c.value <= 99
        else:
            assert len(c.value) == 1 and c.value in string.ascii_uppercase
    assert set(shapes) == {("x", "int", ">"), ("s", "string", "prefix")}
    assert 1850 <= shapes[("x", "int", ">")] <= 2150  # one half, within 4.7 standard deviations
    thresholds = {c.value for f in filters for c in f.constraints if c.name == "x"}
    letters = {c.value for f in filters for c in f.constraints if c.name == "s"}
    assert thresholds == set(range(100)) and letters == set(string.ascii_uppercase)
    events = [routing.random_event(rng) for _ in range(4000)]
    assert {frozenset((a.name, a.type) for a in e.attributes) for e in events} == {frozenset({("x", "int"), ("s", "string")})}
    values = [{a.name: a.value for a in e.attributes} for e in events]
    assert {v["x"] for v in values} == set(range(100))
    words = [v["s"] for v in values]
    assert all(len(w) == 3 and set(w) <= set(string.ascii_uppercase) for w in words)
    assert {w[k] for w in words for k in range(3)} == set(string.ascii_uppercase)


class _Drawn:
    """A random source returning the given values in turn."""

    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def test_the_caching_workload_draws_topics_by_zipf():
    # Zipf(0.8) over 5 topics (Popularity's contract): P(i) ∝ 1/(i+1)^0.8. Worked by hand, the cumulative
    # probabilities are 0.385295, 0.606588, 0.76658, 0.893679 and 1: a draw u lands on the first topic whose
    # cumulative probability exceeds u.
    cuts = [0.385295, 0.606588, 0.76658, 0.893679]
    draws = [0.0, *(c + d for c in cuts for d in (-2e-6, 2e-6)), 0.999999]
    popularity = caching.Popularity(5, 0.8, _Drawn(draws))
    assert [popularity.draw() for _ in draws] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    uniform = caching.Popularity(4, 0.0, _Drawn([0.24, 0.26, 0.49, 0.51, 0.74, 0.76, 0.99]))  # alpha 0: uniform
    assert [uniform.draw() for _ in range(7)] == [0, 1, 1, 2, 2, 3, 3]
