"""subsum verify | claims | prove: the claims and their checks (conformance/claims.py)."""

from __future__ import annotations

import contextlib
import json
import math
import time
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common import distinct_files, err, format_option, json_option, out, writable_path, write_json
from subsum.conformance.profiles import PROFILES
from subsum.core.errors import CheckFailed, SubsumError
from subsum.core.jsonio import write_lines_atomically

#: How long a check may ignore its alarm (stuck in C code) before the watchdog ends the run.
WATCHDOG_GRACE = 30.0


def _budget_scale(_ctx, param, value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= 1000):
        raise click.BadParameter(f"expected a number > 0 and at most 1000, got {value}", param=param)
    return value


def write_text(path: str, text: str) -> None:
    """Write a report atomically; a lone surrogate in a counterexample is written escaped."""
    write_lines_atomically(path, [text.encode("utf-8", "backslashreplace").decode("utf-8").rstrip("\n")])


@click.command()
@click.option("--profile", type=click.Choice(list(PROFILES)), default="ci", show_default=True,
              help="ci: derandomized, the same examples every run, each check once within its budget. "
                   "thorough: fresh random examples, round after round until each check's budget is spent.")
@json_option("Also write the results as JSON to FILE.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Also write JUnit XML to FILE: one test case per check, the counterexample as the failure text.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), callback=writable_path,
              help="Also write one self-contained HTML page to FILE: every check, its claim, statement, status and time, "
                   "the counterexamples, and each claim's spec section.")
@click.option("--budget-scale", type=float, default=1.0, show_default=True, callback=_budget_scale,
              help="Multiply every check's time budget (conformance/claims.py) by F. A check past its budget is cut as `timeout`.")
@click.option("--claim", "claim_ids", multiple=True, metavar="ID", help="Run only this claim (repeatable).")
@click.option("--engine", metavar="ENGINE",
              help="Check this matching engine alone, a built-in one or a plug-in (an installed subsum.engines entry point, "
                   "or module:attribute): the claims CLM-DATA-2 and CLM-ENG-1 … 5 against the model (spec/11-plugins.md).")
@click.option("--cache", metavar="POLICY",
              help="Check this cache alone, a built-in policy or a plug-in (a subsum.caches entry point, or "
                   "module:attribute): CLM-CACHE-1's state machine against the reference of the policy it names.")
def verify(profile: str, json_path: str | None, junit_path: str | None, html_path: str | None, budget_scale: float,
           claim_ids: tuple[str, ...], engine: str | None, cache: str | None) -> None:
    """Run every registered claim's checks and print claim -> kind -> status -> time.

    Each check runs within its time budget; one that runs past it is cut and
    reported as `timeout` with the last failing example seen. Exits 1 if a
    check fails or times out. With --engine or --cache, only the claims that
    hold of that one component run, against it alone."""
    from subsum.conformance import profiles

    distinct_files({}, {"json": json_path, "junit": junit_path, "html": html_path})
    if engine and cache:
        raise SubsumError("--engine and --cache: check one component at a time")
    subject, name = ("engine", engine) if engine else ("cache", cache) if cache else (None, None)
    profiles.load(profile)
    from subsum.conformance import reports, under_test
    from subsum.conformance.budget import Watchdog
    from subsum.conformance.claims import CLAIMS, PLUGIN_CLAIMS, CheckResult, claim_by_id, plugin_claims, run_check

    if subject is None:
        try:
            claims = [claim_by_id(c) for c in claim_ids] if claim_ids else list(CLAIMS)
        except KeyError as exc:
            raise SubsumError(f"unknown claim {exc.args[0]!r}; `subsum claims` lists them") from None
        selection = contextlib.nullcontext()
    else:
        assert name is not None
        if subject == "engine":
            from subsum.impl.matching import engine_class as load
        else:
            from subsum.impl.caching import cache_class as load
        load(name)  # a plug-in that cannot be loaded is bad input, before any check runs
        claims = plugin_claims(subject)
        unknown = sorted(set(claim_ids) - set(PLUGIN_CLAIMS[subject]))
        if unknown:
            raise SubsumError(f"--{subject} runs the claims {', '.join(PLUGIN_CLAIMS[subject])}; not {', '.join(unknown)}")
        claims = [c for c in claims if not claim_ids or c.id in claim_ids]
        selection = under_test.only(subject, name)
    total = sum(len(c.checks) for c in claims)
    results: list[CheckResult] = []
    start = time.perf_counter()

    def write_reports() -> None:
        elapsed = time.perf_counter() - start
        if json_path:
            write_json(json_path, {"profile": profile, "results": [r.to_json() for r in results]})
        if junit_path:
            write_text(junit_path, reports.junit_xml(results, profile, elapsed))
        if html_path:
            write_text(html_path, reports.html_page(results, claims, profile, elapsed, Path(html_path).parent))

    limit = profiles.active().limit
    with selection, err.status("") as status:
        for claim in claims:
            for check in claim.checks:
                status.update(f"[{len(results) + 1}/{total}] {claim.id}: {check.name}")
                hard = check.budget * budget_scale * limit

                def stuck(claim=claim, check=check, hard=hard) -> None:
                    # The check ignored its alarm for WATCHDOG_GRACE s (stuck in C code): report it and end the process.
                    results.append(CheckResult(claim.id, check.kind, check.name, "timeout", round(time.perf_counter() - check_start, 3),
                                               f"did not stop {WATCHDOG_GRACE:g} s after its budget of {hard:g} s; the run was ended"))
                    write_reports()
                    err.print(f"error: {claim.id} ({check.name}) did not stop after its budget of {hard:g} s; ended the run", highlight=False)

                check_start = time.perf_counter()
                with Watchdog(hard, WATCHDOG_GRACE, stuck):
                    results.append(run_check(claim, check, budget_scale))
    table = Table(title=f"subsum verify{f' --{subject} {name}' if subject else ''} (profile {profile})")
    for column in ("claim", "kind", "check", "status", "time (s)"):
        table.add_column(column, justify="right" if column == "time (s)" else "left")
    marks = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "timeout": "[bold red]TIMEOUT[/]"}
    for r in results:
        check = r.check + (f" ({r.detail})" if r.status == "pass" and r.detail else "")
        table.add_row(escape(r.claim), r.kind, escape(check), marks[r.status], f"{r.seconds:.2f}")
    out.print(table)
    failed = [r for r in results if r.status != "pass"]
    for r in failed:
        violated = f", violated {r.violated}" if r.violated and r.violated != r.claim else ""
        err.print(f"[bold red]{escape(r.claim)} {r.status}[/] ({escape(r.check)}{escape(violated)}):\n{escape(r.detail)}", highlight=False)
    elapsed = time.perf_counter() - start
    timeouts = sum(r.status == "timeout" for r in failed)
    out.print(f"{len(results) - len(failed)} passed, {len(failed) - timeouts} failed"
              + (f", {timeouts} timed out" if timeouts else "") + f" ({len(claims)} claims, {elapsed:.1f} s)")
    write_reports()
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(results)} checks did not pass: {', '.join(sorted({r.claim for r in failed}))}")


@click.command()
@format_option
def claims(fmt: str) -> None:
    """Print the traceability matrix: claim -> spec section -> model -> impl -> checks."""
    from subsum.conformance.claims import CLAIMS

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
    from subsum.conformance.proofs import WRONG_RULES, prove_rule
    from subsum.model.rules import RULES

    rules = list(RULES) + (list(WRONG_RULES) if negative else [])
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
