"""The gate's own parts can fail: coverage floors fire when a generator
stops producing a case, the census classifies what it counts correctly,
violations are filed by their type, and CLM-NET-4 is caught where a
message is sent even when the simulator's counter is silenced."""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from subsum.conformance import claims
from subsum.conformance.runner import census
from subsum.conformance.checks.network import checked_brokers
from subsum.conformance.checks.matching import engines
from subsum.conformance.checks.network import forwarding as network
from subsum.conformance import strategies as gen
from subsum.conformance.schedules.runs import violation_of
from subsum.conformance.checks.matching.properties import property_check, run_property
from subsum.conformance.runner.violations import ClaimViolation, claim_of
from subsum.core.types import Attribute, Constraint, Subscription
from subsum.impl.network import CLIENT_BASE, StrawmanBroker
from subsum.impl.network.sim import Network
from subsum.model import strawman as ref


def string_check() -> claims.Check:
    (check,) = [c for c in claims.claim_by_id("CLM-ENG-1").checks if c.name.endswith("engines_agree_on_strings")]
    return check


@pytest.mark.thorough  # `make verify` runs this very check (CLM-ENG-1's engines_agree_on_strings, floors included) every run
def test_the_string_check_meets_its_floors():
    claims.execute(string_check())


def test_a_generator_that_stops_landing_patterns_at_the_end_fails_the_floor(monkeypatch):
    """Planted generator regression: events no longer built around the
    patterns in use (arbitrary values only), as before issue 20."""
    monkeypatch.setattr(gen, "string_event", lambda patterns: st.builds(
        lambda d: __import__("subsum.core.types", fromlist=["Event"]).Event(
            tuple(Attribute(n, "string", v) for n, v in d.items())),
        st.dictionaries(st.sampled_from("stu"), st.text(alphabet="ab", max_size=7))))
    floors_missed = r"coverage floor not met.*prefix:at-start drawn 3 times, floor 10.*wildcard:exact-length drawn 10 times, floor 30"
    with pytest.raises(AssertionError, match=floors_missed):
        claims.execute(string_check())


def test_floors_name_only_tags_the_census_can_record():
    known_prefixes = ("op:", "contains:", "prefix:", "suffix:", "wildcard", "empty-", "int-64-limit", "float-limit", "float:zero",
                      "numeric:", "name:", "subscription:", "SUB:", "UNSUB:", "REMOVE-LINK:", "ADD-LINK:", "EVENT:", "TIMED:",
                      "FLUSH:", "ACTIVATE:", "INFORMED:",
                      # the caches, alone and inside the caching and client-server protocols
                      "time:equal", "capacity-1:", "evicted:", "hit:bounded:", "request-hit:bounded", "unsubscribe:bounded",
                      "answer-off-path:", "ss:asked-off-path", "response:long", "response:short", "request:held-twice",
                      # summary routing, and the trace check's boundaries
                      "plan:equal-degree", "tree:equal-degree", "route:", "delete:owners-answered", "trace:",
                      # every network machine: a network of one broker, the empty filter
                      "net:single-broker", "filter:empty")
    floors = {tag for claim in claims.CLAIMS for check in claim.checks for tag in check.floors}
    assert floors, "no check names a floor"
    assert all(tag.startswith(known_prefixes) for tag in floors), sorted(t for t in floors if not t.startswith(known_prefixes))


@pytest.mark.parametrize("pattern,value,tags", [
    ("b", "ab", {"contains:at-end", "contains:at-end-only"}),
    ("b", "bab", {"contains:at-start", "contains:at-end"}),
    ("a", "bab", {"contains:in-middle"}),
    ("ab", "ab", {"contains:whole-value"}),
    ("ab", "ba", set()),
])
def test_census_classifies_where_a_pattern_lands(pattern, value, tags):
    got = set(census.pair_tags(Constraint("s", "string", "contains", pattern), Attribute("s", "string", value)))
    assert got == tags


def test_census_classifies_wildcards_and_puns():
    assert census.pair_tags(Constraint("s", "string", "wildcard", "a*b"), Attribute("s", "string", "ab")) == ["wildcard:exact-length"]
    assert census.pair_tags(Constraint("s", "string", "wildcard", "ab*ba"), Attribute("s", "string", "aba")) == ["wildcard:parts-overlap"]
    from subsum.core.types import Event
    events = [Event((Attribute("x", "bool", True),)), Event((Attribute("x", "int", 1),)), Event((Attribute("x", "float", 1.0),))]
    assert set(census.batch_tags(events)) == {"name:several-types", "name:bool-true-and-int-1", "name:int-1-and-float-1.0"}


def test_handler_rules_agree_with_the_model_handlers():
    """The census's rule names match what the model's on_sub and on_unsub do."""
    p = engines.MIXED_EDGE_CASES[0][0][0][1]
    s = ref.BrokerState(2, neighbors=frozenset({1, 3, CLIENT_BASE}), clients=frozenset({CLIENT_BASE}), table=frozenset())
    assert checked_brokers.sub_rule(s, 1, p) == "SUB:first" and len(ref.on_sub(s, 1, p)[1]) == 1  # flooded to 3
    s1, _ = ref.on_sub(s, 1, p)
    assert checked_brokers.sub_rule(s1, 3, p) == "SUB:second-to-broker" and ref.on_sub(s1, 3, p)[1] == [(1, "SUB", p)]
    assert checked_brokers.sub_rule(s1, 1, p) == "SUB:repeat" and checked_brokers.sub_rule(s1, 7, p) == "SUB:stale"
    s2, _ = ref.on_sub(s1, 3, p)
    assert checked_brokers.unsub_rule(s2, 3, p) == "UNSUB:single-remaining-broker" and ref.on_unsub(s2, 3, p)[1] == [(1, "UNSUB", p)]
    assert checked_brokers.unsub_rule(s1, 1, p) == "UNSUB:last" and checked_brokers.unsub_rule(s1, 3, p) == "UNSUB:stale"


def test_violations_are_filed_by_type_not_by_wording():
    reworded = ClaimViolation("CLM-NET-2", "the model to ... control message ... differs from the model")  # words of other claims
    assert violation_of(reworded, 4).claim == "CLM-NET-2"
    assert violation_of(AssertionError("CLM-NET-6: looks like a claim"), 4).claim == "crash"
    group = ExceptionGroup("two", [ValueError("x"), ClaimViolation("CLM-RCF-7", "y")])
    assert claim_of(group) == "CLM-RCF-7"
    with pytest.raises(ValueError):
        ClaimViolation("NET-4", "not a claim ID")


def test_net4_is_caught_where_the_message_is_sent_even_with_the_counter_silenced(monkeypatch):
    """Planted bug: the second-subscriber rule also tells a *client* first
    subscriber, and the simulator drops that SUB without counting it."""
    original = StrawmanBroker.sub_received

    def tells_clients_too(self, n, f, out):
        subscribers = self.table.get(f)
        first = next(iter(subscribers)) if subscribers and len(subscribers) == 1 and n not in subscribers else None
        original(self, n, f, out)
        if first is not None and first >= CLIENT_BASE and n in self.neighbors:
            out.send(first, "SUB", f)

    monkeypatch.setattr(StrawmanBroker, "sub_received", tells_clients_too)
    monkeypatch.setattr(Network, "to_client", lambda self, src, client, kind, payload: None)
    quick = settings(stateful_step_count=40, max_examples=60, derandomize=True, database=None, deadline=None,
                     phases=(Phase.explicit, Phase.generate))
    with pytest.raises(AssertionError) as caught:
        run_state_machine_as_test(network.StrawmanDifferential, settings=quick)
    assert claim_of(caught.value) == "CLM-NET-4", caught.value
    run_state_machine_as_test(network.StrawmanUnderChurn, settings=quick)  # the counter alone sees nothing


def test_pinned_examples_run_first_and_the_census_skips_them():
    calls = []

    @property_check(st.integers(0, 10), examples=((12345,),))
    def prop(x):
        calls.append(x)
        census.record("drawn")

    with census.observe() as counts:
        run_property(prop)
    assert calls[0] == 12345 and 12345 not in calls[1:]
    assert counts["drawn"] == len(calls) - 1 > 0


def test_subscription_only_tags():
    s = Subscription({Constraint("a", "int", "!=", 1), Constraint("a", "int", "any")})
    assert census.subscription_tags(s) == ["subscription:only-not-equal-or-any"]
