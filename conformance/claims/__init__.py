"""The claim registry: every claim of spec/, with the checks that establish it.

`subsum verify` runs these checks; `subsum claims` prints the traceability
matrix (spec section -> model function -> impl function(s) -> checks); the
test suite runs the same checks, and checks that this registry and the index
in spec/README.md list the same claims.

A claim's statement is written once, in its spec section. The registry holds
no statement text: `Claim.statement` reads conformance/statements.json, which
scripts/gen_claims.py generates from spec/ (the installed package has no
spec/ to read) together with the claim index of spec/README.md.

The package:

- `records`: `Check`, `Claim` and the constructors the families build their
  checks with (`rules_proof`, `property_of`, `example_of`);
- one module per family of claims, after the spec sections: `matching`
  (spec/01-03: data, covering, matching, engines), `summaries` (04),
  `network` (05 and 06: the network and its reconfiguration), `pipeline`
  (07), `routing` (08), `caching` (09), `client_server` (10);
- `registry`: `CLAIMS`, every family's claims in order;
- `execution`: running a check (`execute`, `run_check`, `CheckResult`) and
  picking claims (`claim_by_id`, `plugin_claims`).

What the CLI, scripts/gen_claims.py, conformance/runner/reports.py and the tests
use is exposed here.
"""

from __future__ import annotations

from subsum.conformance.claims.execution import PLUGIN_CLAIMS, CheckResult, claim_by_id, execute, plugin_claims, run_check
from subsum.conformance.claims.records import KINDS, Check, Claim
from subsum.conformance.claims.registry import CLAIMS

__all__ = ["CLAIMS", "KINDS", "PLUGIN_CLAIMS", "Check", "CheckResult", "Claim", "claim_by_id", "execute", "plugin_claims", "run_check"]
