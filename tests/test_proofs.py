"""`subsum prove`: the acceptance list of proofs, and the negative test."""

import json

from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.checks.matching.proofs import WRONG_RULES, counterexample_confirmed, prove_rule

# Table 1 of seed 001: rows 1-8 are the ordering operators (int, float),
# row 9 is `=` (every type), rows 10-12 are prefix, suffix, substring (string).
EXPECTED_TABLE_1 = (
    {f"T1-{row}[{t}]" for row in range(1, 9) for t in ("int", "float")}
    | {f"T1-9[{t}]" for t in ("int", "float", "string", "bool")}
    | {"T1-10[string]", "T1-11[string]", "T1-12[string]"}
)
# Seed 000 §1.5's string rules (those not already rows of Table 1).
EXPECTED_STRING = {
    f"{r}[string]"
    for r in (
        "S-PREFIX-EQ", "S-PREFIX-WILD", "S-SUFFIX-EQ", "S-SUFFIX-WILD", "S-CONTAINS-EQ", "S-CONTAINS-PREFIX",
        "S-CONTAINS-SUFFIX", "S-CONTAINS-WILD-LEFT", "S-CONTAINS-WILD-RIGHT", "S-WILD-EQ", "S-WILD-WILD",
        "S-WILD-PREFIX", "S-WILD-SUFFIX", "S-ANY-=", "S-ANY-!=", "S-ANY-prefix", "S-ANY-suffix",
        "S-ANY-contains", "S-ANY-wildcard", "S-ANY-any",
    )
}


def test_prove_json_lists_every_table_1_row_and_string_rule_as_proved():
    result = CliRunner().invoke(main, ["prove", "--format", "json"])
    assert result.exit_code == 0, result.output
    proofs = {p["id"]: p for p in json.loads(result.stdout)}
    assert EXPECTED_TABLE_1 | EXPECTED_STRING <= set(proofs)
    assert all(p["status"] == "proved" for p in proofs.values())


def test_a_wrong_rule_is_refuted_and_its_counterexample_printed():
    rule = next(r for r in WRONG_RULES if r.id == "WRONG-T1-3")
    result = prove_rule(rule)
    assert result.status == "refuted"
    # x >= v1 and v1 >= v2 do not give x > v2: the counterexample is v = v1 = v2.
    cex = result.counterexample
    assert cex["v"] == cex["v1"] == cex["v2"]
    assert counterexample_confirmed(rule, cex)


def test_prove_negative_shows_refutations_and_still_succeeds():
    result = CliRunner().invoke(main, ["prove", "--format", "json", "--negative"])
    assert result.exit_code == 0, result.output
    proofs = {p["id"]: p for p in json.loads(result.stdout)}
    for rule in WRONG_RULES:
        assert proofs[rule.key]["status"] == "refuted"
        assert proofs[rule.key]["counterexample"] is not None
