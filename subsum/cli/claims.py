"""subsum verify | claims | prove: the claims and their checks (conformance/claims.py)."""

from __future__ import annotations

import json
import time

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common import err, format_option, json_option, out, write_json
from subsum.conformance.profiles import PROFILES
from subsum.core.errors import CheckFailed, SubsumError


@click.command()
@click.option("--profile", type=click.Choice(PROFILES), default="ci", show_default=True,
              help="Hypothesis profile: ci is derandomized and quick; thorough draws many more random examples.")
@json_option("Also write the results as JSON to FILE.")
@click.option("--claim", "claim_ids", multiple=True, metavar="ID", help="Run only this claim (repeatable).")
def verify(profile: str, json_path: str | None, claim_ids: tuple[str, ...]) -> None:
    """Run every registered claim's checks and print claim -> kind -> status -> time.

    Exits 1 if a check fails."""
    from subsum.conformance import profiles

    profiles.load(profile)
    from subsum.conformance.claims import CLAIMS, claim_by_id, run_check

    try:
        claims = [claim_by_id(c) for c in claim_ids] if claim_ids else list(CLAIMS)
    except KeyError as exc:
        raise SubsumError(f"unknown claim {exc.args[0]!r}; `subsum claims` lists them") from None
    total = sum(len(c.checks) for c in claims)
    results = []
    start = time.perf_counter()
    with err.status("") as status:
        for claim in claims:
            for check in claim.checks:
                status.update(f"[{len(results) + 1}/{total}] {claim.id}: {check.name}")
                results.append(run_check(claim, check))
    table = Table(title=f"subsum verify (profile {profile})")
    for column in ("claim", "kind", "check", "status", "time (s)"):
        table.add_column(column, justify="right" if column == "time (s)" else "left")
    for r in results:
        mark = "[green]pass[/]" if r.status == "pass" else "[bold red]FAIL[/]"
        check = r.check + (f" ({r.detail})" if r.status == "pass" and r.detail else "")
        table.add_row(escape(r.claim), r.kind, escape(check), mark, f"{r.seconds:.2f}")
    out.print(table)
    failed = [r for r in results if r.status != "pass"]
    for r in failed:
        err.print(f"[bold red]{escape(r.claim)} failed[/] ({escape(r.check)}):\n{escape(r.detail)}", highlight=False)
    elapsed = time.perf_counter() - start
    out.print(f"{len(results) - len(failed)} passed, {len(failed)} failed ({len(claims)} claims, {elapsed:.1f} s)")
    if json_path:
        write_json(json_path, {"profile": profile, "results": [r.to_json() for r in results]})
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(results)} checks failed: {', '.join(sorted({r.claim for r in failed}))}")


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
