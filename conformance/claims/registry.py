"""The registry: every claim of spec/, with the checks that establish it, in
the order `subsum claims` and `subsum verify` list them (the order the
families were registered in, which the claim index of spec/README.md
follows)."""

from __future__ import annotations

from subsum.conformance.claims.caching import CACHE_POLICY_CLAIMS, CACHE_PROTOCOL_CLAIMS
from subsum.conformance.claims.client_server import CLIENT_SERVER_CLAIMS
from subsum.conformance.claims.exploration import EXPLORATION_CLAIMS
from subsum.conformance.claims.matching import MATCHING_CLAIMS
from subsum.conformance.claims.network import NETWORK_CLAIMS, RECONFIG_CLAIMS
from subsum.conformance.claims.pipeline import PIPELINE_CLAIMS
from subsum.conformance.claims.records import Claim
from subsum.conformance.claims.routing import ROUTING_CLAIMS
from subsum.conformance.claims.summaries import SUMMARY_CLAIMS

CLAIMS: tuple[Claim, ...] = (MATCHING_CLAIMS + SUMMARY_CLAIMS + NETWORK_CLAIMS + RECONFIG_CLAIMS + ROUTING_CLAIMS + PIPELINE_CLAIMS
                             + CACHE_POLICY_CLAIMS + CACHE_PROTOCOL_CLAIMS + CLIENT_SERVER_CLAIMS + EXPLORATION_CLAIMS)
