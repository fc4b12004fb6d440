"""The claims of spec/09-caching.md: the replacement policies against the
reference (CLM-CACHE-1 .. 4) and the caching protocol's placement, requests
and responses (CLM-CACHE-5 .. 10)."""

from __future__ import annotations

from subsum.conformance.checks.caching import policies as caching
from subsum.conformance.checks.caching import in_protocol as protocol_caches
from subsum.conformance.checks.caching import request_response as requests
from subsum.conformance.claims.records import M, Check, Claim, example_of, property_of

MC = M + "caching."
IC = "subsum.impl.caching.policies."
#: Floors of each machine: operations at equal times (the tie rules) and evictions at capacity 1.
CACHE_MACHINES = tuple(Check("stateful", f"conformance.checks.caching.policies.CacheAgainstReference[{policy}]",
                             lambda policy=policy: caching.run_cache_machine(caching.machine_for(policy)),
                             floors={"time:equal": 20, "capacity-1:evicted": 3})
                       for policy in ("fifo", "regdeg", "lfu", "lru"))
#: The brokers' caches inside the caching protocol at bounded capacity (conformance/checks/caching/in_protocol.py), with
#: floors: evictions under each policy, hits of requests and unsubscriptions at bounded caches.
PROTOCOL_CACHES = property_of(protocol_caches.protocol_caches_equal_the_reference,
                              floors={**{f"evicted:{policy}": 20 for policy in ("fifo", "regdeg", "lfu", "lru")},
                                      "request-hit:bounded": 30, "unsubscribe:bounded": 10})
#: The cache machine of `subsum verify --cache X`: the plug-in against the reference of the policy it names.
PLUGIN_CACHE_MACHINE = Check("stateful", "conformance.checks.caching.policies.CacheAgainstReference", lambda: caching.run_cache_machine())


CACHE_POLICY_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CACHE-1",
          "seed 004 §3.4; seed 003 §3.4, §4.6", "spec/09-caching.md#clm-cache-1",
          (MC + "insert", MC + "hit", MC + "unsubscribed", MC + "victim", MC + "order"),
          (IC + "FIFO", IC + "RegenerationDegradation", IC + "RateLFU", IC + "LRU"), CACHE_MACHINES + (PROTOCOL_CACHES,)),
    Claim("CLM-CACHE-2",
          "seed note 004 §6", "spec/09-caching.md#clm-cache-2", (MC + "victim", MC + "rate", MC + "insert"), (), CACHE_MACHINES),
    Claim("CLM-CACHE-3",
          "derived (peer: cachetools)", "spec/09-caching.md#clm-cache-3", (), (IC + "FIFO", IC + "LRU"),
          (property_of(caching.agrees_with_cachetools),)),
    Claim("CLM-CACHE-4",
          "seed 003 §6 (seed note 003 §6)", "spec/09-caching.md#clm-cache-4", (MC + "hit", MC + "victim"),
          (IC + "RegenerationDegradation", IC + "LRU"), (property_of(caching.regeneration_without_degradation_is_lru),)),
)


MP = M + "placement."
IN = "subsum.impl.network.protocols.caching."
#: floors: responses that cross three brokers or more (a relay that skips a hop shows only there), and
#: requests reaching two holders of one message (duplicates to suppress).
REQUESTS_CHECK = property_of(requests.requests_and_responses, floors={"response:long": 10, "response:short": 20, "request:held-twice": 10})
CACHE_PROTOCOL_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CACHE-5",
          "seed 004 §3.5; seed note 004 §6", "spec/09-caching.md#clm-cache-5", (MP + "holders", MP + "is_leaf", MP + "delivery_brokers"),
          (IN + "CachingBroker.is_holder", IN + "CachingBroker.event_received"), (property_of(requests.placements_nest),)),
    Claim("CLM-CACHE-6",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-6", (MP + "request_reach",),
          (IN + "CachingBroker.pass_response", IN + "CachingBroker.response_received"), (REQUESTS_CHECK, example_of(requests.seed003_request_path))),
    Claim("CLM-CACHE-7",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-7", (MP + "request_reach", MP + "filters_overlap"),
          (IN + "CachingBroker.request_received", IN + "filters_overlap"), (REQUESTS_CHECK, property_of(requests.overlap_is_sound))),
    Claim("CLM-CACHE-8",
          "seed 004 §3.3 (duplicate suppression); seed note 004 §6", "spec/09-caching.md#clm-cache-8", (),
          (IN + "CachingBroker.response_received",), (REQUESTS_CHECK,)),
    Claim("CLM-CACHE-9",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-9", (MP + "request_reach",),
          (IN + "CachingBroker.request_received", IN + "CachingBroker.response_received"), (REQUESTS_CHECK,)),
    Claim("CLM-CACHE-10",
          "seed 003 §2.6 (thesis §3.3)", "spec/09-caching.md#clm-cache-10", (MP + "request_reach",),
          (IN + "CachingBroker.request_received", IN + "request"), (example_of(requests.seed003_request_path),)),
)
