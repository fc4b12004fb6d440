"""The caching protocol (spec/09-caching.md, CLM-CACHE-5 … 10): the checks
of conformance.checks.caching.request_response pass, and each fails on the bug it is there to
catch, planted in the protocol."""

from __future__ import annotations

import json

import pytest

from subsum.conformance.runner import profiles
from subsum.conformance.checks.caching import request_response as checks
from subsum.conformance.checks.caching import in_protocol as protocol_caches
from subsum.conformance.checks.matching.properties import run_property
from subsum.impl.network.protocols import caching
from subsum.impl.network import build
from subsum.impl.network.messages import CacheResponse
from subsum.impl.network.protocols.caching import CachingBroker
from subsum.impl.network.protocols.forwarding import StrawmanBroker
from subsum.impl.network.transport import CLIENT_BASE
from subsum.impl.network.workloads.caching import default_capacity, run_caching


@pytest.fixture(autouse=True)
def ci_profile():
    profiles.load("ci")


@pytest.fixture(autouse=True)
def bites_only(ci_profile, first_failure):
    """Every property run here plants a bug: the first failing example is enough."""


# The checks on the real protocol run in tests/test_claims.py (CLM-CACHE-5 … 10).


def test_a_message_loop_is_reported_within_the_step_bound_not_run_forever(monkeypatch):
    """A relay bug that keeps a message going forever: the requests check reports it (CLM-CACHE-6)."""
    monkeypatch.setattr(checks, "SETTLE_STEPS", 50)
    net = build([(0, 1)], 2, seed=0, protocol="caching")

    def again():  # something in the network that never stops
        net.transport.at(net.transport.now + 1, again)

    net.transport.at(0, again)
    with pytest.raises(AssertionError, match=r"CLM-CACHE-6: the network did not quiesce within 50 steps"):
        checks.settle(net)


def test_a_response_that_skips_a_hop_is_caught(monkeypatch):
    """CLM-CACHE-6 and 10: a broker sending a response straight (out of band) to the id after next."""
    real = CachingBroker.pass_response

    def skipping(self, rid, m, stack, index, out):
        if len(stack) > 3 and stack[2] < CLIENT_BASE:
            out.shared.requests[rid].response_hops += 1
            out.send_direct(stack[2], "RESPONSE", CacheResponse(rid, m, stack[2:], index))
            return
        real(self, rid, m, stack, index, out)

    monkeypatch.setattr(CachingBroker, "pass_response", skipping)
    with pytest.raises(AssertionError, match=r"\[\(2, 0, \[2, 0\]\)\]"):
        checks.seed003_request_path()
    with pytest.raises(AssertionError, match="CLM-CACHE-6"):
        run_property(checks.requests_and_responses)


def test_a_response_taking_a_wrong_link_is_caught(monkeypatch):
    """CLM-CACHE-6: a response sent to some other neighbor than the next id."""
    real = CachingBroker.pass_response

    def astray(self, rid, m, stack, index, out):
        others = sorted(b for b in self.neighbors if b < CLIENT_BASE and b not in stack)
        if others and stack[1] < CLIENT_BASE:
            out.shared.requests[rid].response_hops += 1
            out.send(others[0], "RESPONSE", CacheResponse(rid, m, (others[0], *stack[1:]), index))
            return
        real(self, rid, m, stack, index, out)

    monkeypatch.setattr(CachingBroker, "pass_response", astray)
    with pytest.raises(AssertionError, match="CLM-CACHE-(6|9)"):
        run_property(checks.requests_and_responses)


def test_no_duplicate_suppression_is_caught(monkeypatch):
    """CLM-CACHE-8: without duplicate suppression the client gets copies."""
    monkeypatch.setitem(caching.DEFAULTS, "suppress_duplicates", False)
    with pytest.raises(AssertionError, match="CLM-CACHE-8"):
        run_property(checks.requests_and_responses)


def test_a_request_stopping_at_the_first_hit_is_caught(monkeypatch):
    """CLM-CACHE-7 (and 9): the pub/sub request must not stop at a hit
    (the client-server Server-Cache request does; this one does not)."""
    real = CachingBroker.request_received

    def stopping(self, x, payload, out):
        rid, f, path = payload.rid, payload.filter, payload.path
        hits = [int(m) for m in self.cache.order() if out.shared.event_matches(f, int(m))]
        if not hits:
            return real(self, x, payload, out)
        record = out.shared.requests[rid]
        stack = (self.id, *path)
        record.reached.append(self.id)
        record.paths[self.id] = stack
        record.dropped_at.append(self.id)
        for m in hits:
            record.responses.append((self.id, m, [self.id]))
            self.pass_response(rid, m, stack, len(record.responses) - 1, out)

    monkeypatch.setattr(CachingBroker, "request_received", stopping)
    with pytest.raises(AssertionError, match="CLM-CACHE-7"):
        run_property(checks.requests_and_responses)


def test_leaf_caching_at_intermediate_brokers_is_caught(monkeypatch):
    """CLM-CACHE-5: reading (ii) storing where a downstream broker is interested."""
    real = CachingBroker.is_holder

    def reading_i(self, matched, came_from, shared):
        if shared.placement == "leaf":
            return any(s >= CLIENT_BASE for f in self.table if f in matched for s in self.table[f])
        return real(self, matched, came_from, shared)

    monkeypatch.setattr(CachingBroker, "is_holder", reading_i)
    with pytest.raises(AssertionError, match="CLM-CACHE-5"):
        run_property(checks.placements_nest)


def test_an_unsound_overlap_is_caught(monkeypatch):
    """CLM-CACHE-7: an overlap test that ignores `!=` in reverse (says disjoint when not)."""
    real = caching.filters_overlap

    def unsound(f, g):
        return real(f, g) and not any(c.op == "<=" for c in f.constraints | g.constraints)

    monkeypatch.setattr(checks, "filters_overlap", unsound)
    with pytest.raises(AssertionError, match="CLM-CACHE-7"):
        run_property(checks.overlap_is_sound)


def run_cli(*args: str):
    from click.testing import CliRunner

    from subsum.cli import main

    return CliRunner().invoke(main, list(args))


def test_simulate_caching_reports_and_is_deterministic():
    reports = []
    for _ in range(2):
        result = run_cli("simulate", "caching", "--placement", "candidate", "--cache-policy", "lru", "--brokers", "12", "--events", "120",
                         "--seed", "3", "--format", "json")
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.stdout))
    a, b = reports
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    assert (a["placement"], a["policy"], a["capacity"], a["publications"], a["requests"]) == ("candidate", "lru", 6, 120, 120)
    assert 0 < a["answered"] <= a["requests_with_past"] <= a["requests"]
    assert a["answered"] <= round(a["hit_ratio"] * a["requests"]) <= a["requests"]  # an answered request hit somewhere
    assert 0 < a["recovered"] <= a["matching_past"]
    assert a["survivability"] == round(a["recovered"] / a["matching_past"], 4)
    assert a["store_messages"] == 0 and a["responses_lost"] == 0


def test_simulate_caching_all_floods_copies_and_unbounded_all_recovers_everything():
    result = run_cli("simulate", "caching", "--placement", "all", "--capacity", "1000", "--brokers", "10", "--events", "60", "--seed", "1",
                     "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["survivability"] == 1.0 and report["delay_mean_hops"] == 0.0  # every broker holds everything
    assert report["store_messages"] > 0


@pytest.mark.parametrize("args, message", [
    (["forwarding", "--cache-policy", "lru"], "No such option '--cache-policy'"),  # each simulation takes only its own options
    (["caching", "--placement", "all", "--swaps", "2"], "No such option '--swaps'"),
    (["caching", "--placement", "all", "--protocol", "siena"], "No such option '--protocol'"),
    (["caching", "--placement", "leaf", "--capacity", "0"], "--capacity"),
    (["caching", "--placement", "leaf", "--zipf", "nan"], "--zipf"),
    (["--caching", "all"], "simulate takes a subcommand first"),  # the old spelling points to the new one
])
def test_simulate_caching_refuses_what_makes_no_sense(args, message):
    result = run_cli("simulate", *args)
    assert result.exit_code == 2 and message in result.stderr.replace("\n", " "), result.stderr


REPORT_FIELDS = {"placement", "policy", "capacity", "brokers", "publications", "requests", "requests_with_past", "answered", "hit_ratio",
                 "answered_share", "survivability", "recovered", "matching_past", "delay_mean_hops", "request_hops", "response_hops",
                 "overhead_per_request", "requests_dropped", "duplicates_suppressed", "duplicate_copies", "responses_lost",
                 "stored_at_publish", "stored_at_response", "store_messages", "event_messages", "evictions"}


@pytest.mark.parametrize("placement, single_reading", [("all", "publisher"), ("single", "centre"), ("leaf", "publisher")])
def test_the_caching_report_is_def_cache_8_of_the_runs_own_records(placement, single_reading):
    """Each figure of `simulate caching` recomputed from the run's request
    records and message counts as DEF-CACHE-8 defines it."""
    net, got = run_caching(brokers=8, placement=placement, single_reading=single_reading, policy="lru", capacity=3, messages=40, seed=1)
    requests = list(net.shared.requests.values())
    wanting = [r for r in requests if r.past]
    answered = sum(1 for r in wanting if r.recovered)
    recovered, owed = sum(len(r.recovered) for r in requests), sum(len(r.past) for r in wanting)
    delays = [d for r in requests for d in r.delay.values()]
    placed = net.ledger.sent["STORE"] + net.ledger.sent["PLACE"]
    hops = sum(r.request_hops for r in requests), sum(r.response_hops for r in requests)
    assert set(got) == REPORT_FIELDS
    assert (got["placement"], got["policy"], got["capacity"], got["brokers"], got["publications"], got["requests"]) == \
        (placement, "lru", 3, 8, 40, 40)
    assert (got["requests_with_past"], got["answered"], got["recovered"], got["matching_past"]) == (len(wanting), answered, recovered, owed)
    assert got["hit_ratio"] == round(sum(1 for r in requests if r.hits) / 40, 4)
    assert got["answered_share"] == round(answered / len(wanting), 4)
    assert got["survivability"] == round(recovered / owed, 4)
    assert got["delay_mean_hops"] == round(sum(delays) / len(delays), 3)
    assert (got["request_hops"], got["response_hops"], got["store_messages"]) == (*hops, placed)
    assert got["overhead_per_request"] == round((sum(hops) + placed) / 40, 3)
    assert got["duplicate_copies"] == sum(c - 1 for r in requests for c in r.recovered.values())
    assert got["event_messages"] == net.ledger.sent["EVENT"] > 0
    counters = net.shared.counters
    assert [got[k] for k in ("requests_dropped", "duplicates_suppressed", "responses_lost", "stored_at_publish", "stored_at_response",
                             "evictions")] == [counters[k] for k in ("requests dropped", "duplicates suppressed", "responses lost",
                                                                     "stored at publish", "stored at response", "evictions")]
    # the figures are not trivially 0 or 1, so a wrong rounding or a swapped term shows
    assert 0 < got["survivability"] < 1 and 0 < got["answered_share"] < 1 and got["evictions"] > 0
    assert placed > 0 if placement in ("all", "single") else placed == 0


def test_a_caching_run_without_requests_reports_no_ratio():
    _, got = run_caching(brokers=4, messages=0, seed=1)
    assert set(got) == REPORT_FIELDS and got["requests"] == 0
    assert [got[k] for k in ("hit_ratio", "answered_share", "survivability", "delay_mean_hops", "overhead_per_request")] == [None] * 5


def test_a_run_without_a_capacity_gets_five_percent_of_its_publications_and_at_least_one_slot():
    assert [default_capacity(m) for m in (0, 10, 30, 1000)] == [1, 1, 2, 50]


def test_the_first_client_id_gets_its_responses_like_any_other():
    # Node ids from CLIENT_BASE up are clients (impl/network/transport.py): the first client is CLIENT_BASE itself.
    # Seed 003's chain ni - n1 - n2 with the requester attached first, so a response's last hop is to CLIENT_BASE.
    from subsum.core.filters import parse_filter
    from subsum.core.types import Attribute, Event
    from subsum.impl.network.protocols.caching import request

    net = build([(0, 1), (1, 2)], 3, seed=0, protocol="caching", options={"placement": "candidate", "capacity": None})
    requester = net.add_client(0)
    assert requester == CLIENT_BASE
    holder = net.add_client(2)
    net.subscribe(holder, parse_filter("price > 5"))
    checks.settle(net)
    eid = net.publish(net.add_client(2), Event((Attribute("price", "int", 15),)))
    checks.settle(net)
    net.subscribe(requester, parse_filter("price > 10"))
    rid = request(net, requester, parse_filter("price > 10"))
    checks.settle(net)
    record = net.shared.requests[rid]
    assert record.responses == [(2, eid, [2, 1, 0])] and dict(record.recovered) == {eid: 1} and record.delay == {eid: 2}


def test_a_broker_telling_its_cache_only_part_of_a_requests_hits_is_caught(monkeypatch):
    """CLM-CACHE-1 inside the protocol (issue 52's plant): a broker that hits in its cache all but the last of the
    held messages a request matches. The check reads what the broker told its cache and compares it with every
    held message the request matches, by the reference fed the broker's own operations."""
    class ForgetsTheLastHit:
        def __init__(self, cache):
            self.cache = cache

        def hit(self, matching, now):
            self.cache.hit(list(matching)[:-1], now)

        def __contains__(self, m):
            return m in self.cache

        def __len__(self):
            return len(self.cache)

        def __getattr__(self, name):
            return getattr(self.cache, name)

    real = protocol_caches.watch_caches

    def watch_forgetful(net):
        real(net)  # the check's recorder sees what the broker tells its cache: the broker's calls go through the plant
        for broker in net.brokers.values():
            broker.cache = ForgetsTheLastHit(broker.cache)

    monkeypatch.setattr(protocol_caches, "watch_caches", watch_forgetful)
    with pytest.raises(AssertionError, match="CLM-CACHE-1"):
        run_property(protocol_caches.protocol_caches_equal_the_reference)


def _cache_calls(monkeypatch, method: str, replacement) -> None:
    """Plant `replacement` for CachingBroker.`method`, run CLM-CACHE-1 inside the protocol, and see it fail."""
    monkeypatch.setattr(CachingBroker, method, replacement)
    with pytest.raises(AssertionError, match="CLM-CACHE-1"):
        run_property(protocol_caches.protocol_caches_equal_the_reference)


def test_a_broker_that_never_tells_its_cache_its_last_local_client_left_is_caught(monkeypatch):
    """CLM-CACHE-1 compares every call the model says a broker must make: the unsubscriptions too, not only what
    the calls that were made did to the cache."""
    def silent(self, n, f, out):
        StrawmanBroker.unsub_received(self, n, f, out)

    _cache_calls(monkeypatch, "unsub_received", silent)


def test_a_broker_that_stores_a_publication_nowhere_but_at_the_publisher_is_caught(monkeypatch):
    """CLM-CACHE-1: the inserts when a publication is published are its holders by the model (placement.holders)."""
    real = CachingBroker.store

    def only_at_the_publisher(self, m, why, out):
        if why != "publish" or out.shared.publisher_broker[m] == self.id:
            real(self, m, why, out)

    _cache_calls(monkeypatch, "store", only_at_the_publisher)


def test_a_broker_that_stores_every_response_it_relays_is_caught(monkeypatch):
    """CLM-CACHE-1: a response's message is stored on its path only where the broker's placement would store it."""
    real = CachingBroker.response_received

    def keeps_everything(self, src, response, out):
        if not self.holds(response.message):
            self.store(response.message, "response", out)
        real(self, src, response, out)

    _cache_calls(monkeypatch, "response_received", keeps_everything)


def test_a_reached_broker_that_hits_nothing_is_caught(monkeypatch):
    """CLM-CACHE-1: a broker the model's request reaches, holding matches, must hit them."""
    real = CachingBroker.request_received

    def blind(self, x, request, out):
        cache = self.cache
        self.cache = type("Empty", (), {"order": lambda _: [], "hit": cache.hit})()
        try:
            real(self, x, request, out)
        finally:
            self.cache = cache

    _cache_calls(monkeypatch, "request_received", blind)


def test_asking_one_neighbor_walks_a_single_path_and_asking_all_branches():
    """Option `ask` "one" (spec/09 DEF-CACHE-7, seed 004 §3.3's alternative): each broker forwards a request to one
    neighbor at most, so the brokers it reaches form one path from the client; the default asks every candidate
    neighbor, and on the same run some request branches (so the path check can fail)."""
    def single_paths(variant):
        net, _ = run_caching(brokers=20, placement="candidate", policy="lru", capacity=15, messages=200, seed=3, variant=variant)
        records = net.shared.requests.values()
        return [len(r.reached) == max(len(stack) for stack in r.paths.values()) - 1 for r in records if r.reached]

    assert all(single_paths({"ask": "one"}))
    assert not all(single_paths({}))
