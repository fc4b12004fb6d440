"""The claims of spec/12-exploration.md (CLM-EXP-*): every interleaving of
one small scope a protocol, searched breadth first on the implementation's
brokers under the checks of spec/05 and spec/06."""

from __future__ import annotations

from subsum.conformance.claims.records import M, Claim, example_of
from subsum.conformance.explore import checks

NM = M + "network."
NP = "subsum.impl.network.protocols."
EXPLORE = "conformance.explore"

EXPLORATION_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-EXP-1", "derived (spec/12)", "spec/12-exploration.md#clm-exp-1", (NM + "ideal_tables", M + "strawman.on_sub"),
          (NP + "forwarding.StrawmanBroker",), (example_of(checks.every_strawman_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-2", "derived (spec/12)", "spec/12-exploration.md#clm-exp-2", (NM + "ideal_tables", M + "reconfiguration.deferred_removal"),
          (NP + "deferred.TimedBroker",), (example_of(checks.every_timed_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-3", "derived (spec/12)", "spec/12-exploration.md#clm-exp-3", (NM + "ideal_tables", M + "reconfiguration.flush_forward"),
          (NP + "deferred.NotifiedBroker",), (example_of(checks.every_notified_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-4", "derived (spec/12)", "spec/12-exploration.md#clm-exp-4", (NM + "ideal_tables",),
          (NP + "informed.InformedBroker",), (example_of(checks.every_informed_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-5", "derived (spec/12)", "spec/12-exploration.md#clm-exp-5", (NM + "ideal_tables", M + "covering.covers_subscription"),
          (NP + "siena.SienaBroker",), (example_of(checks.every_siena_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-6", "derived (spec/12)", "spec/12-exploration.md#clm-exp-6", (M + "routing.propagation_plan", M + "routing.brocli_route"),
          (NP + "summaries.broker.SummaryBroker",), (example_of(checks.every_summaries_interleaving, "exhaustive", EXPLORE),)),
    Claim("CLM-EXP-7", "derived (spec/12)", "spec/12-exploration.md#clm-exp-7", (NM + "ideal_tables", M + "placement.request_reach"),
          (NP + "caching.CachingBroker",), (example_of(checks.every_caching_interleaving, "exhaustive", EXPLORE),)),
)
