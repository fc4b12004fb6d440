"""The claims of spec/01-data-model.md, 02-covering.md and 03-matching.md:
values and filters (CLM-DATA-*), the SMT encoding (CLM-SMT-1), covering
(CLM-COV-*, CLM-PROVER-1), matching (CLM-MATCH-*, CLM-EX-1) and the
matching engines (CLM-ENG-*)."""

from __future__ import annotations

from subsum.conformance.checks.matching import engine_internals
from subsum.conformance.checks.matching import engines
from subsum.conformance.checks.matching import examples
from subsum.conformance.checks.matching import properties
from subsum.conformance.claims.records import M, Check, Claim, example_of, property_of, rules_proof


IMPL_ENGINES = tuple(f"subsum.impl.matching.{m}" for m in (
    "brute.BruteForceEngine", "counting.CountingEngine", "indexed.IndexedEngine", "rab.RABEngine", "columnar.vectorized.VectorizedEngine",
    "columnar.compiled.CompiledEngine"))

VECTORIZED_CHUNKS = property_of(engine_internals.vectorized_in_small_chunks)
COMPILED_MEMO = property_of(engine_internals.compiled_with_pattern_memo)
COMPILED_CHUNKS = property_of(engine_internals.compiled_in_small_chunks)
FROM_COLUMNS = property_of(engine_internals.built_from_columns)
#: checks of a built-in engine's internal alternatives, which a plug-in engine's verification skips
BUILT_IN_ONLY = (VECTORIZED_CHUNKS, COMPILED_MEMO, COMPILED_CHUNKS, FROM_COLUMNS)
MATCHING_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-DATA-1",
          "derived", "spec/01-data-model.md#clm-data-1", ("subsum.core.types.check_value", "subsum.core.types.Constraint"), (),
          (example_of(examples.invalid_values_cannot_be_built),)),
    Claim("CLM-DATA-2", "seed 001 §5.2; derived", "spec/01-data-model.md#clm-data-2",
          ("subsum.core.types.normalize_scalar", M + "semantics.satisfies"), (), (property_of(properties.signed_zero_is_one_value),)),
    Claim("CLM-DATA-3", "seed 001 §5.1(13)",
          "spec/01-data-model.md#clm-data-3", (M + "semantics.satisfies",), (), (property_of(properties.int_never_satisfies_float),)),
    Claim("CLM-DATA-4",
          "seed 001 §5.2", "spec/01-data-model.md#clm-data-4", (M + "semantics.operator_holds",), (),
          (property_of(properties.empty_pattern_matches_every_string),)),
    Claim("CLM-DATA-5", "seed 001 §5.2",
          "spec/01-data-model.md#clm-data-5", ("subsum.core.types.Subscription", M + "semantics.matches"), (),
          (property_of(properties.duplicate_constraints_collapse),)),
    Claim("CLM-DATA-6", "derived",
          "spec/01-data-model.md#clm-data-6", ("subsum.core.filters.parse_filter", "subsum.core.filters.format_filter"), (),
          (property_of(properties.filter_round_trip),)),
    Claim("CLM-SMT-1", "derived",
          "spec/02-covering.md#clm-smt-1", (M + "smt.operator_holds", M + "semantics.operator_holds"), (),
          (property_of(properties.smt_agrees_with_semantics),)),
    Claim("CLM-COV-1", "seed 001 §1.3 Lemma 1, Table 1, Theorem 1",
          "spec/02-covering.md#clm-cov-1", (M + "rules.RULES", M + "covering.covers_constraint"), (),
          (rules_proof(("T1-",)), property_of(properties.covers_constraint_agrees_with_subscription_covering))),
    Claim("CLM-COV-2", "seed 000 §1.5", "spec/02-covering.md#clm-cov-2",
          (M + "rules.RULES",), (), (rules_proof(("S-",)),)),
    Claim("CLM-COV-3", "seed 001 Theorem 1; derived",
          "spec/02-covering.md#clm-cov-3", (M + "covering.covers_by_rules", M + "covering.covers_constraint"), (),
          (rules_proof(("T1-", "S-", "T2-", "D-")), property_of(properties.rules_imply_exact_covering))),
    Claim("CLM-COV-4", "seed 001 Theorem 2",
          "spec/02-covering.md#clm-cov-4", (M + "covering.constraints_equal",), (),
          (rules_proof(("T2-",)), property_of(properties.identical_constraints_are_equal))),
    Claim("CLM-COV-5", "seed 001 §1.3 (Theorem 1 is sufficient, not necessary)",
          "spec/02-covering.md#clm-cov-5", (M + "covering.covers_by_rules", M + "covering.covers_constraint"), (),
          (example_of(examples.rules_are_not_complete),)),
    Claim("CLM-COV-6",
          "seed 000 §1.4; derived", "spec/02-covering.md#clm-cov-6",
          (M + "covering.covers_subscription", M + "covering.covering_counterexample"), (),
          (property_of(properties.covers_subscription_agrees_with_sampling),)),
    Claim("CLM-COV-7", "seed 000 §2.3.2 vs Example 4-2",
          "spec/02-covering.md#clm-cov-7", (M + "covering.covers_constraint",), (), (example_of(examples.prefix_semantics_of_thesis_notation),)),
    Claim("CLM-COV-8", "seed 001 Def 7; derived",
          "spec/02-covering.md#clm-cov-8", (M + "covering.constraint_is_satisfiable", M + "covering.covers_constraint"), (),
          (example_of(examples.unsatisfiable_constraints_are_covered),)),
    Claim("CLM-MATCH-1", "seed 001 §2, Def 9",
          "spec/03-matching.md#clm-match-1", (M + "semantics.counting_match", M + "semantics.matches"), (),
          (property_of(properties.counting_equals_exact),)),
    Claim("CLM-MATCH-2", "seed 001 Def 9, §5.2", "spec/03-matching.md#clm-match-2",
          (M + "semantics.matches", M + "semantics.counting_match"), (), (property_of(properties.empty_subscription_matches_every_event),)),
    Claim("CLM-MATCH-3", "seed 001 §5.2",
          "spec/03-matching.md#clm-match-3", (M + "semantics.satisfied_pair_count", "subsum.core.types.Event"), (),
          (example_of(examples.counting_needs_the_map_property),)),
    Claim("CLM-ENG-1",
          "seed 001 §5.1(1)", "spec/03-matching.md#clm-eng-1", (M + "semantics.match_batch",), IMPL_ENGINES,
          (property_of(engines.engines_agree_with_model, engines.MIXED_FLOORS),
           property_of(engines.engines_agree_on_strings, engines.STRING_FLOORS),
           property_of(engines.engines_agree_on_boundaries, engines.BOUNDARY_FLOORS), *BUILT_IN_ONLY)),
    Claim("CLM-ENG-2",
          "derived", "spec/03-matching.md#clm-eng-2", (M + "semantics.match_batch",), IMPL_ENGINES,
          (Check("stateful", "conformance.checks.matching.engines.EnginesAgainstModel", engines.run_engines_state_machine,
                 floors=engines.TYPE_OPERATOR_FLOORS),)),
    Claim("CLM-ENG-3",
          "seed 001 §5.1(2)", "spec/03-matching.md#clm-eng-3", (M + "semantics.match_batch",), IMPL_ENGINES,
          (property_of(engines.batch_split_is_union),)),
    Claim("CLM-ENG-4",
          "seed 001 §5.1(3)", "spec/03-matching.md#clm-eng-4", (M + "semantics.match_batch",), IMPL_ENGINES,
          (property_of(engines.duplicate_event_duplicates_its_line),)),
    Claim("CLM-ENG-5",
          "seed 001 §5.1(4)", "spec/03-matching.md#clm-eng-5", (M + "semantics.match_batch",), IMPL_ENGINES,
          (property_of(engines.order_does_not_matter),)),
    Claim("CLM-ENG-6",
          "seed 001 §5.1(5), §2.6", "spec/03-matching.md#clm-eng-6", (), ("subsum.impl.matching.rab.RABEngine", "subsum.impl.matching.indexed.IndexedEngine"),
          (property_of(engines.deduplication_changes_only_probes),)),
    Claim("CLM-ENG-7",
          "seed 001 Theorem 1, §1.4, §5.1(7)", "spec/03-matching.md#clm-eng-7", (M + "covering.covers_by_rules", M + "semantics.operator_holds"),
          ("subsum.impl.matching.cindex.OrderedLeaf",), (property_of(engines.ordered_lists_are_containment_ordered),)),
    Claim("CLM-ENG-8",
          "derived (seed 001 §5.1)", "spec/03-matching.md#clm-eng-8", (), IMPL_ENGINES + ("subsum.impl.matching.base.MatchStats",),
          (property_of(engines.work_counters_add_up), VECTORIZED_CHUNKS, COMPILED_CHUNKS)),
    Claim("CLM-EX-1", "seed 000 Fig. 2-2, Fig. 4-1",
          "spec/03-matching.md#clm-ex-1", (M + "semantics.matches",), (), (example_of(examples.seed000_running_example),)),
    Claim("CLM-PROVER-1", "derived",
          "spec/02-covering.md#clm-prover-1", (M + "rules.soundness_formula",), (), (example_of(examples.prover_refutes_wrong_rules, kind="proof"),)),
)
