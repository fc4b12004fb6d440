"""The claims of spec/12-exploration.md (CLM-EXP-*): every interleaving of
one small scope a protocol, searched breadth first on the implementation's
brokers under the checks of spec/05 and spec/06."""

from __future__ import annotations

from subsum.conformance.claims.records import M, Claim, example_of
from subsum.conformance.explore import checks

NM = M + "network."
NP = "subsum.impl.network.protocols."
EXPLORE = "conformance.explore"


def _explored(number: int, model: tuple[str, ...], broker: str, check) -> Claim:
    """CLM-EXP-`number`: `broker` (a class under NP) against the model's `model` names, searched by `check`."""
    return Claim(f"CLM-EXP-{number}", "derived (spec/12)", f"spec/12-exploration.md#clm-exp-{number}", model,
                 (NP + broker,), (example_of(check, "exhaustive", EXPLORE),))


EXPLORATION_CLAIMS: tuple[Claim, ...] = (
    _explored(1, (NM + "ideal_tables", M + "strawman.on_sub"), "forwarding.StrawmanBroker", checks.every_strawman_interleaving),
    _explored(2, (NM + "ideal_tables", M + "reconfiguration.deferred_removal"), "deferred.TimedBroker",
              checks.every_timed_interleaving),
    _explored(3, (NM + "ideal_tables", M + "reconfiguration.flush_forward"), "deferred.NotifiedBroker",
              checks.every_notified_interleaving),
    _explored(4, (NM + "ideal_tables",), "informed.InformedBroker", checks.every_informed_interleaving),
    _explored(5, (NM + "ideal_tables", M + "covering.covers_subscription"), "siena.SienaBroker", checks.every_siena_interleaving),
    _explored(6, (M + "routing.propagation_plan", M + "routing.brocli_route"), "summaries.broker.SummaryBroker",
              checks.every_summaries_interleaving),
    _explored(7, (NM + "ideal_tables", M + "placement.request_reach"), "caching.CachingBroker", checks.every_caching_interleaving),
)
