"""The claims of spec/05-network.md (CLM-NET-*: the broker network against
the ideal routing state and the plain handlers) and spec/06-reconfiguration.md
(CLM-RCF-*: the deferred and informed reconfiguration protocols). The
reconfiguration checks are named `conformance.checks.network.reconfig.<function>` whichever
conformance.checks.network.reconfig* module holds them."""

from __future__ import annotations

from subsum.conformance.checks.network import forwarding as network
from subsum.conformance.checks.network import reconfig
from subsum.conformance.checks.network import reconfig_scenarios
from subsum.conformance.claims.records import M, Check, Claim, example_of, property_of

#: The name of the reconfiguration checks (spec/06 names them so).
RECONFIG = "conformance.checks.network.reconfig"

NM = M + "network."
NS = M + "strawman."
NR = M + "reconfiguration."
#: The differential machine reads every message a broker sends: CLM-NET-6, and CLM-NET-4 apart from the simulator's counter.
NET_DIFFERENTIAL = Check("stateful", "conformance.checks.network.forwarding.StrawmanDifferential", network.run_differential_state_machine,
                         floors=network.HANDLER_FLOORS)
NI = "subsum.impl.network."
NET_CHURN = Check("stateful", "conformance.checks.network.forwarding.StrawmanUnderChurn", network.run_strawman_state_machine, floors=network.EDGE_FLOORS)
NETWORK_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-NET-1",
          "seed 002 §3.2, §4.1; seed note §6.3(9)", "spec/05-network.md#clm-net-1", (NM + "overlay",), (NI + "sim.Network",),
          (NET_CHURN,)),
    Claim("CLM-NET-2",
          "seed 002 §2.4; seed note §6.3(1, 7)", "spec/05-network.md#clm-net-2", (NM + "ideal_tables",), (NI + "protocols.forwarding.StrawmanBroker",),
          (NET_CHURN,)),
    Claim("CLM-NET-3",
          "seed 002 §2.5; seed note §6.3(2, 3)", "spec/05-network.md#clm-net-3", (NM + "ideal_delivery", NM + "side_of"),
          (NI + "protocols.forwarding.StrawmanBroker.event_received",),
          (NET_CHURN,)),
    Claim("CLM-NET-4", "seed 002 §2.2 (REDS); seed note §6.3(6)",
          "spec/05-network.md#clm-net-4", (), (NI + "sim.Network.send",),
          (NET_DIFFERENTIAL,)),
    Claim("CLM-NET-5",
          "seed 002 §3.4 Observation 3; seed note §6.3(10)", "spec/05-network.md#clm-net-5", (NM + "reconfiguration_path", NM + "ideal_tables"), (),
          (property_of(network.ideal_changes_only_on_the_reconfiguration_path),)),
    Claim("CLM-NET-6",
          "seed 002 §2.3, §3.3; derived", "spec/05-network.md#clm-net-6",
          (NS + "on_sub", NS + "on_unsub", NS + "event_targets", NS + "on_remove_link", NS + "on_add_link"), (NI + "protocols.forwarding.StrawmanBroker",),
          (NET_DIFFERENTIAL,)),
    Claim("CLM-NET-7",
          "seed 002 §2.3 (REDS)", "spec/05-network.md#clm-net-7", (NS + "on_sub", NS + "on_unsub"),
          (NI + "protocols.forwarding.StrawmanBroker.sub_received", NI + "protocols.forwarding.StrawmanBroker.unsub_received"),
          (example_of(network.stale_messages_from_former_neighbors_are_ignored),)),
)


ND = NI + "protocols.deferred."
NIF = NI + "protocols.informed."
RCF_MACHINES = tuple(Check("stateful", f"conformance.checks.network.reconfig.{m.__name__}", (lambda m=m: reconfig.run_machine(m)),
                           floors=reconfig.PROTOCOL_FLOORS[m.protocol])
                     for m in (reconfig.TimedUnderChurn, reconfig.NotifiedUnderChurn, reconfig.InformedUnderChurn))


RECONFIG_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-RCF-1",
          "seed 002 §3.6; seed note §6.3(7)", "spec/06-reconfiguration.md#clm-rcf-1", (NM + "ideal_tables",),
          (ND + "TimedBroker", ND + "NotifiedBroker", NIF + "InformedBroker"), RCF_MACHINES),
    Claim("CLM-RCF-2",
          "seed note §6.3(11, 12)", "spec/06-reconfiguration.md#clm-rcf-2", (NM + "ideal_tables", NM + "swapped", NM + "ideal_delivery"),
          (ND + "TimedBroker.manage_removed_link",), (property_of(reconfig_scenarios.deferral_window_keeps_every_route, family=RECONFIG),)),
    Claim("CLM-RCF-3",
          "seed 002 §3.5.2 (REDS); seed note §6.3(8)", "spec/06-reconfiguration.md#clm-rcf-3", (),
          (ND + "TimedBroker",), (property_of(reconfig_scenarios.timed_with_timeout_zero_is_strawman, family=RECONFIG),)),
    Claim("CLM-RCF-4", "seed 002 §3.5.2", "spec/06-reconfiguration.md#clm-rcf-4",
          (NR + "is_leaf_without", NR + "deferred_removal"), (ND + "TimedBroker.manage_removed_link",),
          (example_of(reconfig_scenarios.leaf_brokers_start_no_timer, family=RECONFIG), RCF_MACHINES[0])),
    Claim("CLM-RCF-5",
          "seed 002 §3.5.3 (REDS); seed note §6.3(13)", "spec/06-reconfiguration.md#clm-rcf-5", (NR + "flush_forward",),
          (ND + "NotifiedBroker.flush_received",),
          (property_of(reconfig_scenarios.unknown_flush_floods_once_and_dies, family=RECONFIG),
           example_of(reconfig_scenarios.late_flush_is_passed_on, family=RECONFIG), RCF_MACHINES[1])),
    Claim("CLM-RCF-6",
          "seed 002 §3.5.4; seed note §6.3(14)", "spec/06-reconfiguration.md#clm-rcf-6", (NR + "only_subscribed_by", NR + "activation"),
          (NIF + "InformedBroker.activate",), (property_of(reconfig_scenarios.held_back_subscriptions_wait_for_the_timer, family=RECONFIG),)),
    Claim("CLM-RCF-7",
          "seed 002 §3.5; derived", "spec/06-reconfiguration.md#clm-rcf-7",
          (NR + "deferred_removal", NR + "deferred_unsubscribe", NR + "flush_forward", NR + "only_subscribed_by", NR + "announced_to",
           NR + "activation", NR + "released"), (ND + "TimedBroker", ND + "NotifiedBroker", NIF + "InformedBroker"), RCF_MACHINES),
    Claim("CLM-RCF-8",
          "seed 002 §3.3 Fig. 2; seed note §6.3(11)", "spec/06-reconfiguration.md#clm-rcf-8", (NM + "ideal_tables", NM + "swapped"),
          (NI + "protocols.forwarding.StrawmanBroker.remove_link_to",), (example_of(reconfig_scenarios.strawman_has_a_routing_gap, family=RECONFIG),)),
)
