"""Every registered claim's checks, run under pytest as `subsum verify` runs
them: within the check's time budget, with its census floors enforced
(conformance/claims.py `execute`). `make verify` runs the same checks, so
`make test` deselects this module (the `claims` mark); a bare `pytest`, and
mutation testing (scripts/mutate.sh), run it."""

import pytest

from subsum.conformance.runner.budget import CheckTimeout
from subsum.conformance.claims import CLAIMS, execute

#: `make verify` runs these checks (in parallel, conformance/runner/pool.py); `make test` leaves them to it.
pytestmark = pytest.mark.claims

CASES = [pytest.param(check, id=f"{claim.id}:{check.kind}:{check.name}") for claim in CLAIMS for check in claim.checks]


@pytest.mark.parametrize("check", CASES)
def test_claim_check(check):
    try:
        execute(check)
    except CheckTimeout as exc:  # a BaseException (so nothing inside the check swallows it): fail, do not abort the session
        pytest.fail(f"{check.name}: {exc}", pytrace=False)
