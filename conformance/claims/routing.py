"""The claims of spec/08-summary-routing.md: summary propagation and BROCLI
routing (CLM-SR-1 .. 7), the Siena baseline (CLM-SR-8) and the broadcast and
flooding baselines (CLM-SR-9)."""

from __future__ import annotations

from subsum.conformance.checks.routing import routes as routing
from subsum.conformance.checks.routing import churn as routing_machine
from subsum.conformance.checks.routing import siena
from subsum.conformance.claims.network import NI, NM
from subsum.conformance.claims.records import M, Check, Claim, example_of, property_of

#: The name of the summary routing checks (spec/08 names them so), whichever module holds them.
ROUTING = "conformance.checks.routing.routes"

RM = M + "routing."
#: Floors (conformance/runner/census.py): trees with neighbors of equal degree (the plan's tie rule), events
#: routed over ROUTE hops, deletions that needed a remote owner's answer (DELETE-QUERY), a network of one
#: broker and the empty filter.
ROUTING_MACHINE = Check("stateful", "conformance.checks.routing.routes.SummaryRoutingUnderChurn", routing_machine.run_summary_routing_machine,
                        floors={"net:single-broker": 5, "filter:empty": 5, "tree:equal-degree-neighbors": 10, "route:hops": 5, "delete:owners-answered": 5})
NSI = NI + "protocols.siena."
ROUTING_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-SR-1",
          "seed 000 §4.3.2, Example 4-3", "spec/08-summary-routing.md#clm-sr-1", (RM + "propagation_plan",), (NI + "protocols.summaries.plan.plan",),
          (example_of(routing.seed000_example_4_3_plan),)),
    Claim("CLM-SR-2",
          "seed 000 §4.3.2; seed note §8.2", "spec/08-summary-routing.md#clm-sr-2", (RM + "propagation_plan", RM + "propagation_target"),
          (NI + "protocols.summaries.plan.plan",), (property_of(routing.plan_is_a_forest_whose_sinks_partition, {"plan:equal-degree-neighbors": 15}),)),
    Claim("CLM-SR-3",
          "seed 000 §4.3.3, Example 4-3", "spec/08-summary-routing.md#clm-sr-3", (RM + "brocli_route", RM + "next_broker"),
          (NI + "protocols.summaries.plan.next_broker",), (example_of(routing.seed000_example_4_3_route),)),
    Claim("CLM-SR-4",
          "seed 000 §4.3.3; seed note §8.2", "spec/08-summary-routing.md#clm-sr-4", (RM + "brocli_route", RM + "next_broker"),
          (NI + "protocols.summaries.plan.next_broker",), (property_of(routing.routing_stops_and_hands_each_owner_the_event_once,
                                                                    {"route:owner-off-path": 20}),)),
    Claim("CLM-SR-5",
          "seed 000 §4.3.4, Example 4-4", "spec/08-summary-routing.md#clm-sr-5", (),
          (NI + "protocols.summaries.broker.SummaryBroker", "subsum.impl.summary.summary.Summary.rebuilds_for"),
          (example_of(routing.seed000_example_4_4_messages),)),
    Claim("CLM-SR-6",
          "seed 000 §4.3; seed note §8.2", "spec/08-summary-routing.md#clm-sr-6",
          (RM + "propagation_plan", RM + "brocli_route", RM + "interested_owners"),
          (NI + "protocols.summaries.broker.SummaryBroker", NI + "protocols.summaries.rounds.Rounds"),
          (ROUTING_MACHINE, example_of(routing_machine.subscribing_twice_then_once_unsubscribing, family=ROUTING))),
    Claim("CLM-SR-7",
          "derived (seed 000 §4.3.1)", "spec/08-summary-routing.md#clm-sr-7", (), ("subsum.impl.summary.summary.Summary.merge_in",),
          (example_of(routing.merge_refuses_colliding_brokers),)),
    Claim("CLM-SR-8",
          "seed 000 ch. 5 (baseline)", "spec/08-summary-routing.md#clm-sr-8",
          (NM + "ideal_delivery", NM + "ideal_tables", NM + "side_of", M + "covering.covers_subscription"),
          (NSI + "SienaBroker", NSI + "PlainSienaBroker", NI + "protocols.covering.filter_covers"),
          (property_of(siena.siena_delivers_exactly_with_fewer_subs),
           Check("stateful", "conformance.checks.routing.siena.SienaUnderChurn", lambda: siena.run_siena_machine(siena.SienaUnderChurn)),
           Check("stateful", "conformance.checks.routing.siena.PlainSienaUnderChurn", lambda: siena.run_siena_machine(siena.PlainSienaUnderChurn)),
           property_of(siena.covering_is_sound), property_of(siena.covering_is_exact_on_single_constraints),
           example_of(siena.covering_examples))),
    Claim("CLM-SR-9",
          "seed 000 ch. 5 (baselines i, ii)", "spec/08-summary-routing.md#clm-sr-9", (RM + "interested_owners",),
          (NI + "protocols.baselines.BroadcastBroker", NI + "protocols.baselines.FloodingBroker"), (property_of(routing.baselines_deliver_exactly),)),
)
