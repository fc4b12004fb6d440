"""The claim registry: every claim of spec/, with the checks that establish it.

`subsum verify` runs these checks; `subsum claims` prints the traceability
matrix (spec section -> model function -> impl function(s) -> checks); the
test suite runs the same checks, and checks that this registry and the index
in spec/README.md list the same claims.

A claim's statement is written once, in its spec section. The registry holds
no statement text: `Claim.statement` reads conformance/statements.py, which
scripts/gen_claims.py generates from spec/ (the installed package has no
spec/ to read) together with the claim index of spec/README.md.
"""

from __future__ import annotations

import time
import traceback
from typing import Callable, Mapping

import attrs

from subsum.conformance import budget, census, profiles, violations
from subsum.conformance import (caching, client_server, engines, examples, native_json, network, properties, reconfig, requests,
                                routing, siena, spark, spark_readers, spark_traces, summaries)
from subsum.conformance.proofs import prove_all, rules_of

KINDS = ("proof", "property", "stateful", "example")


#: A check's time budget under `ci`, in seconds, unless it names its own (conformance/profiles.py).
DEFAULT_BUDGET = 120.0


@attrs.frozen
class Check:
    """One check of a claim. `floors` maps census tags (conformance/census.py)
    to the least number of times the check's generators must produce them;
    `budget` is its time limit under `ci`, in seconds."""

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    name: str
    run: Callable[[], object]
    floors: Mapping[str, int] = attrs.field(factory=dict, eq=False)
    budget: float = DEFAULT_BUDGET


@attrs.frozen
class Claim:
    id: str
    source: str
    spec: str
    model: tuple[str, ...]
    impl: tuple[str, ...]
    checks: tuple[Check, ...]

    @property
    def statement(self) -> str:
        """The claim's statement, as its spec section words it (conformance/statements.py)."""
        # Imported here, not at the top, so that scripts/gen_claims.py can load
        # the registry and rewrite statements.py when that file is missing or broken.
        from subsum.conformance.statements import STATEMENTS

        try:
            return STATEMENTS[self.id]
        except KeyError:
            raise LookupError(f"{self.id} has no statement in conformance/statements.py; "
                              "state it in spec/ and run scripts/gen_claims.py") from None


def _proof(prefixes: tuple[str, ...]) -> Check:
    def run() -> str:
        results = prove_all(rules_of(prefixes))
        assert results, f"no rules start with {prefixes}"
        failed = [r for r in results if r.status != "proved"]
        assert not failed, "not proved: " + "; ".join(f"{r.id} {r.status} {r.counterexample}" for r in failed)
        return f"{len(results)} proved"

    return Check("proof", f"z3: rules {', '.join(p.rstrip('-') for p in prefixes)}", run)


def _property(fn, floors: Mapping[str, int] | None = None) -> Check:
    module = fn.__module__.replace("subsum.", "")
    return Check("property", f"{module}.{fn.__name__}", lambda: properties.run_property(fn), floors=floors or {})


def _example(fn, kind: str = "example") -> Check:
    return Check(kind, f"{fn.__module__.replace('subsum.', '')}.{fn.__name__}", fn)


def _sum_property(fn, floors: Mapping[str, int] | None = None) -> Check:
    return Check("property", f"conformance.summaries.{fn.__name__}", lambda: properties.run_property(fn), floors=floors or {})


M = "subsum.model."
IMPL_ENGINES = tuple(f"subsum.impl.matching.{m}" for m in (
    "brute.BruteForceEngine", "counting.CountingEngine", "indexed.IndexedEngine", "rab.RABEngine", "vectorized.VectorizedEngine"))

VECTORIZED_CHUNKS = _property(engines.vectorized_in_small_chunks)
CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-DATA-1",
          "derived", "spec/01-data-model.md#clm-data-1", ("subsum.core.types.check_value", "subsum.core.types.Constraint"), (),
          (_example(examples.invalid_values_cannot_be_built),)),
    Claim("CLM-DATA-2", "seed 001 §5.2; derived", "spec/01-data-model.md#clm-data-2",
          ("subsum.core.types.normalize_scalar", M + "semantics.satisfies"), (), (_property(properties.signed_zero_is_one_value),)),
    Claim("CLM-DATA-3", "seed 001 §5.1(13)",
          "spec/01-data-model.md#clm-data-3", (M + "semantics.satisfies",), (), (_property(properties.int_never_satisfies_float),)),
    Claim("CLM-DATA-4",
          "seed 001 §5.2", "spec/01-data-model.md#clm-data-4", (M + "semantics.operator_holds",), (),
          (_property(properties.empty_pattern_matches_every_string),)),
    Claim("CLM-DATA-5", "seed 001 §5.2",
          "spec/01-data-model.md#clm-data-5", ("subsum.core.types.Subscription", M + "semantics.matches"), (),
          (_property(properties.duplicate_constraints_collapse),)),
    Claim("CLM-DATA-6", "derived",
          "spec/01-data-model.md#clm-data-6", ("subsum.core.filters.parse_filter", "subsum.core.filters.format_filter"), (),
          (_property(properties.filter_round_trip),)),
    Claim("CLM-SMT-1", "derived",
          "spec/02-covering.md#clm-smt-1", (M + "smt.operator_holds", M + "semantics.operator_holds"), (),
          (_property(properties.smt_agrees_with_semantics),)),
    Claim("CLM-COV-1", "seed 001 §1.3 Lemma 1, Table 1, Theorem 1",
          "spec/02-covering.md#clm-cov-1", (M + "rules.RULES", M + "covering.covers_constraint"), (),
          (_proof(("T1-",)), _property(properties.covers_constraint_agrees_with_subscription_covering))),
    Claim("CLM-COV-2", "seed 000 §1.5", "spec/02-covering.md#clm-cov-2",
          (M + "rules.RULES",), (), (_proof(("S-",)),)),
    Claim("CLM-COV-3", "seed 001 Theorem 1; derived",
          "spec/02-covering.md#clm-cov-3", (M + "covering.covers_by_rules", M + "covering.covers_constraint"), (),
          (_proof(("T1-", "S-", "T2-", "D-")), _property(properties.rules_imply_exact_covering))),
    Claim("CLM-COV-4", "seed 001 Theorem 2",
          "spec/02-covering.md#clm-cov-4", (M + "covering.constraints_equal",), (),
          (_proof(("T2-",)), _property(properties.identical_constraints_are_equal))),
    Claim("CLM-COV-5", "seed 001 §1.3 (Theorem 1 is sufficient, not necessary)",
          "spec/02-covering.md#clm-cov-5", (M + "covering.covers_by_rules", M + "covering.covers_constraint"), (),
          (_example(examples.rules_are_not_complete),)),
    Claim("CLM-COV-6",
          "seed 000 §1.4; derived", "spec/02-covering.md#clm-cov-6",
          (M + "covering.covers_subscription", M + "covering.covering_counterexample"), (),
          (_property(properties.covers_subscription_agrees_with_sampling),)),
    Claim("CLM-COV-7", "seed 000 §2.3.2 vs Example 4-2",
          "spec/02-covering.md#clm-cov-7", (M + "covering.covers_constraint",), (), (_example(examples.prefix_semantics_of_thesis_notation),)),
    Claim("CLM-COV-8", "seed 001 Def 7; derived",
          "spec/02-covering.md#clm-cov-8", (M + "covering.constraint_is_satisfiable", M + "covering.covers_constraint"), (),
          (_example(examples.unsatisfiable_constraints_are_covered),)),
    Claim("CLM-MATCH-1", "seed 001 §2, Def 9",
          "spec/03-matching.md#clm-match-1", (M + "semantics.counting_match", M + "semantics.matches"), (),
          (_property(properties.counting_equals_exact),)),
    Claim("CLM-MATCH-2", "seed 001 Def 9, §5.2", "spec/03-matching.md#clm-match-2",
          (M + "semantics.matches", M + "semantics.counting_match"), (), (_property(properties.empty_subscription_matches_every_event),)),
    Claim("CLM-MATCH-3", "seed 001 §5.2",
          "spec/03-matching.md#clm-match-3", (M + "semantics.satisfied_pair_count", "subsum.core.types.Event"), (),
          (_example(examples.counting_needs_the_map_property),)),
    Claim("CLM-ENG-1",
          "seed 001 §5.1(1)", "spec/03-matching.md#clm-eng-1", (M + "semantics.match_batch",), IMPL_ENGINES,
          (_property(engines.engines_agree_with_model, engines.MIXED_FLOORS),
           _property(engines.engines_agree_on_strings, engines.STRING_FLOORS),
           _property(engines.engines_agree_on_boundaries, engines.BOUNDARY_FLOORS), VECTORIZED_CHUNKS)),
    Claim("CLM-ENG-2",
          "derived", "spec/03-matching.md#clm-eng-2", (M + "semantics.match_batch",), IMPL_ENGINES,
          (Check("stateful", "conformance.engines.EnginesAgainstModel", engines.run_engines_state_machine,
                 floors=engines.TYPE_OPERATOR_FLOORS),)),
    Claim("CLM-ENG-3",
          "seed 001 §5.1(2)", "spec/03-matching.md#clm-eng-3", (M + "semantics.match_batch",), IMPL_ENGINES,
          (_property(engines.batch_split_is_union),)),
    Claim("CLM-ENG-4",
          "seed 001 §5.1(3)", "spec/03-matching.md#clm-eng-4", (M + "semantics.match_batch",), IMPL_ENGINES,
          (_property(engines.duplicate_event_duplicates_its_line),)),
    Claim("CLM-ENG-5",
          "seed 001 §5.1(4)", "spec/03-matching.md#clm-eng-5", (M + "semantics.match_batch",), IMPL_ENGINES,
          (_property(engines.order_does_not_matter),)),
    Claim("CLM-ENG-6",
          "seed 001 §5.1(5), §2.6", "spec/03-matching.md#clm-eng-6", (), ("subsum.impl.matching.rab.RABEngine", "subsum.impl.matching.indexed.IndexedEngine"),
          (_property(engines.deduplication_changes_only_probes),)),
    Claim("CLM-ENG-7",
          "seed 001 Theorem 1, §1.4, §5.1(7)", "spec/03-matching.md#clm-eng-7", (M + "covering.covers_by_rules", M + "semantics.operator_holds"),
          ("subsum.impl.matching.cindex.OrderedLeaf",), (_property(engines.ordered_lists_are_containment_ordered),)),
    Claim("CLM-ENG-8",
          "derived (seed 001 §5.1)", "spec/03-matching.md#clm-eng-8", (), IMPL_ENGINES + ("subsum.impl.matching.base.MatchStats",),
          (_property(engines.work_counters_add_up), VECTORIZED_CHUNKS)),
    Claim("CLM-EX-1", "seed 000 Fig. 2-2, Fig. 4-1",
          "spec/03-matching.md#clm-ex-1", (M + "semantics.matches",), (), (_example(examples.seed000_running_example),)),
    Claim("CLM-PROVER-1", "derived",
          "spec/02-covering.md#clm-prover-1", (M + "rules.soundness_formula",), (), (_example(examples.prover_refutes_wrong_rules, kind="proof"),)),
)


SA = M + "abstraction."
SM = M + "summaries."
SI = "subsum.impl.summary."
SUMMARY_IMPL = (SI + "owner.OwnerSummary", SI + "summary.Summary", SI + "structures.AACS", SI + "structures.SACS")
SUMMARY_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-SUM-1", "seed 000 §4.2.1; derived",
          "spec/04-summaries.md#clm-sum-1", (SA + "abstraction", SA + "normalized_covers"), (SI + "normalize.abstraction", SI + "normalize.pattern_covers"),
          (_sum_property(summaries.abstraction_agrees_with_model), _example(summaries.covering_agrees_exhaustively))),
    Claim("CLM-SUM-2",
          "seed 000 §4.2.3 (implied); seed note §4, §7", "spec/04-summaries.md#clm-sum-2", (SM + "reference_summary", SM + "summary_match"),
          SUMMARY_IMPL, (_sum_property(summaries.summary_has_no_false_negatives, summaries.SUMMARY_FLOORS),
                         Check("proof", "conformance.summaries.prove_generalizations", summaries.prove_generalizations),
                         _sum_property(summaries.rows_cover_members_by_z3))),
    Claim("CLM-SUM-3", "seed note §4 (implied); derived",
          "spec/04-summaries.md#clm-sum-3", (SM + "summary_is_exact", SM + "summary_match"), (SI + "summary.Summary.match",),
          (_sum_property(summaries.exact_rows_give_exact_matches), _sum_property(summaries.exactness_implies_equality))),
    Claim("CLM-SUM-4",
          "seed 000 §4.2.1; seed note §8.2", "spec/04-summaries.md#clm-sum-4", (SM + "numeric_rows", SM + "constraint_rows"),
          (SI + "structures.AACS", SI + "structures.SACS"), (_sum_property(summaries.summary_structure_holds),)),
    Claim("CLM-SUM-5",
          "seed 000 §4.2, Algorithm 4-1", "spec/04-summaries.md#clm-sum-5", (SM + "reference_summary", SM + "summary_counters"), SUMMARY_IMPL,
          (_sum_property(summaries.summary_has_no_false_negatives), _sum_property(summaries.lookups_equal_satisfied_rows))),
    Claim("CLM-SUM-6",
          "seed note §8.2; derived", "spec/04-summaries.md#clm-sum-6", (SM + "numeric_rows",), (SI + "acgt.IntervalForest", SI + "acgt.ConstraintForest"),
          (_sum_property(summaries.numeric_rows_are_canonical), _example(summaries.contains_policy_depends_on_order))),
    Claim("CLM-SUM-7",
          "seed 000 §4.2.4, §4.3.4", "spec/04-summaries.md#clm-sum-7", (SM + "reference_summary",),
          (SI + "acgt.IntervalForest", SI + "acgt.ConstraintForest", SI + "summary.Summary.apply"),
          (_sum_property(summaries.insert_then_delete_restores), _example(summaries.contains_policy_round_trip))),
    Claim("CLM-SUM-8",
          "seed 000 §4.3.1, §4.3.4", "spec/04-summaries.md#clm-sum-8", (SM + "numeric_rows",), (SI + "summary.Summary.merge_in", SI + "summary.Summary.apply"),
          (_sum_property(summaries.merge_laws), _sum_property(summaries.history_plus_delta_equals_scratch),
           _example(summaries.merge_assigns_ids_by_order))),
    Claim("CLM-SUM-9",
          "seed 000 §4.2.2, Fig. 4-4", "spec/04-summaries.md#clm-sum-9", (), (SI + "ids.IdLayout",),
          (_sum_property(summaries.ids_round_trip), _example(summaries.seed000_fig_4_4_id))),
    Claim("CLM-SUM-10",
          "seed note §4, §7 (recommended)", "spec/04-summaries.md#clm-sum-10", (SM + "recheck",), (SI + "owner.OwnerSummary.recheck",),
          (_sum_property(summaries.summary_has_no_false_negatives),)),
    Claim("CLM-SUM-11",
          "seed 000 §4.2.4, §4.3.4", "spec/04-summaries.md#clm-sum-11", (SM + "reference_summary",), SUMMARY_IMPL + (SI + "history.History",),
          (Check("stateful", "conformance.summaries.SummariesUnderChurn", summaries.run_summaries_state_machine),
           _example(summaries.history_survives_slot_reuse_and_late_deletions))),
    Claim("CLM-SUM-12", "seed 000 Example 4-1, Figs. 4-1 .. 4-3",
          "spec/04-summaries.md#clm-sum-12", (SM + "summary_counters",), (SI + "summary.Summary.counters",), (_example(summaries.seed000_example_4_1),)),
    Claim("CLM-SUM-13",
          "seed 000 Example 4-2, Figs. 4-5, 4-10, 4-11", "spec/04-summaries.md#clm-sum-13", (SM + "reference_summary",),
          (SI + "acgt.ConstraintForest", SI + "acgt.IntervalForest"),
          (_example(summaries.seed000_example_4_2),)),
    Claim("CLM-SUM-14",
          "seed 000 Example 4-4, Figs. 4-13, 4-14", "spec/04-summaries.md#clm-sum-14", (), (SI + "history.History", SI + "history.Directory"),
          (_example(summaries.seed000_example_4_4),)),
    Claim("CLM-SUM-15",
          "seed note §4 (Example 4-2 rows)", "spec/04-summaries.md#clm-sum-15", (SM + "summary_match", SM + "recheck"), (SI + "owner.OwnerSummary.recheck",),
          (_example(summaries.seed000_false_positive),)),
    Claim("CLM-SUM-16",
          "derived", "spec/04-summaries.md#clm-sum-16", (),
          (SI + "summary_file.to_json", SI + "summary_file.from_json", SI + "wire.to_bytes", SI + "wire.from_bytes"),
          (_sum_property(summaries.summary_formats_round_trip),)),
)

CLAIMS = CLAIMS + SUMMARY_CLAIMS


NM = M + "network."
NS = M + "strawman."
NR = M + "reconfiguration."
#: The differential machine reads every message a broker sends: CLM-NET-6, and CLM-NET-4 apart from the simulator's counter.
NET_DIFFERENTIAL = Check("stateful", "conformance.network.StrawmanDifferential", network.run_differential_state_machine,
                         floors=network.HANDLER_FLOORS)
NI = "subsum.impl.network."
NETWORK_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-NET-1",
          "seed 002 §3.2, §4.1; seed note §6.3(9)", "spec/05-network.md#clm-net-1", (NM + "overlay",), (NI + "sim.Network",),
          (Check("stateful", "conformance.network.StrawmanUnderChurn", network.run_strawman_state_machine),)),
    Claim("CLM-NET-2",
          "seed 002 §2.4; seed note §6.3(1, 7)", "spec/05-network.md#clm-net-2", (NM + "ideal_tables",), (NI + "protocols.forwarding.StrawmanBroker",),
          (Check("stateful", "conformance.network.StrawmanUnderChurn", network.run_strawman_state_machine),)),
    Claim("CLM-NET-3",
          "seed 002 §2.5; seed note §6.3(2, 3)", "spec/05-network.md#clm-net-3", (NM + "ideal_delivery", NM + "side_of"),
          (NI + "protocols.forwarding.StrawmanBroker.event_received",),
          (Check("stateful", "conformance.network.StrawmanUnderChurn", network.run_strawman_state_machine),)),
    Claim("CLM-NET-4", "seed 002 §2.2 (REDS); seed note §6.3(6)",
          "spec/05-network.md#clm-net-4", (), (NI + "sim.Network.send",),
          (NET_DIFFERENTIAL,)),
    Claim("CLM-NET-5",
          "seed 002 §3.4 Observation 3; seed note §6.3(10)", "spec/05-network.md#clm-net-5", (NM + "reconfiguration_path", NM + "ideal_tables"), (),
          (Check("property", "conformance.network.ideal_changes_only_on_the_reconfiguration_path",
                 lambda: properties.run_property(network.ideal_changes_only_on_the_reconfiguration_path)),)),
    Claim("CLM-NET-6",
          "seed 002 §2.3, §3.3; derived", "spec/05-network.md#clm-net-6",
          (NS + "on_sub", NS + "on_unsub", NS + "event_targets", NS + "on_remove_link", NS + "on_add_link"), (NI + "protocols.forwarding.StrawmanBroker",),
          (NET_DIFFERENTIAL,)),
    Claim("CLM-NET-7",
          "seed 002 §2.3 (REDS)", "spec/05-network.md#clm-net-7", (NS + "on_sub", NS + "on_unsub"),
          (NI + "protocols.forwarding.StrawmanBroker.sub_received", NI + "protocols.forwarding.StrawmanBroker.unsub_received"),
          (_example(network.stale_messages_from_former_neighbours_are_ignored),)),
)

CLAIMS = CLAIMS + NETWORK_CLAIMS


ND = NI + "protocols.deferred."
NIF = NI + "protocols.informed."
RCF_MACHINES = tuple(Check("stateful", f"conformance.reconfig.{m.__name__}", (lambda m=m: reconfig.run_machine(m)),
                           floors=reconfig.PROTOCOL_FLOORS[m.protocol])
                     for m in (reconfig.TimedUnderChurn, reconfig.NotifiedUnderChurn, reconfig.InformedUnderChurn))


def _rcf_property(fn) -> Check:
    return Check("property", f"conformance.reconfig.{fn.__name__}", lambda: properties.run_property(fn))


RECONFIG_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-RCF-1",
          "seed 002 §3.6; seed note §6.3(7)", "spec/06-reconfiguration.md#clm-rcf-1", (NM + "ideal_tables",),
          (ND + "TimedBroker", ND + "NotifiedBroker", NIF + "InformedBroker"), RCF_MACHINES),
    Claim("CLM-RCF-2",
          "seed note §6.3(11, 12)", "spec/06-reconfiguration.md#clm-rcf-2", (NM + "ideal_tables", NM + "swapped", NM + "ideal_delivery"),
          (ND + "TimedBroker.manage_removed_link",), (_rcf_property(reconfig.deferral_window_keeps_every_route),)),
    Claim("CLM-RCF-3",
          "seed 002 §3.5.2 (REDS); seed note §6.3(8)", "spec/06-reconfiguration.md#clm-rcf-3", (),
          (ND + "TimedBroker",), (_rcf_property(reconfig.timed_with_timeout_zero_is_strawman),)),
    Claim("CLM-RCF-4", "seed 002 §3.5.2", "spec/06-reconfiguration.md#clm-rcf-4",
          (NR + "is_leaf_without", NR + "deferred_removal"), (ND + "TimedBroker.manage_removed_link",),
          (_example(reconfig.leaf_brokers_start_no_timer), RCF_MACHINES[0])),
    Claim("CLM-RCF-5",
          "seed 002 §3.5.3 (REDS); seed note §6.3(13)", "spec/06-reconfiguration.md#clm-rcf-5", (NR + "flush_forward",),
          (ND + "NotifiedBroker.flush_received",),
          (_rcf_property(reconfig.unknown_flush_floods_once_and_dies), _example(reconfig.late_flush_is_passed_on), RCF_MACHINES[1])),
    Claim("CLM-RCF-6",
          "seed 002 §3.5.4; seed note §6.3(14)", "spec/06-reconfiguration.md#clm-rcf-6", (NR + "only_subscribed_by", NR + "activation"),
          (NIF + "InformedBroker.activate",), (_rcf_property(reconfig.held_back_subscriptions_wait_for_the_timer),)),
    Claim("CLM-RCF-7",
          "seed 002 §3.5; derived", "spec/06-reconfiguration.md#clm-rcf-7",
          (NR + "deferred_removal", NR + "deferred_unsubscribe", NR + "flush_forward", NR + "only_subscribed_by", NR + "announced_to",
           NR + "activation", NR + "released"), (ND + "TimedBroker", ND + "NotifiedBroker", NIF + "InformedBroker"), RCF_MACHINES),
    Claim("CLM-RCF-8",
          "seed 002 §3.3 Fig. 2; seed note §6.3(11)", "spec/06-reconfiguration.md#clm-rcf-8", (NM + "ideal_tables", NM + "swapped"),
          (NI + "protocols.forwarding.StrawmanBroker.remove_link_to",), (_example(reconfig.strawman_has_a_routing_gap),)),
)

CLAIMS = CLAIMS + RECONFIG_CLAIMS


RM = M + "routing."
RI = "subsum.impl.network."
ROUTING_MACHINE = Check("stateful", "conformance.routing.SummaryRoutingUnderChurn", routing.run_summary_routing_machine)


def _routing_property(fn) -> Check:
    return Check("property", f"conformance.routing.{fn.__name__}", lambda: properties.run_property(fn))


def _siena_property(fn) -> Check:
    return Check("property", f"conformance.siena.{fn.__name__}", lambda: properties.run_property(fn))


NSI = NI + "protocols.siena."
ROUTING_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-SR-1",
          "seed 000 §4.3.2, Example 4-3", "spec/08-summary-routing.md#clm-sr-1", (RM + "propagation_plan",), (RI + "protocols.summaries.plan.plan",),
          (_example(routing.seed000_example_4_3_plan),)),
    Claim("CLM-SR-2",
          "seed 000 §4.3.2; seed note §8.2", "spec/08-summary-routing.md#clm-sr-2", (RM + "propagation_plan", RM + "propagation_target"),
          (RI + "protocols.summaries.plan.plan",), (_routing_property(routing.plan_is_a_forest_whose_sinks_partition),)),
    Claim("CLM-SR-3",
          "seed 000 §4.3.3, Example 4-3", "spec/08-summary-routing.md#clm-sr-3", (RM + "brocli_route", RM + "next_broker"),
          (RI + "protocols.summaries.plan.next_broker",), (_example(routing.seed000_example_4_3_route),)),
    Claim("CLM-SR-4",
          "seed 000 §4.3.3; seed note §8.2", "spec/08-summary-routing.md#clm-sr-4", (RM + "brocli_route", RM + "next_broker"),
          (RI + "protocols.summaries.plan.next_broker",), (_routing_property(routing.routing_stops_and_hands_each_owner_the_event_once),)),
    Claim("CLM-SR-5",
          "seed 000 §4.3.4, Example 4-4", "spec/08-summary-routing.md#clm-sr-5", (),
          (RI + "protocols.summaries.broker.SummaryBroker", "subsum.impl.summary.summary.Summary.rebuilds_for"),
          (_example(routing.seed000_example_4_4_messages),)),
    Claim("CLM-SR-6",
          "seed 000 §4.3; seed note §8.2", "spec/08-summary-routing.md#clm-sr-6",
          (RM + "propagation_plan", RM + "brocli_route", RM + "interested_owners"),
          (RI + "protocols.summaries.broker.SummaryBroker", RI + "protocols.summaries.rounds.Rounds"),
          (ROUTING_MACHINE, _example(routing.subscribing_twice_then_once_unsubscribing))),
    Claim("CLM-SR-7",
          "derived (seed 000 §4.3.1)", "spec/08-summary-routing.md#clm-sr-7", (), ("subsum.impl.summary.summary.Summary.merge_in",),
          (_example(routing.merge_refuses_colliding_brokers),)),
    Claim("CLM-SR-8",
          "seed 000 ch. 5 (baseline)", "spec/08-summary-routing.md#clm-sr-8",
          (NM + "ideal_delivery", NM + "ideal_tables", NM + "side_of", M + "covering.covers_subscription"),
          (NSI + "SienaBroker", NSI + "PlainSienaBroker", NI + "protocols.covering.filter_covers"),
          (_siena_property(siena.siena_delivers_exactly_with_fewer_subs),
           Check("stateful", "conformance.siena.SienaUnderChurn", lambda: siena.run_siena_machine(siena.SienaUnderChurn)),
           Check("stateful", "conformance.siena.PlainSienaUnderChurn", lambda: siena.run_siena_machine(siena.PlainSienaUnderChurn)),
           _siena_property(siena.covering_is_sound), _siena_property(siena.covering_is_exact_on_single_constraints),
           _example(siena.covering_examples))),
    Claim("CLM-SR-9",
          "seed 000 ch. 5 (baselines i, ii)", "spec/08-summary-routing.md#clm-sr-9", (RM + "interested_owners",),
          (RI + "protocols.baselines.BroadcastBroker", RI + "protocols.baselines.FloodingBroker"), (_routing_property(routing.baselines_deliver_exactly),)),
)

CLAIMS = CLAIMS + ROUTING_CLAIMS

SP = "subsum.impl.spark."


def _spark_property(fn) -> Check:
    return Check("property", f"conformance.spark.{fn.__name__}", lambda: properties.run_property(fn))


def _spark_example(fn) -> Check:
    """The Spark checks are named `conformance.spark.<function>` whichever of
    the conformance.spark* modules holds them (spec/07 names them so)."""
    return Check("example", f"conformance.spark.{fn.__name__}", fn)


PIPELINE_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-PIPE-1",
          "derived (seed 001 §2)", "spec/07-pipeline.md#clm-pipe-1", (M + "semantics.match_batch",),
          (SP + "match.match", SP + "match.matching_pairs", SP + "io.read_events", SP + "io.read_subscriptions",
           SP + "io.write_results"),
          (_spark_property(spark.spark_engine_equals_model), _spark_example(spark.operator_boundaries),
           _spark_example(spark_readers.seed000_files_through_every_reader))),
    Claim("CLM-PIPE-2",
          "seed 001 §2", "spec/07-pipeline.md#clm-pipe-2", (M + "semantics.satisfied_pair_count",),
          (SP + "io.read_events",), (_spark_example(spark_readers.parquet_rejects_bad_events),)),
    Claim("CLM-PIPE-3",
          "derived (spec/formats.md, bad input)", "spec/07-pipeline.md#clm-pipe-3", (),
          (SP + "io.read_events", SP + "io.read_subscriptions", SP + "jsonl.parsed_lines", SP + "trace.read_trace"),
          (_spark_example(spark_readers.jsonl_errors_agree),
           Check("property", "conformance.native_json.native_lines_are_sound",
                 lambda: properties.run_property(native_json.native_lines_are_sound)),
           _example(native_json.ordinary_lines_are_plain))),
    Claim("CLM-TRACE-1",
          "derived", "spec/07-pipeline.md#clm-trace-1", (M + "trace.check_trace",), (SP + "trace.check",),
          (_spark_property(spark_traces.trace_check_equals_model),)),
    Claim("CLM-TRACE-2",
          "seed 002 §2.3", "spec/07-pipeline.md#clm-trace-2", (M + "trace.check_trace",), (SP + "trace.check",),
          (_spark_example(spark_traces.static_run_is_clean),)),
    Claim("CLM-TRACE-3",
          "derived", "spec/07-pipeline.md#clm-trace-3", (M + "trace.check_trace",), (SP + "trace.check",),
          (_spark_example(spark_traces.planted_violations),)),
    Claim("CLM-TRACE-4",
          "seed 002 §3.3", "spec/07-pipeline.md#clm-trace-4", (M + "trace.check_trace",),
          (SP + "trace.check", "subsum.impl.network.workloads.routing.delivery_audit"), (_spark_example(spark_traces.churn_losses_match_audit),)),
)

CLAIMS = CLAIMS + PIPELINE_CLAIMS

MC = M + "caching."
IC = "subsum.impl.caching.policies."
CACHE_MACHINES = tuple(Check("stateful", f"conformance.caching.CacheAgainstReference[{policy}]",
                             lambda policy=policy: caching.run_cache_machine(caching.machine_for(policy)))
                       for policy in ("fifo", "regdeg", "lfu", "lru"))


def _caching_property(fn) -> Check:
    return Check("property", f"conformance.caching.{fn.__name__}", lambda: properties.run_property(fn))


CACHE_POLICY_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CACHE-1",
          "seed 004 §3.4; seed 003 §3.4, §4.6", "spec/09-caching.md#clm-cache-1",
          (MC + "insert", MC + "hit", MC + "unsubscribed", MC + "victim", MC + "order"),
          (IC + "FIFO", IC + "RegenerationDegradation", IC + "RateLFU", IC + "LRU"), CACHE_MACHINES),
    Claim("CLM-CACHE-2",
          "seed note 004 §6", "spec/09-caching.md#clm-cache-2", (MC + "victim", MC + "rate", MC + "insert"), (), CACHE_MACHINES),
    Claim("CLM-CACHE-3",
          "derived (peer: cachetools)", "spec/09-caching.md#clm-cache-3", (), (IC + "FIFO", IC + "LRU"),
          (_caching_property(caching.agrees_with_cachetools),)),
    Claim("CLM-CACHE-4",
          "seed 003 §6 (seed note 003 §6)", "spec/09-caching.md#clm-cache-4", (MC + "hit", MC + "victim"),
          (IC + "RegenerationDegradation", IC + "LRU"), (_caching_property(caching.regeneration_without_degradation_is_lru),)),
)

CLAIMS = CLAIMS + CACHE_POLICY_CLAIMS

MP = M + "placement."
IN = "subsum.impl.network.protocols.caching."


def _requests_property(fn) -> Check:
    return Check("property", f"conformance.requests.{fn.__name__}", lambda: properties.run_property(fn))


REQUESTS_CHECK = _requests_property(requests.requests_and_responses)
CACHE_PROTOCOL_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CACHE-5",
          "seed 004 §3.5; seed note 004 §6", "spec/09-caching.md#clm-cache-5", (MP + "holders", MP + "is_leaf", MP + "delivery_brokers"),
          (IN + "CachingBroker.is_holder", IN + "CachingBroker.event_received"), (_requests_property(requests.placements_nest),)),
    Claim("CLM-CACHE-6",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-6", (MP + "request_reach",),
          (IN + "CachingBroker.pass_response", IN + "CachingBroker.response_received"), (REQUESTS_CHECK, _example(requests.seed003_request_path))),
    Claim("CLM-CACHE-7",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-7", (MP + "request_reach", MP + "filters_overlap"),
          (IN + "CachingBroker.request_received", IN + "filters_overlap"), (REQUESTS_CHECK, _requests_property(requests.overlap_is_sound))),
    Claim("CLM-CACHE-8",
          "seed 004 §3.3 (duplicate suppression); seed note 004 §6", "spec/09-caching.md#clm-cache-8", (),
          (IN + "CachingBroker.response_received",), (REQUESTS_CHECK,)),
    Claim("CLM-CACHE-9",
          "seed 004 §3.3; seed note 004 §6", "spec/09-caching.md#clm-cache-9", (MP + "request_reach",),
          (IN + "CachingBroker.request_received", IN + "CachingBroker.response_received"), (REQUESTS_CHECK,)),
    Claim("CLM-CACHE-10",
          "seed 003 §2.6 (thesis §3.3)", "spec/09-caching.md#clm-cache-10", (MP + "request_reach",),
          (IN + "CachingBroker.request_received", IN + "request"), (_example(requests.seed003_request_path),)),
)

CLAIMS = CLAIMS + CACHE_PROTOCOL_CLAIMS

MCS = M + "client_server."
CLIENT_SERVER_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-CS-1", "seed 003 §4.3, Figs 1–2", "spec/10-client-server.md#clm-cs-1", (MCS + "serve", MCS + "at_path"), (),
          (_example(client_server.seed003_server_cache),)),
    Claim("CLM-CS-2", "seed 003 §4.4, Figs 3–4", "spec/10-client-server.md#clm-cs-2", (MCS + "serve",), (),
          (_example(client_server.seed003_server_one_hop_away),)),
    Claim("CLM-CS-3", "seed 003 §4.5, Figs 5–6", "spec/10-client-server.md#clm-cs-3", (MCS + "serve",), (),
          (_example(client_server.seed003_server_subscription),)),
    Claim("CLM-CS-4", "seed note 003 §6", "spec/10-client-server.md#clm-cs-4", (MCS + "serve",), (),
          (Check("property", "conformance.client_server.policies_compare_on_identical_state",
                 lambda: properties.run_property(client_server.policies_compare_on_identical_state)),)),
    Claim("CLM-CS-5", "derived (seed 003 §4)", "spec/10-client-server.md#clm-cs-5", (MCS + "serve",),
          ("subsum.impl.network.protocols.client_server.ClientServerBroker", "subsum.impl.network.protocols.client_server.request"),
          (Check("property", "conformance.client_server.simulator_equals_reference",
                 lambda: properties.run_property(client_server.simulator_equals_reference)),)),
)

CLAIMS = CLAIMS + CLIENT_SERVER_CLAIMS


#: `subsum verify --engine X` and `--cache X` (spec/11-plugins.md DEF-PLUG-2): the claims whose
#: checks can run against one plug-in alone (conformance/under_test.py), with those checks. Left
#: out: checks of one built-in engine's internals (CLM-ENG-6, 7, the vectorized chunks) and the work
#: counters (CLM-ENG-8: `MatchStats` is the built-in engines' bookkeeping), and the reference
#: policies' own invariants (CLM-CACHE-2).
PLUGIN_CLAIMS: dict[str, tuple[str, ...]] = {
    "engine": ("CLM-DATA-2", "CLM-ENG-1", "CLM-ENG-2", "CLM-ENG-3", "CLM-ENG-4", "CLM-ENG-5"),
    "cache": ("CLM-CACHE-1",),
}
_PLUGIN_CACHE_MACHINE = Check("stateful", "conformance.caching.CacheAgainstReference", lambda: caching.run_cache_machine())


def plugin_claims(subject: str) -> list[Claim]:
    """The claims `subsum verify --<subject> X` runs, each with the checks that run against X."""
    def checks_of(claim: Claim) -> tuple[Check, ...]:
        if subject == "cache":
            return (_PLUGIN_CACHE_MACHINE,)
        return tuple(c for c in claim.checks if c is not VECTORIZED_CHUNKS)

    return [attrs.evolve(claim, checks=checks_of(claim)) for claim in map(claim_by_id, PLUGIN_CLAIMS[subject])]


STATUSES = ("pass", "fail", "timeout")


@attrs.frozen
class CheckResult:
    claim: str
    kind: str
    check: str
    status: str  # one of STATUSES
    seconds: float
    detail: str
    #: The claim a failure speaks for, when it names one (a ClaimViolation); else the check's own claim.
    violated: str | None = None

    def to_json(self) -> dict:
        return attrs.asdict(self)


def claim_by_id(claim_id: str) -> Claim:
    for claim in CLAIMS:
        if claim.id == claim_id:
            return claim
    raise KeyError(claim_id)


def missing_floors(floors: Mapping[str, int], seen: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """The census tags drawn fewer times than their floor: tag -> (drawn, floor)."""
    return {tag: (seen.get(tag, 0), floor) for tag, floor in sorted(floors.items()) if seen.get(tag, 0) < floor}


def execute(check: Check, budget_scale: float = 1.0) -> str:
    """Run a check under the active profile (conformance/profiles.py): within
    its time limit, with its census counted and its floors enforced. Returns
    the check's detail line; raises on failure, `CheckTimeout` when cut."""
    profile = profiles.active()
    seconds = check.budget * budget_scale
    deadline = time.perf_counter() + seconds * profile.spend
    rounds = 0
    budget.last_failure.clear()
    with census.observe() as seen, budget.time_limit(seconds * profile.limit) as limit:
        try:
            while True:
                outcome = check.run()
                rounds += 1
                if check.kind in ("example", "proof") or time.perf_counter() >= deadline:
                    break
        except BaseException:
            if limit.fired:  # the deadline passed, however the check then ended (Hypothesis may wrap the timeout)
                raise budget.CheckTimeout(seconds * profile.limit) from None
            raise
    if limit.fired:
        raise budget.CheckTimeout(seconds * profile.limit)
    if profile.name == "ci":  # floors are counts of the ci profile's fixed draws
        short = missing_floors(check.floors, seen)
        if short:
            raise AssertionError("coverage floor not met (the generators no longer draw these cases): "
                                 + ", ".join(f"{tag} drawn {got} times, floor {floor}" for tag, (got, floor) in short.items()))
    detail = outcome if isinstance(outcome, str) else ""
    return detail + (f"{'; ' if detail else ''}{rounds} rounds" if rounds > 1 else "")


def run_check(claim: Claim, check: Check, budget_scale: float = 1.0) -> CheckResult:
    """Run one check and report it, never raising for a failure or a timeout."""
    start = time.perf_counter()
    violated = None
    try:
        status, detail = "pass", execute(check, budget_scale)
    except budget.CheckTimeout as exc:
        status = "timeout"
        violated = budget.last_failure.claim
        detail = f"cut after {time.perf_counter() - start:.1f} s: {exc}"
        if budget.last_failure.text:
            detail += f"\nlast failing example: {budget.last_failure.text}"
    except Exception as exc:  # a failing check, reported, never swallowed
        status = "fail"
        violated = violations.claim_of(exc) or claim.id
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()  # with its __notes__ (Python 3.11+)
    return CheckResult(claim.id, check.kind, check.name, status, round(time.perf_counter() - start, 3), detail, violated)
