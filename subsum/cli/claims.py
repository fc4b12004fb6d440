"""subsum verify | claims | prove: the claims and their checks
(conformance/claims, run by conformance/runner/verify.py)."""

from __future__ import annotations

import json
import math

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common.console import deprecated, emit, err, out
from subsum.cli.common.options import deprecated_json_option, distinct_files, format_option, writable_path
from subsum.conformance.runner import profiles
from subsum.conformance.runner import verify as verifying
from subsum.conformance.runner import pool as verify_workers
from subsum.conformance.claims import CLAIMS
from subsum.conformance.checks.matching.proofs import WRONG_RULES, prove_rule, rules_to_prove
from subsum.core.errors import CheckFailed


def _budget_scale(_ctx, param, value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= 1000):
        raise click.BadParameter(f"expected a number > 0 and at most 1000, got {value}", param=param)
    return value


def _jobs(_ctx, param, value: str) -> int:
    if value == "auto":
        return verify_workers.default_jobs()
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= 256:  # "²" is a digit to isdigit, not to int
        raise click.BadParameter(f"expected 'auto' or a whole number from 1 to 256, got {value!r}", param=param)
    return int(value)


@click.command()
@click.option("--profile", type=click.Choice(list(profiles.PROFILES)), default="ci", show_default=True,
              help="ci: derandomized, the same examples every run, each check once within its budget. "
                   "thorough: fresh random examples, round after round until each check's budget is spent.")
@format_option
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Also write JUnit XML to FILE: one test case per check, the counterexample as the failure text.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Also write one self-contained HTML page to FILE: every check, its claim, statement, status and time, "
                   "the counterexamples, and each claim's spec section.")
@deprecated_json_option
@click.option("--budget-scale", type=float, default=1.0, show_default=True, callback=_budget_scale,
              help="Multiply every check's time budget (conformance/claims) by F. A check past its budget is cut as `timeout`.")
@click.option("--jobs", default="auto", show_default=True, callback=_jobs, metavar="N|auto",
              help="Run the checks in N worker processes (auto: one per CPU; 1: all in this process). "
                   "The results and reports are the same, in the same order.")
@click.option("--claim", "claim_ids", multiple=True, metavar="ID", help="Run only this claim (repeatable).")
@click.option("--engine", metavar="ENGINE",
              help="Check this matching engine alone, a built-in one or a plug-in (an installed subsum.engines entry point, "
                   "or module:attribute): the claims CLM-DATA-2 and CLM-ENG-1 … 5 against the model (spec/11-plugins.md).")
@click.option("--cache", metavar="POLICY",
              help="Check this cache alone, a built-in policy or a plug-in (a subsum.caches entry point, or "
                   "module:attribute): CLM-CACHE-1's state machine against the reference of the policy it names.")
def verify(profile: str, fmt: str, junit_path: str | None, html_path: str | None, json_path: str | None, budget_scale: float, jobs: int,
           claim_ids: tuple[str, ...], engine: str | None, cache: str | None) -> None:
    """Run every registered claim's checks and print claim -> kind -> status -> time.

    Each check runs within its time budget; one that runs past it is cut and
    reported as `timeout` with the last failing example seen. Exits 1 if a
    check fails or times out. With --engine or --cache, only the claims that
    hold of that one component run, against it alone. A check that several
    claims list runs once; its row under the others says whose run it is."""
    distinct_files({}, {"json": json_path, "junit": junit_path, "html": html_path})
    selection = verifying.select(claim_ids, engine, cache)
    profiles.load(profile)
    run = verifying.Run(selection, profile, budget_scale, jobs=jobs,
                        selected_by={"claims": list(claim_ids), "engine": engine, "cache": cache})
    if json_path:
        deprecated("--json FILE", "--format json > FILE")

    def stuck(claim, check, hard: float) -> None:
        run.write_reports(json_path, junit_path, html_path)
        err.print(f"error: {claim.id} ({check.name}) did not stop after its budget of {hard:g} s; ended the run", highlight=False)

    with err.status("") as status:
        run.check_all(lambda i, claim, check: status.update(f"[{i}/{run.checks}] {claim.id}: {check.name}"), stuck)
    run.write_reports(json_path, junit_path, html_path)
    report = run.report()
    emit(report, fmt, lambda: print_results(run, report, f"subsum verify{f' --{selection.subject} {selection.name}' if selection.subject else ''}"))
    failed = run.failed()
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(run.results)} checks did not pass: {', '.join(sorted({r.claim for r in failed}))}")


def print_results(run: verifying.Run, report: dict, title: str) -> None:
    """The text report: one row per check, the failures' counterexamples on standard error, the totals."""
    table = Table(title=f"{title} (profile {run.profile})")
    for column in ("claim", "kind", "check", "status", "time (s)"):  # a narrow terminal wraps a check's name, never cuts it
        table.add_column(column, justify="right" if column == "time (s)" else "left", overflow="fold",
                         no_wrap=column != "check", min_width=len(column) if column != "check" else 12)
    marks = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "timeout": "[bold red]TIMEOUT[/]"}
    for r in run.results:
        check = r.check + (f" ({r.detail})" if r.status == "pass" and r.detail else "")
        table.add_row(escape(r.claim), r.kind, escape(check), marks[r.status], f"{r.seconds:.2f}")
    out.print(table)
    for r in run.failed():
        violated = f", violated {r.violated}" if r.violated and r.violated != r.claim else ""
        err.print(f"[bold red]{escape(r.claim)} {r.status}[/] ({escape(r.check)}{escape(violated)}):\n{escape(r.detail)}", highlight=False)
    out.print(f"{report['passed']} passed, {report['failed']} failed" + (f", {report['timed_out']} timed out" if report["timed_out"] else "")
              + f" ({report['claims']} claims, {report['seconds']:.1f} s)")


@click.command()
@format_option
def claims(fmt: str) -> None:
    """Print the traceability matrix: claim -> spec section -> model -> impl -> checks."""
    if fmt == "json":
        rows = [
            {"id": c.id, "statement": c.statement, "source": c.source, "spec": c.spec, "model": list(c.model),
             "impl": list(c.impl), "checks": [{"kind": k.kind, "name": k.name} for k in c.checks]}
            for c in CLAIMS
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="subsum claims: traceability", show_lines=True)
    for column in ("claim", "spec", "model", "impl", "checks"):
        table.add_column(column, overflow="fold")
    for c in CLAIMS:
        table.add_row(
            f"{escape(c.id)}\n[dim]{escape(c.statement)}[/]",
            escape(c.spec),
            escape("\n".join(c.model)),
            escape("\n".join(c.impl)) or "[dim]none yet[/]",
            escape("\n".join(f"{k.kind}: {k.name}" for k in c.checks)),
        )
    out.print(table)


@click.command()
@format_option
@click.option("--negative", is_flag=True, help="Also try the deliberately wrong rules (expected: refuted).")
def prove(fmt: str, negative: bool) -> None:
    """Run the z3 proofs of every covering rule alone.

    Exits 1 if a rule is not proved (or a wrong rule not refuted)."""
    rules = rules_to_prove(negative)
    results = []
    with err.status("") as status:
        for i, rule in enumerate(rules, start=1):
            status.update(f"[{i}/{len(rules)}] {rule.key}")
            results.append(prove_rule(rule))
    wrong = {r.key for r in WRONG_RULES}
    bad = [r for r in results if (r.status != "refuted" if r.id in wrong else r.status != "proved")]
    if fmt == "json":
        click.echo(json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False))
    else:
        table = Table(title="subsum prove")
        for column in ("proof", "statement", "source", "status", "time (s)"):
            table.add_column(column, overflow="fold")
        for r in results:
            colour = "green" if r not in bad else "bold red"
            status_text = r.status + (f" {r.counterexample}" if r.counterexample else "")
            table.add_row(escape(r.id), escape(r.statement), escape(r.source), f"[{colour}]{escape(status_text)}[/]", f"{r.seconds:.3f}")
        out.print(table)
        out.print(f"{sum(r.status == 'proved' for r in results)} proved, {sum(r.status == 'refuted' for r in results)} refuted, "
                  f"{sum(r.status == 'unknown' for r in results)} unknown")
    if bad:
        raise CheckFailed(f"{len(bad)} proofs did not come out as expected: {', '.join(r.id for r in bad)}")


COMMANDS = (verify, claims, prove)
