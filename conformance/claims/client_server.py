"""The claims of spec/10-client-server.md (CLM-CS-*): the request policies
of the client-server system, worked examples and the simulator against the
reference."""

from __future__ import annotations

from subsum.conformance.checks.caching import client_server
from subsum.conformance.claims.records import M, Claim, example_of, property_of


MCS = M + "client_server."
CLIENT_SERVER_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CS-1", "seed 003 §4.3, Figs 1–2", "spec/10-client-server.md#clm-cs-1", (MCS + "serve", MCS + "at_path"), (),
          (example_of(client_server.seed003_server_cache),)),
    Claim("CLM-CS-2", "seed 003 §4.4, Figs 3–4", "spec/10-client-server.md#clm-cs-2", (MCS + "serve",), (),
          (example_of(client_server.seed003_server_one_hop_away),)),
    Claim("CLM-CS-3", "seed 003 §4.5, Figs 5–6", "spec/10-client-server.md#clm-cs-3", (MCS + "serve",), (),
          (example_of(client_server.seed003_server_subscription),)),
    Claim("CLM-CS-4", "seed note 003 §6", "spec/10-client-server.md#clm-cs-4", (MCS + "serve",), (),
          (property_of(client_server.policies_compare_on_identical_state),)),
    Claim("CLM-CS-5", "derived (seed 003 §4)", "spec/10-client-server.md#clm-cs-5", (MCS + "serve",),
          ("subsum.impl.network.protocols.client_server.ClientServerBroker", "subsum.impl.network.protocols.client_server.request"),
          (property_of(client_server.simulator_equals_reference, floors=client_server.CS_FLOORS),)),
    Claim("CLM-CS-6", "derived (seed 003 §5; DEF-CS-4)", "spec/10-client-server.md#clm-cs-6", (MCS + "serve",),
          ("subsum.impl.network.workloads.client_server.run_client_server",
           "subsum.impl.network.workloads.client_server_direct.run_client_server_direct"),
          (property_of(client_server.direct_driver_equals_simulator),)),
)
