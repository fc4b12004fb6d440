"""The compiled engine's own CLM-ENG-1 and CLM-ENG-8 checks (issue 37: "make
`make test` run the engine's claims"): its pattern memo, its chunks and
threads, and the bulk build from columns, executed as `subsum verify` runs
them (budget and census floors included). `make verify` runs them too, with
every other claim; these are the ones that reach code no other test in
`make test` runs (tests/test_engine_agreement.py covers the engine's lines).

They are the registered checks themselves, so `make verify` runs each of them
in every run of the gate: issue 51 (the gate's time) moved them to `make
thorough`, where they run with the module's other slow tests, nightly."""

import pytest

from subsum.conformance.runner.budget import CheckTimeout
from subsum.conformance.claims import execute
from subsum.conformance.claims.matching import COMPILED_CHUNKS, COMPILED_MEMO, FROM_COLUMNS


@pytest.mark.thorough  # duplicates `make verify`'s CLM-ENG-1 and CLM-ENG-8 checks of the same names
@pytest.mark.parametrize("check", [COMPILED_MEMO, COMPILED_CHUNKS, FROM_COLUMNS], ids=lambda c: c.name)
def test_compiled_engine_claim_check(check):
    try:
        execute(check)
    except CheckTimeout as exc:
        pytest.fail(f"{check.name}: {exc}", pytrace=False)
