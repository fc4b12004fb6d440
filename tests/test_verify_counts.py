"""Issue 51: `subsum verify` and `subsum claims` must count the same claims.
The review saw verify say 91 where claims listed 97; at 7e25305 the text
report, the JSON, the HTML page and `subsum claims` all say 97 (the 91 was
not reproduced), so this pins that every report counts from one selection:
every claim has checks, and a run's results name every claim it selected."""

import json
import re

from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.runner import reports
from subsum.conformance.runner import verify as verifying
from subsum.conformance.runner import pool as verify_workers
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


def test_at_80_columns_every_check_name_is_shown_whole(monkeypatch):
    """Issue 51: at 80 columns the check column cut every name to one prefix, so a failed check could not be told."""
    import io

    from rich.console import Console

    from subsum.cli import claims as cli_claims

    screen = io.StringIO()
    monkeypatch.setattr(cli_claims, "out", Console(file=screen, width=80, color_system=None))
    selection = verifying.select(("CLM-CACHE-1",))
    run = verifying.Run(selection, "ci")
    run.results = [CheckResult(claim.id, check.kind, check.name, "pass", 1.0, "") for claim, check in verify_workers.units(selection.claims)]
    cli_claims.print_results(run, run.report(), "subsum verify")
    names: list[str] = []
    for row in screen.getvalue().splitlines():  # a wrapped name goes on in the check cell of the lines below
        cells = [c.strip() for c in row.split("│")[1:-1]]
        if len(cells) == 5:
            names.append(cells[2]) if cells[0] else names.__setitem__(-1, names[-1] + cells[2])
    assert names == [r.check for r in run.results]
    assert max(map(len, screen.getvalue().splitlines())) <= 80


def test_a_check_that_several_claims_list_runs_once_and_stands_for_each():
    """Issue 51 (the gate's time): 18 of 145 checks were the same run for a second or third claim (146 and 128 since
    issue 53 added CLM-EXP-7)."""
    units = verify_workers.units(CLAIMS)
    ran = verify_workers.runs(CLAIMS)
    assert len(units) == 146 and len(ran) == 128
    by_claim = {c.id: c for c in CLAIMS}
    failed = CheckResult("CLM-CACHE-1", "stateful", "conformance.checks.caching.policies.CacheAgainstReference[fifo]", "fail", 9.0, "boom", "CLM-CACHE-1")
    shown = verifying.shared_result(failed, by_claim["CLM-CACHE-2"], by_claim["CLM-CACHE-1"])
    assert (shown.claim, shown.status, shown.violated, shown.seconds) == ("CLM-CACHE-2", "fail", "CLM-CACHE-2", 0.0)
    assert shown.detail == "boom; the run of CLM-CACHE-1's check"
    assert verifying.shared_result(failed, by_claim["CLM-CACHE-1"], by_claim["CLM-CACHE-1"]) is failed
