"""Issue 51: `subsum verify` and `subsum claims` must count the same claims.
The review saw verify say 91 where claims listed 97; at 7e25305 the text
report, the JSON, the HTML page and `subsum claims` all say 97 (the 91 was
not reproduced), so this pins that every report counts from one selection:
every claim has checks, and a run's results name every claim it selected."""

import json
import re

from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance import reports, verify as verifying, verify_workers
from subsum.conformance.claims import CLAIMS, CheckResult


def test_every_report_counts_the_claims_that_subsum_claims_lists():
    listed = json.loads(CliRunner().invoke(main, ["claims", "--format", "json"]).stdout)
    selection = verifying.select()
    units = verify_workers.units(selection.claims)
    results = [CheckResult(claim.id, check.kind, check.name, "pass", 0.0, "") for claim, check in units]
    run = verifying.Run(selection, "ci")
    run.results = results
    assert len(listed) == len(CLAIMS) == len(selection.claims) == run.report()["claims"]
    assert {r.claim for r in results} == {c["id"] for c in listed}  # no claim without a check, none counted twice
    page = reports.html_page(results, selection.claims, "ci", 1.0)
    assert re.search(rf"{len(results)} checks of {len(listed)} claims", page)
