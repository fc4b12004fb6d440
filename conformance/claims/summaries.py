"""The claims of spec/04-summaries.md (CLM-SUM-*): the optimized summaries
against the reference. Their checks are named `conformance.checks.summaries.<function>`
whichever module of that package holds them."""

from __future__ import annotations

from subsum.conformance.checks.summaries import agreement, churn, examples, formats, proofs, structure
from subsum.conformance.claims.records import M, Check, Claim, example_of, property_of

#: The name of the summaries' checks (spec/04 names them so).
SUMMARIES = "conformance.checks.summaries"

SA = M + "summaries.abstraction."
SM = M + "summaries.summary."
SI = "subsum.impl.summary."
SUMMARY_IMPL = (SI + "owner.OwnerSummary", SI + "summary.Summary", SI + "structures.AACS", SI + "structures.SACS")
SUMMARY_CLAIMS: tuple[Claim, ...] = (
    Claim("CLM-SUM-1", "seed 000 §4.2.1; derived",
          "spec/04-summaries.md#clm-sum-1", (SA + "abstraction", SA + "normalized_covers"), (SI + "normalize.abstraction", SI + "normalize.pattern_covers"),
          (property_of(agreement.abstraction_agrees_with_model, family=SUMMARIES), example_of(agreement.covering_agrees_exhaustively, family=SUMMARIES))),
    Claim("CLM-SUM-2",
          "seed 000 §4.2.3 (implied); seed note §4, §7", "spec/04-summaries.md#clm-sum-2", (SM + "reference_summary", SM + "summary_match"),
          SUMMARY_IMPL, (property_of(agreement.summary_has_no_false_negatives, agreement.SUMMARY_FLOORS, family=SUMMARIES),
                         Check("proof", "conformance.checks.summaries.prove_generalizations", proofs.prove_generalizations),
                         property_of(proofs.rows_cover_members_by_z3, family=SUMMARIES))),
    Claim("CLM-SUM-3", "seed note §4 (implied); derived",
          "spec/04-summaries.md#clm-sum-3", (SM + "summary_is_exact", SM + "summary_match"), (SI + "summary.Summary.match",),
          (property_of(agreement.exact_rows_give_exact_matches, family=SUMMARIES), property_of(agreement.exactness_implies_equality, family=SUMMARIES))),
    Claim("CLM-SUM-4",
          "seed 000 §4.2.1; seed note §8.2", "spec/04-summaries.md#clm-sum-4", (SM + "numeric_rows", SM + "constraint_rows"),
          (SI + "structures.AACS", SI + "structures.SACS"), (property_of(structure.summary_structure_holds, family=SUMMARIES),)),
    Claim("CLM-SUM-5",
          "seed 000 §4.2, Algorithm 4-1", "spec/04-summaries.md#clm-sum-5", (SM + "reference_summary", SM + "summary_counters"), SUMMARY_IMPL,
          (property_of(agreement.summary_has_no_false_negatives, family=SUMMARIES), property_of(agreement.lookups_equal_satisfied_rows, family=SUMMARIES))),
    Claim("CLM-SUM-6",
          "seed note §8.2; derived", "spec/04-summaries.md#clm-sum-6", (SM + "numeric_rows",), (SI + "acgt.IntervalForest", SI + "acgt.ConstraintForest"),
          (property_of(structure.numeric_rows_are_canonical, family=SUMMARIES), example_of(examples.contains_policy_depends_on_order, family=SUMMARIES))),
    Claim("CLM-SUM-7",
          "seed 000 §4.2.4, §4.3.4", "spec/04-summaries.md#clm-sum-7", (SM + "reference_summary",),
          (SI + "acgt.IntervalForest", SI + "acgt.ConstraintForest", SI + "summary.Summary.apply"),
          (property_of(structure.insert_then_delete_restores, family=SUMMARIES), example_of(examples.contains_policy_round_trip, family=SUMMARIES))),
    Claim("CLM-SUM-8",
          "seed 000 §4.3.1, §4.3.4", "spec/04-summaries.md#clm-sum-8", (SM + "numeric_rows",), (SI + "summary.Summary.merge_in", SI + "summary.Summary.apply"),
          (property_of(structure.merge_laws, family=SUMMARIES), property_of(structure.history_plus_delta_equals_scratch, family=SUMMARIES),
           example_of(examples.merge_assigns_ids_by_order, family=SUMMARIES))),
    Claim("CLM-SUM-9",
          "seed 000 §4.2.2, Fig. 4-4", "spec/04-summaries.md#clm-sum-9", (), (SI + "ids.IdLayout",),
          (property_of(formats.ids_round_trip, family=SUMMARIES), example_of(examples.seed000_fig_4_4_id, family=SUMMARIES))),
    Claim("CLM-SUM-10",
          "seed note §4, §7 (recommended)", "spec/04-summaries.md#clm-sum-10", (SM + "recheck",), (SI + "owner.OwnerSummary.recheck",),
          (property_of(agreement.summary_has_no_false_negatives, family=SUMMARIES),)),
    Claim("CLM-SUM-11",
          "seed 000 §4.2.4, §4.3.4", "spec/04-summaries.md#clm-sum-11", (SM + "reference_summary",), SUMMARY_IMPL + (SI + "history.History",),
          (Check("stateful", "conformance.checks.summaries.SummariesUnderChurn", churn.run_summaries_state_machine),
           example_of(churn.history_survives_slot_reuse_and_late_deletions, family=SUMMARIES))),
    Claim("CLM-SUM-12", "seed 000 Example 4-1, Figs. 4-1 .. 4-3",
          "spec/04-summaries.md#clm-sum-12", (SM + "summary_counters",), (SI + "summary.Summary.counters",),
          (example_of(examples.seed000_example_4_1, family=SUMMARIES),)),
    Claim("CLM-SUM-13",
          "seed 000 Example 4-2, Figs. 4-5, 4-10, 4-11", "spec/04-summaries.md#clm-sum-13", (SM + "reference_summary",),
          (SI + "acgt.ConstraintForest", SI + "acgt.IntervalForest"),
          (example_of(examples.seed000_example_4_2, family=SUMMARIES),)),
    Claim("CLM-SUM-14",
          "seed 000 Example 4-4, Figs. 4-13, 4-14", "spec/04-summaries.md#clm-sum-14", (), (SI + "history.History", SI + "history.Directory"),
          (example_of(examples.seed000_example_4_4, family=SUMMARIES),)),
    Claim("CLM-SUM-15",
          "seed note §4 (Example 4-2 rows)", "spec/04-summaries.md#clm-sum-15", (SM + "summary_match", SM + "recheck"), (SI + "owner.OwnerSummary.recheck",),
          (example_of(examples.seed000_false_positive, family=SUMMARIES),)),
    Claim("CLM-SUM-16",
          "derived", "spec/04-summaries.md#clm-sum-16", (),
          (SI + "summary_file.to_json", SI + "summary_file.from_json", SI + "wire.to_bytes", SI + "wire.from_bytes"),
          (property_of(formats.summary_formats_round_trip, family=SUMMARIES),)),
)
