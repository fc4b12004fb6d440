"""Every registered claim's checks, run under pytest (the same checks `subsum verify` runs)."""

import pytest

from subsum.conformance.claims import CLAIMS

CASES = [pytest.param(check, id=f"{claim.id}:{check.kind}:{check.name}") for claim in CLAIMS for check in claim.checks]


@pytest.mark.parametrize("check", CASES)
def test_claim_check(check):
    check.run()
